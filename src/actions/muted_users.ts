import type { Hearth } from "../context";
import { badRequest } from "../errors";
import { getMutedUsers, isMuted } from "../store/personal";
import { getUser, type UserRecord } from "../store/users";
import { applyFlagChange, publishFlagChangeAfterCommit as publishFlagChange, unreadFromSender } from "./message_flags";

function notifyMutedUsers(h: Hearth, user: UserRecord): void {
  h.events.publish({ type: "muted_users", muted_users: getMutedUsers(h.store, user.id) }, [user.id]);
}

export async function doMuteUser(h: Hearth, user: UserRecord, mutedUserId: number): Promise<void> {
  if (mutedUserId === user.id) throw badRequest("Cannot mute self");
  const markedRead = await h.store.commit(() => {
    const target = getUser(h.store, mutedUserId);
    if (!target || target.is_system_bot) throw badRequest("No such user");
    if (isMuted(h.store, user.id, mutedUserId)) throw badRequest("User already muted");
    h.store.dbs.mutedUsers.put([user.id, mutedUserId], Math.floor(Date.now() / 1000));
    // As Zulip's do_mute_user, in the same transaction: the muted user's messages count as read for the muter.
    return applyFlagChange(h, user, unreadFromSender(h, user, mutedUserId), "add", "read");
  });
  notifyMutedUsers(h, user);
  publishFlagChange(h, user, markedRead, "add", "read");
}

export async function doUnmuteUser(h: Hearth, user: UserRecord, mutedUserId: number): Promise<void> {
  await h.store.commit(() => {
    const target = getUser(h.store, mutedUserId);
    if (!target || target.is_system_bot) throw badRequest("No such user");
    if (!isMuted(h.store, user.id, mutedUserId)) throw badRequest("User is not muted");
    h.store.dbs.mutedUsers.remove([user.id, mutedUserId]);
  });
  notifyMutedUsers(h, user);
}
