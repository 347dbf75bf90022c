import type { Hearth } from "../context";
import { getPresence, putPresence, type PresenceRecord } from "../store/presence";
import { getUser, type UserRecord } from "../store/users";
import { apiEmail } from "../views/users";
import { legacyClientPresence, modernPresence, presenceStatus, presenceVisible } from "../views/presence";
import { commit, type Transaction } from "../events/commit";
import { activeUserIds } from "../store/users";

/**
 * `POST /users/me/presence`: records that a client of `user` is connected, and
 * active or idle. Clients ping every minute; an event goes out only when the user's
 * visible status changes (offline → online, idle ↔ active), as in Zulip, so pings
 * stay cheap for everyone else.
 */
export async function doUpdatePresence(h: Hearth, user: UserRecord, status: "active" | "idle"): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  await commit(h, (tx) => {
    const before = getPresence(h.store, user.id);
    const after: PresenceRecord = {
      last_connected_time: now,
      last_active_time: status === "active" ? now : (before?.last_active_time ?? now),
      last_update_id: h.store.nextId("presence_update"),
    };
    putPresence(h.store, user.id, after);
    // After the commit, where the user and the recipient list come from the caches
    // (a read inside the write transaction would bypass them).
    tx.afterCommit(() => {
      const current = getUser(h.store, user.id);
      if (!current || !presenceVisible(h, current)) return;
      if (before && presenceStatus(before, now) === presenceStatus(after, now)) return;
      notifyPresence(tx, h, current, after);
    });
  });
}

/** One event in both formats; the queue manager gives each client the one it asked for. */
function notifyPresence(tx: Transaction, h: Hearth, user: UserRecord, p: PresenceRecord): void {
  const serverTimestamp = Date.now() / 1000;
  tx.notify(
    {
      type: "presence",
      presences: { [String(user.id)]: modernPresence(p) },
      legacy: {
        user_id: user.id,
        email: apiEmail(h, user),
        server_timestamp: serverTimestamp,
        presence: { website: legacyClientPresence(p) },
      },
    },
    activeUserIds(h),
  );
}
