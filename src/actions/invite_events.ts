import type { Hearth } from "../context";
import type { Transaction } from "../events/commit";
import { allUsers, getUser, isAdmin } from "../store/users";

/**
 * Zulip's notify_invites_changed: administrators (bots with the role included) and the
 * invitation's creator learn that the list changed, and fetch it again. Its own module:
 * user deactivation (users.ts) revokes invitations too, and invites.ts imports users.ts.
 */
export function notifyInvitesChanged(tx: Transaction, h: Hearth, referrerId: number): void {
  const recipients = new Set<number>();
  for (const u of allUsers(h.store)) if (u.is_active && !u.is_system_bot && isAdmin(u)) recipients.add(u.id);
  // A referrer whose deactivation revoked the links has no clients left to tell.
  if (getUser(h.store, referrerId)?.is_active) recipients.add(referrerId);
  tx.notify({ type: "invites_changed" }, [...recipients]);
}
