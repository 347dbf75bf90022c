import type { Store } from "./db";
import { topicKey } from "./messages";

/** Whether a channel has a topic of this name (any case): some message is stored under it. */
export function topicExists(store: Store, channelId: number, topic: string): boolean {
  return store.dbs.topics.get([channelId, topicKey(topic)]) !== undefined;
}
