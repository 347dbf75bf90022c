/** The events a change to an account sends: realm_user to everyone, realm_bot to those who manage bots. */
import type { Hearth } from "../context";
import type { Transaction } from "../events/commit";
import { canSeeRealEmail } from "../access/users";
import { activeUserIds, allUsers, isAdmin, type UserRecord } from "../store/users";
import { botView } from "../views/bots";
import { formatUser } from "../views/users";

/** Active human administrators: they see every bot in realm_bots. */
export function adminIds(h: Hearth): number[] {
  const ids: number[] = [];
  for (const u of allUsers(h.store)) if (u.is_active && !u.is_bot && isAdmin(u)) ids.push(u.id);
  return ids;
}

/**
 * Sends a realm_user event: an update (the changed fields) to every active user; an
 * add, whose `person` depends on the recipient's right to see the real email, as one
 * event per distinct view, each to exactly its viewers.
 */
export function notifyRealmUser(tx: Transaction, h: Hearth, op: "add" | "update", target: UserRecord, fields?: Record<string, unknown>): void {
  if (op === "update") {
    // The common case (a name, a role): one event for all, no user record decoded.
    tx.notify({ type: "realm_user", op, person: { user_id: target.id, ...fields } }, activeUserIds(h));
    return;
  }
  const viewers: UserRecord[] = [];
  for (const u of allUsers(h.store)) if (u.is_active && !u.is_system_bot) viewers.push(u);
  const withEmail: UserRecord[] = [];
  const withoutEmail: UserRecord[] = [];
  for (const viewer of viewers) (canSeeRealEmail(viewer, target) ? withEmail : withoutEmail).push(viewer);
  for (const group of [withEmail, withoutEmail]) {
    if (group.length === 0) continue;
    const person = formatUser(h, group[0], target, { clientGravatar: false, includeCustomProfileFields: !target.is_bot });
    tx.notify({ type: "realm_user", op, person }, group.map((v) => v.id));
  }
}

export function notifyRealmBot(tx: Transaction, h: Hearth, op: "add" | "update" | "delete", bot: UserRecord, fields?: Record<string, unknown>): void {
  const recipients = new Set(adminIds(h));
  if (bot.bot_owner_id !== null) recipients.add(bot.bot_owner_id);
  if (op === "add") tx.notify({ type: "realm_bot", op, bot: botView(h, bot) }, recipients);
  else tx.notify({ type: "realm_bot", op, bot: { user_id: bot.id, ...fields } }, recipients);
}

/** A new name reaches realm_users (since FL 474 bot objects carry no name). */
export function notifyFullNameChanged(tx: Transaction, h: Hearth, user: UserRecord): void {
  notifyRealmUser(tx, h, "update", user, { full_name: user.full_name });
}
