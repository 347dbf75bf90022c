/**
 * Email invitations (Zulip's PreregistrationUser): POST /invites, DELETE
 * /invites/{id}, POST /invites/{id}/resend, and what happens when one is accepted.
 * Each invitation is one InviteRecord with `email` set; its email goes through the
 * outbox in the invitation's own transaction. With no SMTP server the invitation is
 * still made, and its link printed in the log and shown to administrators instead.
 */
import type { Hearth } from "../context";
import { commit, type Transaction } from "../events/commit";
import { randomToken } from "../lib/credentials";
import { escapeHtml } from "../lib/text";
import { accessChannel, canAddSubscribers } from "../access/channels";
import { checkInviteRole } from "../access/invites";
import { accessUserGroupForUpdate, inRealmGroup } from "../access/groups";
import { ApiError, badRequest, insufficientPermission } from "../errors";
import { allInvites, getInvite, putInvite, type InviteRecord } from "../store/invites";
import { getUser, getUserByEmail, isAdmin, Role, type UserRecord } from "../store/users";
import { isDefaultChannel } from "../store/default_channels";
import { getRealm } from "../store/realm";
import { getSystemBot } from "../store/system_bots";
import { emailRefusalForRealm } from "../views/realm_domains";
import { acceptLinkUrl } from "../views/invites";
import { notifyInvitesChanged } from "./invite_events";
import { isValidEmailAddress, queueEmail } from "./email";
import { sendSystemBotDm } from "./message_send";

/** Zulip's INVITATION_LINK_VALIDITY_MINUTES default: 10 days. */
export const DEFAULT_INVITE_EXPIRY_MINUTES = 14400;
/** Zulip's cap is Python's datetime (year 9999); this one keeps the expiry date an exact integer with room to spare. */
export const MAX_INVITE_EXPIRY_MINUTES = 100 * 365 * 24 * 60;
/** Zulip's confirmation keys: 24 characters of lower-case letters and digits. */
export const KEY_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
export const KEY_LENGTH = 24;
const MAX_WELCOME_MESSAGE_CODE_POINTS = 8000;

export interface EmailInviteInput {
  invitee_emails: string;
  invite_expires_in_minutes: number | null | undefined;
  invite_as: number;
  stream_ids: readonly number[];
  group_ids: readonly number[];
  include_realm_default_subscriptions: boolean;
  notify_referrer_on_join: boolean;
  welcome_message_custom_text: string | null | undefined;
}

/** Zulip's InvitationError: some addresses refused, the others perhaps invited. */
function invitationFailed(msg: string, errors: [string, string, boolean][], sentInvitations: boolean, dailyLimitReached = false): ApiError {
  return new ApiError(msg, "INVITATION_FAILED", 400, { errors, sent_invitations: sentInvitations, license_limit_reached: false, daily_limit_reached: dailyLimitReached });
}

/** Zulip's get_invitee_emails_set: split on commas and newlines; `Name <address>` keeps the address. */
export function parseInviteeEmails(raw: string): string[] {
  const emails = new Set<string>();
  for (const part of raw.split(/[,\n]/)) {
    const named = /<(.*)>/.exec(part);
    const email = (named ? named[1] : part).trim();
    if (email !== "") emails.add(email);
  }
  return [...emails];
}

/** Every check on the inviter and the invitation's contents (not the addresses); run again inside the commit. */
function checkInviter(h: Hearth, actor: UserRecord, input: Omit<EmailInviteInput, "invitee_emails">): void {
  if (!actor.is_active || actor.is_bot || !inRealmGroup(h, actor, "can_invite_users_group")) throw insufficientPermission();
  checkInviteRole(actor, input.invite_as);
  for (const id of input.stream_ids) {
    let channel;
    try {
      channel = accessChannel(h, actor, id, { requireContentAccess: true });
    } catch {
      throw badRequest(`Invalid channel ID ${id}. No invites were sent.`);
    }
    // The spec: a default channel, or one the caller may add subscribers to.
    if (!isDefaultChannel(h.store, channel.id) && !canAddSubscribers(h, actor, channel)) {
      throw badRequest("You do not have permission to subscribe other users to channels.");
    }
  }
  for (const id of input.group_ids) {
    const group = accessUserGroupForUpdate(h, actor, id, "can_add_members_group");
    if (group.deactivated) throw badRequest("You can't add users to a deactivated user group.");
  }
}

/** `invite_expires_in_minutes` checked: absent is the default, null never expires. */
export function checkExpiryMinutes(requested: number | null | undefined): number | null {
  const minutes = requested === undefined ? DEFAULT_INVITE_EXPIRY_MINUTES : requested;
  if (minutes !== null && (!Number.isSafeInteger(minutes) || minutes < 1 || minutes > MAX_INVITE_EXPIRY_MINUTES)) {
    throw badRequest("Invalid invite_expires_in_minutes");
  }
  return minutes;
}

/** What an invitation gives whoever joins by it, as both kinds take it from their request. */
interface InviteGrant {
  invite_as: number;
  stream_ids: readonly number[];
  group_ids: readonly number[];
  include_realm_default_subscriptions: boolean;
}

/** A new invitation (a link, or with `email` an email invitation): its key, times and grant. */
export function newInviteRecord(
  h: Hearth,
  inviterId: number,
  grant: InviteGrant,
  minutes: number | null,
  welcomeText: string | null,
  now: number,
  email?: Pick<InviteRecord, "email" | "notify_referrer_on_join" | "email_id">,
): InviteRecord {
  return {
    id: h.store.nextId("invite"),
    key: randomToken(KEY_LENGTH, KEY_ALPHABET),
    invited_by_user_id: inviterId,
    invited: now,
    expiry_date: minutes === null ? null : now + minutes * 60,
    invited_as: grant.invite_as,
    stream_ids: [...new Set(grant.stream_ids)],
    group_ids: [...new Set(grant.group_ids)],
    include_realm_default_subscriptions: grant.include_realm_default_subscriptions,
    revoked: false,
    welcome_message_custom_text: welcomeText,
    ...email,
  };
}

/** Zulip's words for an address it will not invite; null when it may be invited. */
function addressRefusal(h: Hearth, email: string): [string, boolean] | null {
  if (!isValidEmailAddress(email)) return ["Invalid address.", false];
  const refusal = emailRefusalForRealm(h, email);
  if (refusal === "plus") return ["Email addresses containing + are not allowed.", false];
  if (refusal === "domain") return ["Outside your domain.", false];
  return null;
}

/** Accounts already there: Zulip's get_existing_user_errors (the flag says the account is deactivated). */
function existingAccount(h: Hearth, email: string): [string, boolean] | null {
  const user = getUserByEmail(h.store, email);
  if (!user) return null;
  return user.is_active ? ["Already has an account.", false] : ["Account has been deactivated.", true];
}

/** Email invitations sent (or re-sent) in the organization in the last 24 hours. */
function invitationsToday(h: Hearth, now: number): number {
  return allInvites(h.store).filter((invite) => invite.email !== undefined && invite.invited > now - 86400).length;
}

function checkDailyLimit(h: Hearth, count: number, now: number): void {
  if (invitationsToday(h, now) + count > (h.config.invitesPerDay ?? 3000)) {
    throw invitationFailed(
      "To protect users, Hearth limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.",
      [],
      false,
      true,
    );
  }
}

/** The invitation email, text and HTML; queued in `tx` (false: no SMTP server, nothing sent). */
function queueInvitationEmail(h: Hearth, tx: Transaction, invite: InviteRecord, inviter: UserRecord): boolean {
  const realm = getRealm(h.store)?.name ?? "Hearth";
  const url = acceptLinkUrl(h, invite);
  const expires = invite.expiry_date === null ? "It does not expire." : `It expires on ${new Date(invite.expiry_date * 1000).toUTCString()}.`;
  const text = `${inviter.full_name} (${inviter.email}) invited you to join ${realm}, a team chat at ${h.realmUrl()}.\n\nTo accept, open this link, then pick your name and a password:\n${url}\n\n${expires}\n\nIf you were not expecting this invitation, you can ignore this email.\n`;
  const html = `<p>${escapeHtml(inviter.full_name)} (${escapeHtml(inviter.email)}) invited you to join <b>${escapeHtml(realm)}</b>, a team chat at ${escapeHtml(h.realmUrl())}.</p>
<p><a href="${escapeHtml(url)}">Accept the invitation</a> and pick your name and a password.</p>
<p>${escapeHtml(expires)}</p><p>If you were not expecting this invitation, you can ignore this email.</p>`;
  const queued = queueEmail(h, tx, { to: invite.email!, subject: `${inviter.full_name} invited you to join ${realm}`, text, html, kind: "invitation" });
  if (!queued) {
    tx.afterCommit(() => console.log(`Invitation ${invite.id} for ${invite.email} (not emailed: no SMTP server configured): ${url}`));
  }
  return queued;
}

/**
 * An invitation's Welcome Bot text (FL 416), for email invitations and links alike:
 * administrators only, anyone else's text ignored (the spec: "others always get null").
 */
export function checkWelcomeText(actor: UserRecord, text: string | null | undefined): string | null {
  const welcomeText = isAdmin(actor) ? (text ?? null) : null;
  if (welcomeText !== null && [...welcomeText].length > MAX_WELCOME_MESSAGE_CODE_POINTS) {
    throw badRequest(`welcome_message_custom_text is too long (limit: ${MAX_WELCOME_MESSAGE_CODE_POINTS} characters)`);
  }
  return welcomeText;
}

/**
 * `POST /invites`: one invitation per address, in Zulip's order of refusals: the
 * inviter, the role, no address, the channels and groups, the daily limit, invalid
 * addresses (nothing sent), addresses that have accounts (the others are invited,
 * then INVITATION_FAILED says which were skipped).
 */
export async function checkInviteByEmail(h: Hearth, actor: UserRecord, input: EmailInviteInput): Promise<void> {
  if (!actor.is_active || actor.is_bot || !inRealmGroup(h, actor, "can_invite_users_group")) throw insufficientPermission();
  if (input.invitee_emails.trim() === "") throw badRequest("You must specify at least one email address.");
  checkInviter(h, actor, input);
  const minutes = checkExpiryMinutes(input.invite_expires_in_minutes);
  const welcomeText = checkWelcomeText(actor, input.welcome_message_custom_text);
  const emails = parseInviteeEmails(input.invitee_emails);
  if (emails.length === 0) throw badRequest("You must specify at least one email address.");
  const skipped = await commit(h, (tx) => {
    const now = Math.floor(Date.now() / 1000);
    // A deactivation, demotion or permission change committed since the checks wins.
    const inviter = getUser(h.store, actor.id) ?? { ...actor, is_active: false };
    checkInviter(h, inviter, input);
    checkDailyLimit(h, emails.length, now);
    const invalid: [string, string, boolean][] = [];
    const skipped: [string, string, boolean][] = [];
    const good: string[] = [];
    for (const email of emails) {
      const refusal = addressRefusal(h, email);
      if (refusal) {
        invalid.push([email, ...refusal]);
        continue;
      }
      const existing = existingAccount(h, email);
      if (existing) skipped.push([email, ...existing]);
      else good.push(email);
    }
    if (invalid.length > 0) throw invitationFailed("Some emails did not validate, so we didn't send any invitations.", [...invalid, ...skipped], false);
    if (good.length === 0) throw invitationFailed("We weren't able to invite anyone.", skipped, false);
    for (const email of good) {
      const invite = newInviteRecord(h, inviter.id, input, minutes, welcomeText, now, { email, notify_referrer_on_join: input.notify_referrer_on_join, email_id: null });
      const queued = queueInvitationEmail(h, tx, invite, inviter);
      putInvite(h.store, { ...invite, email_id: queued ? h.store.lastId("email") : null });
    }
    notifyInvitesChanged(tx, h, inviter.id);
    return skipped;
  });
  if (skipped.length > 0) {
    throw invitationFailed("Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!", skipped, true);
  }
}

/** Zulip's access_invite_by_id: its inviter, or an administrator (an owner for owner invitations). */
function accessEmailInvite(h: Hearth, actor: UserRecord, inviteId: number): InviteRecord {
  const invite = getInvite(h.store, inviteId);
  if (!invite || invite.email === undefined) throw badRequest("No such invitation");
  if (invite.invited_by_user_id !== actor.id) {
    if (!isAdmin(actor)) throw badRequest("Must be an organization administrator");
    if (invite.invited_as === Role.OWNER && actor.role !== Role.OWNER) throw badRequest("Must be an organization owner");
  }
  return invite;
}

/** `DELETE /invites/{invite_id}`. */
export async function checkRevokeEmailInvite(h: Hearth, actor: UserRecord, inviteId: number): Promise<void> {
  accessEmailInvite(h, actor, inviteId);
  await commit(h, (tx) => {
    const invite = getInvite(h.store, inviteId)!;
    if (invite.revoked) throw badRequest("Invitation has already been revoked");
    if (invite.accepted_user_id !== undefined) throw badRequest("No such invitation");
    putInvite(h.store, { ...invite, revoked: true });
    notifyInvitesChanged(tx, h, invite.invited_by_user_id);
  });
}

/** `POST /invites/{invite_id}/resend`: the same link emailed again (it counts against the daily limit, as in Zulip). */
export async function checkResendEmailInvite(h: Hearth, actor: UserRecord, inviteId: number): Promise<void> {
  accessEmailInvite(h, actor, inviteId);
  await commit(h, (tx) => {
    const now = Math.floor(Date.now() / 1000);
    const invite = getInvite(h.store, inviteId)!;
    if (invite.revoked || invite.accepted_user_id !== undefined || (invite.expiry_date !== null && invite.expiry_date <= now)) {
      throw badRequest("The confirmation link has expired or been deactivated.");
    }
    checkDailyLimit(h, 1, now);
    const inviter = getUser(h.store, invite.invited_by_user_id) ?? actor;
    const queued = queueInvitationEmail(h, tx, invite, inviter);
    putInvite(h.store, { ...invite, invited: now, email_id: queued ? h.store.lastId("email") : (invite.email_id ?? null) });
    notifyInvitesChanged(tx, h, invite.invited_by_user_id);
  });
}

/**
 * In the transaction that creates the account: the invitation is accepted, and every
 * other pending invitation to the same address is revoked (the address has its account).
 */
export function markEmailInviteAccepted(h: Hearth, tx: Transaction, invite: InviteRecord, user: UserRecord): void {
  const referrers = new Set([invite.invited_by_user_id]);
  putInvite(h.store, { ...getInvite(h.store, invite.id)!, accepted_user_id: user.id });
  for (const other of allInvites(h.store)) {
    if (other.id === invite.id || other.email?.toLowerCase() !== user.email.toLowerCase() || other.revoked || other.accepted_user_id !== undefined) continue;
    putInvite(h.store, { ...other, revoked: true });
    referrers.add(other.invited_by_user_id);
  }
  for (const referrer of referrers) notifyInvitesChanged(tx, h, referrer);
}

/** After the account is durable: Notification Bot tells the inviter, Welcome Bot sends the custom welcome text. */
export async function afterEmailInviteAccepted(h: Hearth, invite: InviteRecord, user: UserRecord): Promise<void> {
  const inviter = getUser(h.store, invite.invited_by_user_id);
  const notificationBot = getSystemBot(h.store, "notification");
  if (invite.notify_referrer_on_join && inviter?.is_active && notificationBot) {
    await sendSystemBotDm(h, notificationBot, inviter.id, `@_**${user.full_name}|${user.id}** accepted your invitation to join ${getRealm(h.store)?.name ?? "the organization"}!`, "the invitation's notice to its inviter");
  }
  await sendInviteWelcomeText(h, invite, user);
}

/** Welcome Bot's DM to someone who joined through an invitation: its text, else the realm's default. */
export async function sendInviteWelcomeText(h: Hearth, invite: InviteRecord, user: UserRecord): Promise<void> {
  const realmDefault = getRealm(h.store)?.settings?.welcome_message_custom_text;
  const text = invite.welcome_message_custom_text ?? (typeof realmDefault === "string" ? realmDefault : "");
  const welcomeBot = getSystemBot(h.store, "welcome");
  if (text.trim() !== "" && welcomeBot) await sendSystemBotDm(h, welcomeBot, user.id, text, "the invitation's welcome message");
}
