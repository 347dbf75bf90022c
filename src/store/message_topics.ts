import type { Store } from "./db";
import { topicKey } from "./messages";
import { existingTopics, idsInRange } from "./message_indexes";

/** Whether a channel has a topic of this name (any case): some message is stored under it. */
export function topicExists(store: Store, channelId: number, topic: string): boolean {
  const key = topicKey(topic);
  return existingTopics.get(store, `${channelId}\u0000${key}`, () => (store.dbs.topics.doesExist([channelId, key]) ? true : undefined)) === true;
}

/** A topic's message IDs, oldest first. */
export function topicMessageIds(store: Store, channelId: number, topic: string): number[] {
  return [...idsInRange(store, "topicMessages", [channelId, topicKey(topic)], 0, "newer")];
}
