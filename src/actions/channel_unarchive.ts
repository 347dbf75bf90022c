import type { Hearth } from "../context";
import { badRequest } from "../errors";
import { commit } from "../events/commit";
import { getUser, type UserRecord } from "../store/users";
import { getChannel, getChannelByName, putChannel } from "../store/channels";
import { getSubscription } from "../store/subscriptions";
import { accessChannel, canAdministerChannel, channelViewerIds } from "../access/channels";
import { activeSubscriberIds, formatChannel, formatSubscription } from "../views/channels";

/**
 * `PATCH /streams/{stream_id}` with `is_archived=false` (FL 388): the archived channel
 * comes back with its history and subscribers. Clients with the `archived_channels`
 * capability kept it and get `stream` update `is_archived` false; the others forgot it
 * at archiving and get it anew, as a channel coming into sight: `stream` create (no
 * subscribers yet) to everyone who may see it, each subscriber a `subscription` add of
 * their own subscription, and the others the subscribers as `peer_add`.
 */
export async function checkUnarchiveChannel(h: Hearth, actor: UserRecord, channelId: number): Promise<void> {
  const channel = accessChannel(h, actor, channelId, { allowArchived: true });
  if (!canAdministerChannel(h, actor, channel)) throw badRequest("You do not have permission to administer this channel.");
  if (!channel.is_archived) throw badRequest("Channel is not archived");
  // Names stay unique among live and archived channels alike, so the old name is free.
  const holder = getChannelByName(h.store, channel.name);
  if (holder && holder.id !== channel.id) throw badRequest(`Channel name '${channel.name}' is already taken.`);
  await commit(h, (tx) => {
    const live = { ...getChannel(h.store, channel.id)!, is_archived: false };
    putChannel(h.store, live);
    const subscribers = activeSubscriberIds(h, live.id);
    const channelView = formatChannel(h, live, subscribers.length);
    const viewers = channelViewerIds(h, live);
    tx.notify(
      {
        type: "stream",
        op: "create",
        streams: [{ ...channelView, subscriber_count: 0 }],
        archived_update: { type: "stream", op: "update", stream_id: live.id, name: live.name, property: "is_archived", value: false },
      },
      viewers,
    );
    for (const id of subscribers) {
      const sub = getSubscription(h.store, live.id, id);
      if (!sub) continue;
      const raw = formatSubscription(h, live, sub, { subscribers, channelView });
      const resolved = formatSubscription(h, live, sub, { subscribers, channelView, resolveNullNotificationSettings: getUser(h.store, id) });
      tx.notify({ type: "subscription", op: "add", subscriptions: [raw], resolved_subscriptions: [resolved], only_without_archived_channels: true }, [id]);
    }
    const subscribed = new Set(subscribers);
    const others = viewers.filter((id) => !subscribed.has(id));
    if (subscribers.length > 0 && others.length > 0) {
      tx.notify({ type: "subscription", op: "peer_add", stream_ids: [live.id], user_ids: subscribers, only_without_archived_channels: true }, others);
    }
  });
}
