import type { Hearth } from "../context";
import { badRequest } from "../errors";
import { getMutedUsers, isMuted } from "../store/personal";
import { getUser, type UserRecord } from "../store/users";
import { doMarkSenderAsRead } from "./messages";

function notifyMutedUsers(h: Hearth, user: UserRecord): void {
  h.events.publish({ type: "muted_users", muted_users: getMutedUsers(h.store, user.id) }, [user.id]);
}

export async function doMuteUser(h: Hearth, user: UserRecord, mutedUserId: number): Promise<void> {
  if (mutedUserId === user.id) throw badRequest("Cannot mute self");
  await h.store.commit(() => {
    const target = getUser(h.store, mutedUserId);
    if (!target || target.is_system_bot) throw badRequest("No such user");
    if (isMuted(h.store, user.id, mutedUserId)) throw badRequest("User already muted");
    h.store.dbs.mutedUsers.put([user.id, mutedUserId], Math.floor(Date.now() / 1000));
  });
  notifyMutedUsers(h, user);
  // As Zulip's do_mute_user: the muted user's messages count as read for the muter.
  await doMarkSenderAsRead(h, user, mutedUserId);
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
