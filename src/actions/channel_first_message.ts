import type { Hearth } from "../context";
import type { Transaction } from "../events/commit";
import { channelViewerIds } from "../access/channels";
import { getChannel, putChannel } from "../store/channels";
import { idsInRange } from "../store/message_indexes";
import type { MessageChannel } from "../views/message_channels";

export type FirstIdChange = { channel: MessageChannel; first: number | null };

/**
 * Recomputes `first_message_id` of channels whose messages left or arrived (deletion,
 * moves); call inside `commit`. Returns the channels that changed.
 */
export function refreshFirstMessageIds(h: Hearth, channelIds: Iterable<number>): FirstIdChange[] {
  const changes: FirstIdChange[] = [];
  for (const channelId of new Set(channelIds)) {
    const channel = getChannel(h.store, channelId);
    if (!channel) continue;
    let first: number | null = null;
    for (const id of idsInRange(h.store, "channelMessages", [channelId], 0, "newer")) {
      first = id;
      break;
    }
    if (first === channel.first_message_id) continue;
    putChannel(h.store, { ...channel, first_message_id: first });
    changes.push({ channel, first });
  }
  return changes;
}

/** Zulip announces a channel's new first message ID to everyone who can see the channel. */
export function notifyFirstMessageIds(tx: Transaction, h: Hearth, changes: FirstIdChange[]): void {
  for (const { channel, first } of changes) {
    tx.notify(
      { type: "stream", op: "update", property: "first_message_id", value: first, stream_id: channel.id, name: channel.name },
      channelViewerIds(h, channel),
    );
  }
}
