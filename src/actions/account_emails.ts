import { createHash, randomBytes } from "node:crypto";
import { removeUserSessions } from "../store/sessions";
import type { Hearth } from "../context";
import { commit, type Transaction } from "../events/commit";
import { badRequest, botRequestRefused, rateLimited, realmDeactivated, userDeactivated } from "../errors";
import { hashPassword } from "../lib/credentials";
import { canSeeRealEmail } from "../access/users";
import { getEmailChange, putEmailChange } from "../store/account_emails";
import { getRealm } from "../store/realm";
import { passwordLengthAllowed, realmSetting, SERVER_LIMITS } from "../store/realm_settings";
import { activeUserIds, allUsers, getUser, getUserByEmail, isAdmin, putUser, type UserRecord } from "../store/users";
import { realmName } from "../views/realm";
import { emailRefusalForRealm } from "../views/realm_domains";
import { apiEmail } from "../views/users";
import { AccountLinkError, readAccountToken, signAccountToken, TokenPurpose } from "./account_tokens";
import { checkEmailAddress } from "./create_user";
import { queueEmail } from "./email";

/**
 * The account emails and what their links do: password reset, the confirmation of a
 * new address (and the notice to the old one),. The links carry tokens signed by the server
 * (src/actions/account_tokens.ts); what makes each single-use is said where it is made.
 */


const orgName = (h: Hearth) => realmName(h) ?? "Hearth";

/** Password reset links work this long (seconds). */
export const PASSWORD_RESET_SECONDS = 3600;
/** Address confirmation links work this long (Zulip's default confirmation validity, 1 day). */
const EMAIL_CHANGE_SECONDS = 24 * 3600;

/** Changes whenever the password does: a reset link dies once it (or anything else) set a new password. */
const passwordFingerprint = (user: UserRecord) => createHash("sha256").update(`${user.id}:${user.password_hash ?? ""}`).digest("base64url").slice(0, 16);

/** The account a reset request names, if one may reset its password here. */
function resettableAccount(h: Hearth, email: string): UserRecord | undefined {
  const user = getUserByEmail(h.store, email.trim());
  if (!user || !user.is_active || user.is_bot || getRealm(h.store)?.deactivated) return undefined;
  return user;
}

/**
 * `POST /accounts/password/reset/`: emails a reset link when the address belongs to an
 * active account, and otherwise does nothing; the caller answers the same either way
 * (no account enumeration). Answers whether an email was queued (for the log only).
 */
export async function doRequestPasswordReset(h: Hearth, email: string): Promise<boolean> {
  if (!resettableAccount(h, email)) return false;
  return commit(h, (tx) => {
    const user = resettableAccount(h, email);
    if (!user) return false;
    const token = signAccountToken(h, TokenPurpose.passwordReset, { u: user.id, f: passwordFingerprint(user), exp: Math.floor(Date.now() / 1000) + PASSWORD_RESET_SECONDS });
    const link = `${h.realmUrl()}/accounts/password/reset/${token}/`;
    const text = [
      `Somebody (probably you) asked to reset the password of your account ${user.email} on ${orgName(h)} (${h.realmUrl()}).`,
      "",
      `Set a new password here within the next hour: ${link}`,
      "",
      "If you did not ask for this, ignore this email: your password stays as it is.",
    ].join("\n");
    return queueEmail(h, tx, { to: user.email, subject: `Reset your password for ${orgName(h)}`, text: text + "\n", kind: "password_reset", autoSubmitted: true });
  });
}

/** The account a reset link is for, while the link is live (unexpired, password unchanged since). */
export function accessPasswordResetToken(h: Hearth, token: string): UserRecord {
  const fields = readAccountToken(h, TokenPurpose.passwordReset, token);
  const user = fields && typeof fields.u === "number" ? getUser(h.store, fields.u) : undefined;
  if (!fields || !user || !user.is_active || fields.f !== passwordFingerprint(user)) {
    throw new AccountLinkError("This password reset link has expired or was already used. You can ask for a new one.");
  }
  return user;
}

/** Sets the password a reset link asked for; the link stops working with it. */
export async function doResetPassword(h: Hearth, token: string, password: string): Promise<UserRecord> {
  accessPasswordResetToken(h, token);
  if (!passwordLengthAllowed(password)) {
    throw badRequest(`The password must be between ${SERVER_LIMITS.password_min_length} and ${SERVER_LIMITS.password_max_length} characters long.`);
  }
  const hash = await hashPassword(password);
  return commit(h, () => {
    // Again inside the transaction: two submissions of one link set one password.
    const current = accessPasswordResetToken(h, token);
    const next = { ...current, password_hash: hash };
    putUser(h.store, next);
    // A reset is what someone does when their account may be in other hands.
    removeUserSessions(h.store, next.id);
    return next;
  });
}

/** Zulip's email_change_by_user limit: 2 requests an hour per user. */
const emailChangeRequests = new WeakMap<Hearth, Map<number, number[]>>();
const EMAIL_CHANGES_PER_HOUR = 2;

function checkEmailChangeRate(h: Hearth, userId: number): void {
  let byUser = emailChangeRequests.get(h);
  if (!byUser) emailChangeRequests.set(h, (byUser = new Map()));
  const now = Date.now();
  const recent = (byUser.get(userId) ?? []).filter((t) => t > now - 3600_000);
  if (recent.length >= EMAIL_CHANGES_PER_HOUR) {
    throw rateLimited((recent[0] + 3600_000 - now) / 1000);
  }
  recent.push(now);
  byUser.set(userId, recent);
}

/** Zulip's validate_email_change_request: who may change an address, and to what. */
function checkNewEmail(h: Hearth, user: UserRecord, email: string): string {
  if (user.is_bot) throw botRequestRefused();
  if (!user.is_active) throw userDeactivated();
  const realm = getRealm(h.store);
  if (realm?.deactivated) throw realmDeactivated();
  if (realm && realmSetting(realm.settings, "email_changes_disabled") === true && !isAdmin(user)) {
    throw badRequest("Email address changes are disabled in this organization.");
  }
  const address = checkEmailAddress(email);
  const refusal = emailRefusalForRealm(h, address);
  if (refusal === "plus") throw badRequest("Email addresses containing + are not allowed.");
  if (refusal === "domain") throw badRequest(`Email '${address}' not allowed in this organization`);
  const holder = getUserByEmail(h.store, address);
  if (holder && holder.id !== user.id) throw badRequest(`Email '${address}' already in use`);
  return address;
}

/**
 * `PATCH /settings` with a new `email`: nothing changes yet; a confirmation link goes
 * to the new address (proving it is the user's), valid a day. A newer request
 * replaces the pending one, whose link then stops working.
 */
export async function checkStartEmailChange(h: Hearth, user: UserRecord, email: string): Promise<void> {
  const address = checkNewEmail(h, user, email);
  checkEmailChangeRate(h, user.id);
  await commit(h, (tx) => {
    const nonce = randomBytes(9).toString("base64url");
    const expires = Math.floor(Date.now() / 1000) + EMAIL_CHANGE_SECONDS;
    putEmailChange(h.store, user.id, { old_email: user.email, new_email: address, nonce, expires });
    const token = signAccountToken(h, TokenPurpose.emailChange, { u: user.id, n: nonce, exp: expires });
    const link = `${h.realmUrl()}/accounts/confirm_new_email/${token}/`;
    const text = [
      `${user.full_name} asked to change the email address of their account on ${orgName(h)} (${h.realmUrl()}) to this one, ${address}.`,
      "",
      `Confirm the change within a day: ${link}`,
      "",
      "If you did not ask for this, ignore this email: nothing changes.",
    ].join("\n");
    queueEmail(h, tx, { to: address, subject: `Confirm your new email address for ${orgName(h)}`, text: text + "\n", kind: "email_change", autoSubmitted: true });
  });
}

/** The pending change a confirmation link names, while it is live. */
export function accessEmailChangeToken(h: Hearth, token: string): { user: UserRecord; newEmail: string } {
  const fields = readAccountToken(h, TokenPurpose.emailChange, token);
  const user = fields && typeof fields.u === "number" ? getUser(h.store, fields.u) : undefined;
  const pending = user ? getEmailChange(h.store, user.id) : undefined;
  if (!fields || !user || !pending || pending.nonce !== fields.n || pending.expires < Date.now() / 1000 || pending.old_email !== user.email) {
    throw new AccountLinkError("This confirmation link has expired or was already used.");
  }
  return { user, newEmail: pending.new_email };
}

/**
 * Following the confirmation link: the address changes, the viewers who see real
 * addresses hear of it (Zulip's do_change_user_delivery_email), and the old address
 * gets a notice.
 */
export async function doConfirmEmailChange(h: Hearth, token: string): Promise<{ oldEmail: string; newEmail: string }> {
  return commit(h, (tx) => {
    const { user, newEmail } = accessEmailChangeToken(h, token);
    checkNewEmail(h, user, newEmail);
    const next: UserRecord = { ...user, email: newEmail };
    putUser(h.store, next, user.email);
    putEmailChange(h.store, user.id, null);
    notifyDeliveryEmailChanged(tx, h, user, next);
    const text = [
      `The email address of your account on ${orgName(h)} (${h.realmUrl()}) was changed from ${user.email} to ${newEmail}.`,
      "",
      "If you did not make this change, contact an administrator of the organization at once.",
    ].join("\n");
    queueEmail(h, tx, { to: user.email, subject: `Your email address for ${orgName(h)} changed`, text: text + "\n", kind: "email_change_notice", autoSubmitted: true });
    return { oldEmail: user.email, newEmail };
  });
}

/**
 * Zulip's events for a new delivery address: `delivery_email` to everyone who may see
 * the real address (the user included), and `new_email` to everyone when the address
 * the API shows (the real one, for visibility "everyone") changes with it.
 */
export function notifyDeliveryEmailChanged(tx: Transaction, h: Hearth, before: UserRecord, after: UserRecord): void {
  const viewers: number[] = [];
  for (const viewer of allUsers(h.store)) {
    if (viewer.is_active && !viewer.is_system_bot && canSeeRealEmail(viewer, after)) viewers.push(viewer.id);
  }
  tx.notify({ type: "realm_user", op: "update", person: { user_id: after.id, delivery_email: after.email } }, viewers);
  const newEmail = apiEmail(h, after);
  if (newEmail !== apiEmail(h, before)) tx.notify({ type: "realm_user", op: "update", person: { user_id: after.id, new_email: newEmail } }, activeUserIds(h));
}
