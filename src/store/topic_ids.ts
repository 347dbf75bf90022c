import type { Store } from "./db";
import { StoreCache } from "./cache";

/**
 * The newest message IDs of recently read topics, kept in memory for the topic
 * narrow's walk (GET /messages in a topic, the web client's most common read). Its
 * `topicMessages` rows are [channel, topic key, message ID] and decoding each key,
 * its topic string included, was a large share of the read (docs/benchmarks.md).
 *
 * What a topic's entry holds: `ids`, newest first, are every ID of the topic from
 * `floor` up (so an entry is only ever filled from the top, by a walk that starts
 * at or above its floor, and grows downwards as walks go further, up to MAX_IDS);
 * `complete` when there are none below. A walk that starts below the floor, or
 * inside a transaction, reads the rows as before.
 *
 * Every write of a topic's rows (message_indexes.ts: a new message, a move into or
 * out of it, a deletion) calls `topicIdsChanged`, which drops the entry at once and
 * again when the transaction ends, committed or rolled back (a reader outside it may
 * fill it from the old rows meanwhile), as StoreCache does for whole caches; emptying
 * the store (`StoreCache.invalidateAll`) drops every entry.
 */

const MAX_TOPICS = 128;
const MAX_IDS = 400;
/** Above every message ID: an empty entry holds "every ID from here up". */
const TOP = Number.MAX_SAFE_INTEGER + 1;

interface KnownTopic {
  ids: number[];
  floor: number;
  complete: boolean;
}

/** Only for its version, which `StoreCache.invalidateAll` moves. */
const wholesale = new StoreCache<never, never>();
const known = new WeakMap<Store, { version: number; topics: Map<string, KnownTopic> }>();

function topicsOf(store: Store): Map<string, KnownTopic> {
  let kept = known.get(store);
  if (kept === undefined || kept.version !== wholesale.version) known.set(store, (kept = { version: wholesale.version, topics: new Map() }));
  return kept.topics;
}

const nameOf = (channelId: number, key: string) => `${channelId}:${key}`;

/** A topic's rows were written (call inside the transaction that writes them). */
export function topicIdsChanged(store: Store, channelId: number, key: string): void {
  const name = nameOf(channelId, key);
  topicsOf(store).delete(name);
  store.afterCommit(() => topicsOf(store).delete(name));
}

/** The rows themselves: IDs of the topic from `from` (inclusive) in the given direction. */
function* scan(store: Store, channelId: number, key: string, from: number, direction: "older" | "newer"): Generator<number> {
  const range =
    direction === "older"
      ? { start: [channelId, key, from], end: [channelId, key, -1], reverse: true }
      : { start: [channelId, key, from], end: [channelId, key, Number.MAX_SAFE_INTEGER] };
  for (const k of store.dbs.topicMessages.getKeys(range as any)) yield (k as unknown as [number, string, number])[2];
}

/** The index of the first of `ids` (descending) that is at most `from`; `ids.length` when none. */
function firstAtMost(ids: readonly number[], from: number): number {
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ids[mid] <= from) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** IDs of a topic's messages from `from` (inclusive), newest first ("older") or oldest first ("newer"). */
export function* topicIdsFrom(store: Store, channelId: number, key: string, from: number, direction: "older" | "newer"): Generator<number> {
  if (store.inTransaction) return yield* scan(store, channelId, key, from, direction);
  const topics = topicsOf(store);
  const name = nameOf(channelId, key);
  let entry = topics.get(name);
  if (direction === "newer") {
    if (entry === undefined || (!entry.complete && from < entry.floor)) return yield* scan(store, channelId, key, from, direction);
    // Every ID from the floor up is held: the walk needs nothing else.
    const ids = entry.ids;
    for (let i = firstAtMost(ids, from - 1) - 1; i >= 0; i--) yield ids[i];
    return;
  }
  if (entry === undefined) {
    if (from < TOP - 1) return yield* scan(store, channelId, key, from, direction);
    if (topics.size >= MAX_TOPICS) topics.delete(topics.keys().next().value!);
    entry = { ids: [], floor: TOP, complete: false };
    topics.set(name, entry);
  } else if (!entry.complete && from < entry.floor - 1) {
    return yield* scan(store, channelId, key, from, direction);
  }
  const ids = entry.ids;
  let i = firstAtMost(ids, from);
  // `ids` may grow while this walk is suspended (another walk of the same topic).
  while (i < ids.length) yield ids[i++];
  if (entry.complete) return;
  // Below the floor: the rows, each appended while the entry is still the kept one
  // and no other walk has extended it meanwhile.
  let floor = entry.floor;
  let extending = true;
  for (const id of scan(store, channelId, key, floor - 1, "older")) {
    if (extending) {
      extending = entry.floor === floor && ids.length < MAX_IDS && topicsOf(store).get(name) === entry;
      if (extending) {
        ids.push(id);
        entry.floor = floor = id;
      }
    }
    yield id;
  }
  if (extending && entry.floor === floor && topicsOf(store).get(name) === entry) entry.complete = true;
}
