import type { Store } from "./db";
import { StoreCache } from "./cache";
import { conversationKey, getMessage, topicKey, type MessageRecord } from "./messages";
import { indexTermsOfLoadedMessage, reindexTerms, unindexTerms, unindexedMessageIds, unindexedMessagesOf } from "./search_terms";
import { topicIdsChanged } from "./topic_ids";

/**
 * The rows narrows scan, each key ending in the message ID so that a narrow is a
 * range scan from its anchor: `channelMessages`, `topicMessages` (with the topic list
 * `topics`), `dmMessages`, `senderMessages` and `searchTerms`. They are written with
 * the message (src/store/user_messages.ts), but for a sent message's search and sender
 * rows, which the background job writes (search_terms.ts). The ID-stream helpers here serve
 * every scan of message IDs, the per-user indexes' too.
 *
 * A scan that its caller stops early must end its lmdb-js iterator: one left open
 * keeps its read transaction, and with it a slot of LMDB's reader table and the
 * snapshot that stops LMDB from reusing the pages freed since (the data file grows;
 * test/store/read_snapshots.test.ts). `for…of` ends it on `break` or `return`, and a
 * generator ended early ends the scan it is suspended in; `mergeBy` ends the
 * streams it pulls by hand.
 */

/**
 * Writes a new message's channel, topic and conversation rows; its search and sender
 * rows are the background job's (search_terms.ts), but for a bulk load's (`loaded`).
 * Call inside `store.commit`.
 */
export function indexMessage(store: Store, m: MessageRecord, loaded = false): void {
  putLocation(store, m, true);
  if (loaded) indexTermsOfLoadedMessage(store, m);
}

/** Moves a rewritten message's rows: its place when its channel or topic changed, its words when its text did. */
export function reindexMessage(store: Store, before: MessageRecord, after: MessageRecord): void {
  const moved = before.channel_id !== after.channel_id || before.topic !== after.topic;
  if (moved) removeLocation(store, before);
  reindexTerms(store, before, after);
  if (moved) putLocation(store, after, false);
}

/** Removes a deleted message's rows; its topic's newest message is looked up again. */
export function unindexMessage(store: Store, m: MessageRecord): void {
  unindexTerms(store, m);
  store.dbs.senderMessages.remove([m.sender_id, m.id]);
  removeLocation(store, m);
}

/**
 * `isNew`: the message was just sent, so its ID is the newest of its topic and the
 * topic's row is written without reading it first (one read fewer per send); a moved
 * message may be older than the topic's newest.
 */
function putLocation(store: Store, m: MessageRecord, isNew: boolean): void {
  if (m.type === "stream") {
    const key = topicKey(m.topic);
    store.dbs.channelMessages.put([m.channel_id, m.id], true);
    store.dbs.topicMessages.put([m.channel_id, key, m.id], true);
    topicIdsChanged(store, m.channel_id!, key);
    const topic = isNew ? undefined : (store.dbs.topics.get([m.channel_id, key]) as { name: string; max_id: number } | undefined);
    if (!topic || topic.max_id <= m.id) store.dbs.topics.put([m.channel_id, key], { name: m.topic, max_id: m.id });
  } else {
    store.dbs.dmMessages.put([conversationKey(m.dm_user_ids!), m.id], true);
  }
}

function removeLocation(store: Store, m: MessageRecord): void {
  if (m.type === "stream") {
    const key = topicKey(m.topic);
    store.dbs.channelMessages.remove([m.channel_id, m.id]);
    store.dbs.topicMessages.remove([m.channel_id, key, m.id]);
    topicIdsChanged(store, m.channel_id!, key);
    refreshTopic(store, m.channel_id!, key);
  } else {
    store.dbs.dmMessages.remove([conversationKey(m.dm_user_ids!), m.id]);
  }
}

/**
 * Topics known to exist, by "channelId NUL topic key": every channel message asks
 * whether it starts its topic. Only "yes" is kept, and a topic stops existing only
 * when its last message leaves it (refreshTopic, the one writer that removes a topic's
 * row, invalidates this), so no other writer needs to.
 */
export const existingTopics = new StoreCache<string, true | undefined>();

/** Recomputes a topic's max_id after messages left it; drops the topic when empty. */
function refreshTopic(store: Store, channelId: number, key: string): void {
  let newest: number | undefined;
  for (const k of store.dbs.topicMessages.getKeys({ start: [channelId, key, Infinity], end: [channelId, key, 0], reverse: true, limit: 1 })) {
    newest = (k as [number, string, number])[2];
  }
  if (newest === undefined) {
    existingTopics.invalidate(store);
    store.dbs.topics.remove([channelId, key]);
    return;
  }
  const name = getMessage(store, newest)?.topic ?? key;
  store.dbs.topics.put([channelId, key], { name, max_id: newest });
}

/**
 * IDs in a key range whose last element is the message ID, walking from `from`
 * (inclusive) in the given direction. `prefix` selects the index rows.
 */
export function* idsInRange(
  store: Store,
  db: keyof Store["dbs"],
  prefix: readonly (string | number)[],
  from: number,
  direction: "older" | "newer",
): Generator<number> {
  const range =
    direction === "older"
      ? { start: [...prefix, from], end: [...prefix, -1], reverse: true }
      : { start: [...prefix, from], end: [...prefix, Number.MAX_SAFE_INTEGER] };
  for (const key of store.dbs[db].getKeys(range as any)) {
    const k = key as unknown as (string | number)[];
    yield k[k.length - 1] as number;
  }
}

/**
 * A sender's messages from `from` in the given direction: their rows merged with the
 * messages not indexed yet (search_terms.ts), without repeats (a message sent by an
 * older Hearth past the watermark has both).
 */
export function idsOfSender(store: Store, senderId: number, from: number, direction: "older" | "newer"): Generator<number> {
  // Before the rows: see unindexedMessagesOf.
  const unindexed = unindexedMessagesOf(store, senderId, from, direction);
  return mergeIds([unindexed, idsInRange(store, "senderMessages", [senderId], from, direction)], direction);
}

/** Distinct indexed words starting with `prefix`, found by seeking past each word's rows (at most `limit`). */
export function termsWithPrefix(store: Store, prefix: string, limit: number): string[] {
  const terms: string[] = [];
  let start: (string | number)[] = [prefix];
  while (terms.length < limit) {
    let next: string | undefined;
    // No end key: a sentinel string would miss words with characters past it (emoji).
    for (const key of store.dbs.searchTerms.getKeys({ start, limit: 1 })) next = (key as unknown as [string, number])[0];
    if (next === undefined || !next.startsWith(prefix)) break;
    terms.push(next);
    start = [next, Number.MAX_SAFE_INTEGER];
  }
  return terms;
}

/**
 * The candidates for a word that starts with `prefix`, in ID order from `from`: a lazy
 * k-way merge of each matching word's ordered rows, so the newest matches come first
 * without reading every match, and of the matching messages not indexed yet
 * (search_terms.ts).
 */
export function* idsForTermPrefix(store: Store, prefix: string, from: number, direction: "older" | "newer"): Generator<number> {
  // Before the rows: see unindexedMessageIds.
  const unindexed = unindexedMessageIds(store, prefix, from, direction)[Symbol.iterator]();
  const terms = termsWithPrefix(store, prefix, 512);
  yield* mergeIds([unindexed, ...terms.map((term) => idsInRange(store, "searchTerms", [term], from, direction))], direction);
}

export function topicsOfChannel(store: Store, channelId: number): { name: string; max_id: number }[] {
  const out: { name: string; max_id: number }[] = [];
  for (const { value } of store.dbs.topics.getRange({ start: [channelId], end: [channelId + 1] })) {
    out.push(value as { name: string; max_id: number });
  }
  return out.sort((a, b) => b.max_id - a.max_id);
}

/** A row of a user's index (`userMessageIndex`): the message ID and what the row holds. */
export type IndexRow = { id: number; value: unknown };

/** A user's written rows of one index with their values, walking from `from` (inclusive) in the given direction. */
export function* writtenIndexRows(store: Store, userId: number, index: string, from: number, direction: "older" | "newer"): Generator<IndexRow> {
  const range =
    direction === "older"
      ? { start: [userId, index, from], end: [userId, index, -1], reverse: true }
      : { start: [userId, index, from], end: [userId, index, Number.MAX_SAFE_INTEGER] };
  for (const { key, value } of store.dbs.userMessageIndex.getRange(range as any)) {
    yield { id: (key as unknown as [number, string, number])[2], value };
  }
}

/** The position of the first ID above `id` in an ascending list. */
export function firstAbove(ids: ArrayLike<number>, id: number): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ids[mid] <= id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The union of ID streams that each run in `direction`, in that order, without repeats.
 * mergeBy for plain IDs, with no key function per comparison and, once one stream is
 * left (a user's unread rows are mostly in one form), that stream's IDs passed on as
 * they come: a page of GET /messages pulls every ID through here.
 */
export function* mergeIds(streams: Iterator<number>[], direction: "older" | "newer"): Generator<number> {
  const older = direction === "older";
  try {
    const heads: (number | undefined)[] = [];
    for (const stream of streams) {
      const r = stream.next();
      heads.push(r.done ? undefined : r.value);
    }
    for (;;) {
      let best: number | undefined;
      let live = 0;
      let last = -1;
      for (let i = 0; i < heads.length; i++) {
        const id = heads[i];
        if (id === undefined) continue;
        live++;
        last = i;
        if (best === undefined || (older ? id > best : id < best)) best = id;
      }
      if (best === undefined) return;
      yield best;
      if (live === 1) {
        let previous = best;
        const stream = streams[last];
        for (let r = stream.next(); !r.done; r = stream.next()) {
          if (r.value === previous) continue;
          previous = r.value;
          yield r.value;
        }
        return;
      }
      for (let i = 0; i < heads.length; i++) {
        while (heads[i] === best) {
          const r = streams[i].next();
          heads[i] = r.done ? undefined : r.value;
        }
      }
    }
  } finally {
    closeAll(streams);
  }
}

/**
 * The union of streams whose items each run in `direction` by ID, in that order, without
 * repeats; of items with one ID, the first stream's. A caller that stops early (the
 * newest ID, a page of messages) ends this generator, which ends every stream (see the
 * top of this file).
 */
export function* mergeBy<T>(streams: Iterator<T>[], idOf: (item: T) => number, direction: "older" | "newer"): Generator<T> {
  try {
    const heads: IteratorResult<T>[] = [];
    for (const stream of streams) heads.push(stream.next());
    for (;;) {
      let best = -1;
      for (let i = 0; i < heads.length; i++) {
        const head = heads[i];
        if (head.done) continue;
        if (best === -1) best = i;
        else {
          const id = idOf(head.value);
          const bestId = idOf(heads[best].value as T);
          if (direction === "older" ? id > bestId : id < bestId) best = i;
        }
      }
      if (best === -1) return;
      const item = heads[best].value as T;
      const id = idOf(item);
      yield item;
      for (let i = 0; i < heads.length; i++) {
        while (!heads[i].done && idOf(heads[i].value as T) === id) heads[i] = streams[i].next();
      }
    }
  } finally {
    closeAll(streams);
  }
}

/** Ends iterators (a finished one ignores it); one that fails to end does not keep the others open. */
function closeAll(iterators: readonly Iterator<unknown>[]): void {
  for (const iterator of iterators) {
    try {
      iterator.return?.();
    } catch (error) {
      console.error("Ending a range scan failed:", error);
    }
  }
}
