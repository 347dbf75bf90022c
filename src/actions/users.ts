/** Changing accounts (Zulip's zerver/actions/users.py): name and role, deactivation and reactivation, API keys, first login. */
import type { Hearth } from "../context";
import { commit, type Transaction } from "../events/commit";
import { assertAdmin } from "../access/roles";
import { accessUser } from "../access/users";
import { checkProfileData, doSetProfileData, notifyProfileData, writeProfileData } from "./profile_fields";
import { clearPushRegistrations } from "./client_devices";
import { badRequest, insufficientPermission, mustBeAdmin, mustBeOwner } from "../errors";
import { generateApiKey } from "../lib/credentials";
import { revokeInvitesCreatedBy } from "../store/invites";
import { notifyInvitesChanged } from "./invite_events";
import { notifyFullNameChanged, notifyRealmUser } from "./user_events";
import { allUsers, getUser, isAdmin, isOwner, putUser, Role, ROLES, type UserRecord } from "../store/users";
import { botView } from "../views/bots";
import { notifySystemGroupMembership } from "./user_groups";
import { notifyUserChannelAccessChanged } from "./channels";
import { isoTimestamp } from "../views/users";
import { checkFullName } from "./create_user";
import { notifySubscriberActivityChanged } from "./subscriptions";
import { removeUserSessions } from "../store/sessions";

function countActiveOwners(h: Hearth): number {
  let n = 0;
  for (const u of allUsers(h.store)) if (u.is_active && !u.is_bot && isOwner(u)) n++;
  return n;
}

/** Who may change or deactivate `target`: administrators, and a bot's owner. */
export function assertCanManage(actor: UserRecord, target: UserRecord): void {
  if (isAdmin(actor) && !actor.is_bot) return;
  if (target.is_bot && target.bot_owner_id === actor.id) return;
  throw insufficientPermission();
}

/** Zulip's rules for changing `target`'s role (the only-owner rule is checked in the commit). */
export function checkRoleChange(actor: UserRecord, target: UserRecord, role: number): void {
  if (!ROLES.includes(role)) throw badRequest("Invalid role");
  if (!isAdmin(actor)) throw mustBeAdmin();
  if ((role === Role.OWNER || isOwner(target)) && !isOwner(actor)) throw mustBeOwner();
  if (target.is_bot && role === Role.OWNER) throw badRequest("Bots cannot be organization owners");
}

/** The events of a changed name or role (and, for a human, of gaining or losing the admin role). */
export function notifyAccountChanged(tx: Transaction, h: Hearth, before: UserRecord, after: UserRecord): void {
  if (after.full_name !== before.full_name) notifyFullNameChanged(tx, h, after);
  if (after.role !== before.role) {
    notifyRealmUser(tx, h, "update", after, { role: after.role });
    notifySystemGroupMembership(tx, h, before, after);
    tx.afterCommit(() => notifyUserChannelAccessChanged(tx, h, before, after));
  }
  if (!after.is_bot && isAdmin(after) !== isAdmin(before)) notifyBotListChanged(tx, h, after, isAdmin(after));
}

export async function checkUpdateUser(
  h: Hearth,
  actor: UserRecord,
  userId: number,
  changes: { full_name?: string; role?: number },
  alsoInCommit: (tx: Transaction) => void = () => {},
): Promise<void> {
  const target = accessUser(h, userId, { allowDeactivated: true });
  assertCanManage(actor, target);
  const full_name = changes.full_name === undefined ? undefined : checkFullName(changes.full_name);
  const role = changes.role;
  if (role !== undefined) checkRoleChange(actor, target, role);
  await commit(h, (tx) => {
    const current = getUser(h.store, userId)!;
    if (role !== undefined && isOwner(current) && role !== Role.OWNER && current.is_active && countActiveOwners(h) <= 1) {
      throw badRequest("The owner permission cannot be removed from the only organization owner.");
    }
    const next = { ...current, ...(full_name !== undefined ? { full_name } : {}), ...(role !== undefined ? { role } : {}) };
    putUser(h.store, next);
    notifyAccountChanged(tx, h, current, next);
    alsoInCommit(tx);
  });
}

/**
 * Administrators see every bot in realm_bots, others only their own: a user who
 * gains or loses the role gets the other owners' bots added or deleted.
 */
function notifyBotListChanged(tx: Transaction, h: Hearth, user: UserRecord, nowAdmin: boolean): void {
  for (const bot of allUsers(h.store)) {
    if (!bot.is_bot || bot.is_system_bot || bot.bot_owner_id === user.id) continue;
    if (nowAdmin) tx.notify({ type: "realm_bot", op: "add", bot: botView(h, bot) }, [user.id]);
    else tx.notify({ type: "realm_bot", op: "delete", bot: { user_id: bot.id } }, [user.id]);
  }
}

export async function doSetActive(h: Hearth, actor: UserRecord, userId: number, active: boolean): Promise<void> {
  const target = accessUser(h, userId, { allowDeactivated: true });
  // Anyone may deactivate their own account (DELETE /users/me).
  if (!(actor.id === target.id && !active)) assertCanManage(actor, target);
  const alreadyThere = () => badRequest(active ? "User is already active" : "User is already deactivated");
  if (target.is_active === active) throw alreadyThere();
  const changed = await commit(h, (tx) => {
    const current = getUser(h.store, userId)!;
    // Checked again here: a concurrent request may have made this change already.
    if (current.is_active === active) throw alreadyThere();
    if (!active && isOwner(current) && !current.is_bot && countActiveOwners(h) <= 1) {
      throw badRequest("Cannot deactivate the only organization owner");
    }
    const updates: UserRecord[] = [{ ...current, is_active: active }];
    if (!active && !current.is_bot) {
      // Zulip deactivates a user's bots with the user.
      for (const u of allUsers(h.store)) if (u.is_bot && u.is_active && u.bot_owner_id === current.id) updates.push({ ...u, is_active: false });
    }
    for (const u of updates) putUser(h.store, u);
    // A deactivated account is signed out of every browser (Zulip deletes its sessions too).
    if (!active) for (const u of updates) removeUserSessions(h.store, u.id);
    // Zulip revokes the invitations a deactivated user made; reactivation does not restore them.
    const revokedInvites = active ? 0 : revokeInvitesCreatedBy(h.store, current.id);
    if (revokedInvites > 0) notifyInvitesChanged(tx, h, userId);
    for (const u of updates) {
      notifyRealmUser(tx, h, "update", u, { is_active: active });
      // Deactivated bots stay in realm_bots, whose objects carry no is_active since FL 474: no realm_bot event.
      notifySystemGroupMembership(tx, h, { ...u, is_active: !active }, u);
      tx.afterCommit(() => notifySubscriberActivityChanged(tx, h, u, active));
    }
    return updates;
  });
  // A deactivated account can no longer poll: free its queues now rather than at idle expiry.
  if (!active) for (const u of changed) for (const queue of h.queues.queuesOf(u.id)) h.queues.remove(queue);
}

export async function doRegenerateApiKey(h: Hearth, user: UserRecord, targetId = user.id): Promise<string> {
  const key = generateApiKey();
  await commit(h, (tx) => {
    const current = getUser(h.store, targetId)!;
    const next = { ...current, api_key: key };
    putUser(h.store, next);
    // Since FL 474 the key is in no bot object (GET /bots/{bot_id}/api_key): no realm_bot event.
    clearPushRegistrations(h, tx, targetId);
  });
  return key;
}

/** FL 475: an API- or CLI-created user's date_joined becomes the first-login time. */
export async function doRecordFirstLogin(h: Hearth, user: UserRecord): Promise<void> {
  if (!user.joined_pending_first_login) return;
  await commit(h, (tx) => {
    const current = getUser(h.store, user.id)!;
    if (!current.joined_pending_first_login) return;
    const next = { ...current, joined_pending_first_login: false, date_joined: Date.now() / 1000 };
    putUser(h.store, next);
    notifyRealmUser(tx, h, "update", next, { date_joined: isoTimestamp(next.date_joined) });
  });
}

/** FL 459: what `DELETE /users/{id}` may also delete. */
export interface DeactivationActions {
  delete_profile?: boolean;
  delete_public_channel_messages?: boolean;
  delete_private_channel_messages?: boolean;
  delete_direct_messages?: boolean;
}

/**
 * Hearth deletes no profile or messages on deactivation: asking for any of it is refused
 * before anything changes, rather than ignored (an administrator who asked for the
 * messages to go would otherwise believe they had). All false is plain deactivation.
 */
function checkDeactivationActions(actions: DeactivationActions): void {
  const asked = Object.entries(actions).filter(([, wanted]) => wanted === true).map(([name]) => name);
  if (asked.length > 0) throw badRequest(`Deactivation actions are not supported: ${asked.join(", ")}`);
}

/** `DELETE /users/{id}` and `POST /users/{id}/reactivate`: administrators only (bots go through /bots). */
export async function checkSetUserActive(h: Hearth, actor: UserRecord, userId: number, active: boolean, actions: DeactivationActions = {}): Promise<void> {
  // As Zulip's deactivate_user_backend: bots are deactivated through /bots, and only an owner deactivates an owner.
  const target = accessUser(h, userId, { allowDeactivated: true, allowBots: active });
  assertAdmin(actor);
  if (!active && isOwner(target) && !isOwner(actor)) throw mustBeOwner();
  checkDeactivationActions(actions);
  await doSetActive(h, actor, userId, active);
}

/**
 * `PATCH /users/{id}` (administrators): name, role and profile values. Everything is
 * checked before anything is written, so a bad profile value leaves the name as it was.
 */
export async function checkAdminUpdateUser(
  h: Hearth,
  actor: UserRecord,
  userId: number,
  changes: { full_name?: string; role?: number; profile_data?: { id: number; value: unknown }[] },
): Promise<void> {
  const { profile_data, ...account } = changes;
  if (account.full_name === undefined && account.role === undefined && profile_data === undefined) throw badRequest("No changes were requested");
  const target = accessUser(h, userId, { allowDeactivated: true });
  if (profile_data !== undefined) assertAdmin(actor);
  const profileChanges = profile_data === undefined ? [] : checkProfileData(h, actor, target, profile_data);
  // One commit for all of it: a refused part leaves the account as it was.
  if (account.full_name !== undefined || account.role !== undefined) {
    await checkUpdateUser(h, actor, target.id, account, (tx) => {
      writeProfileData(h, target, profileChanges);
      notifyProfileData(tx, h, target, profileChanges);
    });
  } else if (profileChanges.length > 0) {
    await doSetProfileData(h, target, profileChanges);
  }
}
