import type { Hearth } from "../context";
import { badRequest, mustBeOwner } from "../errors";
import { EmailVisibility, getUser, getUserByEmail, isAdmin, isGuest, isModerator, isOwner, type UserRecord } from "../store/users";

/**
 * Finds an account by the email a client logs in with: the real address, or the
 * `user{id}@{realm_host}` placeholder that hidden-email users are shown as.
 */
export function findUserByLoginEmail(h: Hearth, email: string): UserRecord | undefined {
  const direct = getUserByEmail(h.store, email.trim());
  if (direct) return direct;
  const placeholder = /^user(\d+)@(.+)$/i.exec(email.trim());
  if (placeholder && placeholder[2].toLowerCase() === h.realmHost().toLowerCase()) {
    return getUser(h.store, Number(placeholder[1]));
  }
  return undefined;
}

/** Whether `viewer` may see `target`'s real address under the target's visibility setting. */
export function canSeeRealEmail(viewer: UserRecord | null, target: UserRecord): boolean {
  if (target.is_bot) return true;
  if (viewer && viewer.id === target.id) return true;
  switch (target.email_address_visibility) {
    case EmailVisibility.EVERYONE:
      return true;
    case EmailVisibility.MEMBERS:
      return viewer !== null && !isGuest(viewer);
    case EmailVisibility.MODERATORS:
      return viewer !== null && isModerator(viewer);
    case EmailVisibility.ADMINS:
      return viewer !== null && isAdmin(viewer);
    default:
      return false;
  }
}

/** The account an email names, for `viewer`: the placeholder always works, a real address only where they may see it. */
export function visibleUserByEmail(h: Hearth, viewer: UserRecord, email: string): UserRecord | undefined {
  const target = findUserByLoginEmail(h, email);
  if (!target) return undefined;
  const byPlaceholder = /^user\d+@/i.test(email.trim()) && target.email.toLowerCase() !== email.trim().toLowerCase();
  return byPlaceholder || canSeeRealEmail(viewer, target) ? target : undefined;
}

export function accessUser(h: Hearth, userId: number, options: { allowDeactivated?: boolean; allowBots?: boolean } = {}): UserRecord {
  const target = getUser(h.store, userId);
  if (!target || target.is_system_bot) throw badRequest("No such user");
  if (!target.is_active && !options.allowDeactivated) throw badRequest("User is deactivated");
  if (target.is_bot && options.allowBots === false) throw badRequest("No such user");
  return target;
}

/**
 * A `{user_id}` path segment that may also be an email (`GET /users/{email}`): the
 * placeholder address always works, a real address only for those who may see it,
 * so the lookup never reveals a hidden email.
 */
export function accessUserByIdOrEmail(h: Hearth, viewer: UserRecord, raw: string, options: { allowDeactivated?: boolean } = {}): UserRecord {
  if (/^\d+$/.test(raw)) {
    if (!Number.isSafeInteger(Number(raw))) throw badRequest("Invalid user ID");
    return accessUser(h, Number(raw), options);
  }
  const target = visibleUserByEmail(h, viewer, raw);
  if (!target || target.is_system_bot) throw badRequest("No such user");
  if (!target.is_active && !options.allowDeactivated) throw badRequest("User is deactivated");
  return target;
}

/** A bot by ID; any other account is "No such bot", as in Zulip. */
export function accessBot(h: Hearth, botId: number, options: { allowDeactivated?: boolean } = {}): UserRecord {
  const bot = accessUser(h, botId, options);
  if (!bot.is_bot) throw badRequest("No such bot");
  return bot;
}

/** A bot its owner or an administrator may manage (Zulip's can_admin_user); others are told there is no such bot. */
export function accessManagedBot(h: Hearth, actor: UserRecord, botId: number): UserRecord {
  const bot = accessBot(h, botId);
  if (bot.bot_owner_id !== actor.id && !isAdmin(actor)) throw badRequest("No such bot");
  return bot;
}

/** Owners only (Zulip's `require_realm_owner`): organization exports and backups. */
export function checkOwner(user: UserRecord): void {
  if (!isOwner(user)) throw mustBeOwner();
}

/** Guests may not follow every public channel (`all_public_streams`), as in Zulip. */
export function checkMayFollowAllPublicChannels(user: UserRecord): void {
  if (isGuest(user)) throw badRequest("User not authorized for this query");
}
