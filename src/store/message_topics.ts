import type { Store } from "./db";
import { topicKey } from "./messages";
import { idsInRange } from "./message_indexes";

/** Whether a channel has a topic of this name (any case): some message is stored under it. */
export function topicExists(store: Store, channelId: number, topic: string): boolean {
  return store.dbs.topics.get([channelId, topicKey(topic)]) !== undefined;
}

/** A topic's message IDs, oldest first. */
export function topicMessageIds(store: Store, channelId: number, topic: string): number[] {
  return [...idsInRange(store, "topicMessages", [channelId, topicKey(topic)], 0, "newer")];
}
