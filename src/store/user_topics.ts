import { valuesOf, type Store } from "./db";
import { topicKey } from "./messages";
import { StoreCache } from "./cache";

export const VisibilityPolicy = { INHERIT: 0, MUTED: 1, UNMUTED: 2, FOLLOWED: 3 } as const;

export interface UserTopic {
  stream_id: number;
  /** The spelling the user last set it with. */
  topic_name: string;
  visibility_policy: number;
  last_updated: number;
}

export function getUserTopics(store: Store, userId: number): UserTopic[] {
  return valuesOf<UserTopic>(store.dbs.userTopics, userId);
}

export function getUserTopic(store: Store, userId: number, channelId: number, topic: string): UserTopic | undefined {
  // Inside a transaction (caches bypassed) one row is cheaper than the user's whole list.
  if (store.inTransaction) return storedUserTopic(store, userId, channelId, topic);
  const byTopic = userTopicsCache.get(store, userId, () => new Map(getUserTopics(store, userId).map((t) => [`${t.stream_id}\u0000${topicKey(t.topic_name)}`, t])));
  return byTopic.get(`${channelId}\u0000${topicKey(topic)}`);
}

function storedUserTopic(store: Store, userId: number, channelId: number, topic: string): UserTopic | undefined {
  return store.dbs.userTopics.get([userId, channelId, topicKey(topic)]) as UserTopic | undefined;
}

/**
 * Each user's policies by "channelId NUL topic key": every channel message looks up
 * its sender's policy on its topic (automatic follow and unmute), which is usually
 * none, a miss that a per-row cache could not keep. Dropped by putUserTopic, the one
 * writer.
 */
const userTopicsCache = new StoreCache<number, ReadonlyMap<string, UserTopic>>();

/** The policy for narrows (`is:muted`, `is:followed`); INHERIT when none is set. */
export function visibilityPolicyOf(store: Store, userId: number, channelId: number, topic: string): number {
  return getUserTopic(store, userId, channelId, topic)?.visibility_policy ?? VisibilityPolicy.INHERIT;
}

/** Writes a policy (removing the row for INHERIT); call only inside `commit`. */
export function putUserTopic(store: Store, userId: number, t: UserTopic): void {
  followersCache.invalidate(store);
  userTopicsCache.invalidate(store);
  const key = [userId, t.stream_id, topicKey(t.topic_name)];
  if (t.visibility_policy === VisibilityPolicy.INHERIT) store.dbs.userTopics.remove(key);
  else store.dbs.userTopics.put(key, t);
}

/**
 * Every account's policy on one topic, INHERIT left out. The key space is by user, so
 * each account is looked at: by its ID alone (the keys of `users`), since decoding
 * every account's record here cost a move or a topic deletion as much again.
 */
export function policiesOnTopic(store: Store, channelId: number, topic: string): Map<number, number> {
  const policies = new Map<number, number>();
  for (const userId of store.dbs.users.getKeys({}) as Iterable<number>) {
    // One row per account, not each account's whole list (userTopicsCache).
    const policy = storedUserTopic(store, userId, channelId, topic)?.visibility_policy;
    if (policy !== undefined && policy !== VisibilityPolicy.INHERIT) policies.set(userId, policy);
  }
  return policies;
}

/**
 * Who follows each topic, `channelId:topicKey` → user IDs: a send to a topic looks up
 * its followers (followed-topic email notifications) without reading each
 * recipient's row. Rebuilt from the key space after any policy changes (rare).
 */
const followersCache = new StoreCache<"all", ReadonlyMap<string, readonly number[]>>();

export function topicFollowers(store: Store, channelId: number, topic: string): readonly number[] {
  const all = followersCache.get(store, "all", () => {
    const out = new Map<string, number[]>();
    for (const { key, value } of store.dbs.userTopics.getRange({})) {
      if ((value as UserTopic).visibility_policy !== VisibilityPolicy.FOLLOWED) continue;
      const [userId, streamId, name] = key as [number, number, string];
      const slot = `${streamId}:${name}`;
      let list = out.get(slot);
      if (!list) out.set(slot, (list = []));
      list.push(userId);
    }
    return out;
  });
  return all.get(`${channelId}:${topicKey(topic)}`) ?? [];
}
