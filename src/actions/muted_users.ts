import type { Hearth } from "../context";
import { badRequest } from "../errors";
import { getMutedUsers, isMuted, putMutedUser, removeMutedUser } from "../store/personal";
import { getUser, type UserRecord } from "../store/users";
import { commit, type Transaction } from "../events/commit";
import { applyFlagChange, publishFlagChange, unreadFromSender } from "./message_flags";

function notifyMutedUsers(tx: Transaction, h: Hearth, user: UserRecord): void {
  tx.notify({ type: "muted_users", muted_users: getMutedUsers(h.store, user.id) }, [user.id]);
}

export async function doMuteUser(h: Hearth, user: UserRecord, mutedUserId: number): Promise<void> {
  if (mutedUserId === user.id) throw badRequest("Cannot mute self");
  await commit(h, (tx) => {
    const target = getUser(h.store, mutedUserId);
    if (!target || target.is_system_bot) throw badRequest("No such user");
    if (isMuted(h.store, user.id, mutedUserId)) throw badRequest("User already muted");
    putMutedUser(h.store, user.id, mutedUserId, Math.floor(Date.now() / 1000));
    notifyMutedUsers(tx, h, user);
    // As Zulip's do_mute_user, in the same transaction: the muted user's messages count as read for the muter.
    publishFlagChange(tx, h, user, applyFlagChange(h, user, unreadFromSender(h, user, mutedUserId), "add", "read"), "add", "read");
  });
}

export async function doUnmuteUser(h: Hearth, user: UserRecord, mutedUserId: number): Promise<void> {
  await commit(h, (tx) => {
    const target = getUser(h.store, mutedUserId);
    if (!target || target.is_system_bot) throw badRequest("No such user");
    if (!isMuted(h.store, user.id, mutedUserId)) throw badRequest("User is not muted");
    removeMutedUser(h.store, user.id, mutedUserId);
    notifyMutedUsers(tx, h, user);
  });
}
