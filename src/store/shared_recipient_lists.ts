import { listKey, sameList } from "../lib/collections";
import { StoreCache } from "./cache";
import type { Store } from "./db";

/**
 * Recipient lists stored once per distinct list (`sharedRecipientLists`), not once per
 * message. Almost every channel message goes to the same list as the one before it
 * (the channel's active subscribers), so a message's row in `messageRecipientLists`
 * holds either
 *
 * - a number: the ID of a shared list, `sharedRecipientLists` [listId] → sorted IDs; or
 * - an array: the sorted IDs themselves. Lists shorter than SHARED_LIST_MIN (direct
 *   messages), lists a change rewrote for one message (updateRecipientList) and every
 *   row written before shared lists existed have this form.
 *
 * `decodeRecipientList` is the one reader of both forms. A shared list's ID is the ID
 * of the message whose write created it: no counter to keep, and unique since a
 * message creates at most one. A shared list is written once and never changed or
 * removed: a changed list is a new list, and deleting a message leaves the list its
 * row pointed to for the other messages that share it. A list no message refers to any
 * more (all of its messages deleted) is kept: it is one row per change of a channel's
 * subscribers, a few hundred bytes, and finding it would mean scanning every message.
 * Emptying the store (realm deletion) clears them with everything else.
 */

/** Lists shorter than this stay inline: a reference would save no more than a few bytes. */
export const SHARED_LIST_MIN = 8;

/** A `messageRecipientLists` value: a shared list's ID, or the sorted IDs. */
export type RecipientListRow = number | number[];

/**
 * Decoded shared lists, by list ID. A list is written once under a new key and never
 * rewritten, and misses are not kept: a list can only enter the cache once committed,
 * with the content it keeps for good (a committed list's ID is a committed message's,
 * and message IDs are never given out again, even after the store is emptied: the
 * counters stay). The one other writer, emptying the store, calls
 * `StoreCache.invalidateAll`. The worker thread has its own copy of this cache, which
 * that call does not reach; by the same argument it can hold nothing wrong. Pruned
 * wholesale every PRUNE_EVERY loads, so reading a long history's many lists does not
 * keep them all.
 */
const decoded = new StoreCache<number, readonly number[]>();
const PRUNE_EVERY = 1024;
let loadsSincePrune = 0;

/** The sorted IDs of a `messageRecipientLists` value of either form (shared: do not change it); undefined for none. */
export function decodeRecipientList(store: Store, row: unknown): readonly number[] | undefined {
  if (row === undefined || Array.isArray(row)) return row as number[] | undefined;
  const listId = row as number;
  return decoded.get(store, listId, () => {
    if (++loadsSincePrune >= PRUNE_EVERY && !store.inTransaction) {
      loadsSincePrune = 0;
      decoded.prune(store, () => false);
    }
    const list = store.dbs.sharedRecipientLists.get(listId) as number[] | undefined;
    if (list === undefined) throw new Error(`message recipient list refers to shared list ${listId}, which does not exist`);
    return list;
  });
}

/**
 * The lists already written, found by content, for sends to reuse. An entry the current
 * transaction created is `tentative` until that transaction commits: a later write in
 * the same transaction (a bulk load's next message) checks it against the store before
 * use, since a rolled-back transaction takes the list away and a later message may get
 * its ID (and so the same list ID, with other content). Once the creating transaction
 * has ended, the entry is kept only if the committed list is the one it describes.
 */
interface KnownList {
  id: number;
  list: readonly number[];
  tentative: boolean;
}

const MAX_KNOWN = 256;
const knownByStore = new WeakMap<Store, { version: number; byKey: Map<string, KnownList[]> }>();

function knownLists(store: Store): Map<string, KnownList[]> {
  let known = knownByStore.get(store);
  // The decoded cache's version moves only when the store is emptied (invalidateAll): so are these.
  if (known === undefined || known.version !== decoded.version) knownByStore.set(store, (known = { version: decoded.version, byKey: new Map() }));
  return known.byKey;
}

function storedListIs(store: Store, listId: number, list: readonly number[]): boolean {
  const stored = store.dbs.sharedRecipientLists.get(listId) as number[] | undefined;
  return stored !== undefined && sameList(stored, list);
}

/**
 * What `messageRecipientLists` stores for a new message with these recipients (sorted):
 * a reference to the shared list with the same IDs, written now if there is none
 * known; the IDs themselves for a short list. Call inside `store.commit`, as the
 * message itself is written (the new list's ID is `messageId`).
 */
export function recipientListRow(store: Store, messageId: number, ids: readonly number[]): RecipientListRow {
  if (ids.length < SHARED_LIST_MIN) return ids as number[];
  const byKey = knownLists(store);
  const key = listKey(ids);
  const entries = byKey.get(key);
  if (entries) {
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i];
      if (!sameList(entry.list, ids)) continue;
      if (!entry.tentative) return entry.id;
      if (storedListIs(store, entry.id, ids)) return entry.id;
    }
  }
  // A new list. Its own copy: the caller's array may be a sender's working array.
  const entry: KnownList = { id: messageId, list: ids.slice(), tentative: true };
  store.dbs.sharedRecipientLists.put(messageId, entry.list);
  if (byKey.size >= MAX_KNOWN) byKey.clear();
  const kept = byKey.get(key);
  if (kept) kept.push(entry);
  else byKey.set(key, [entry]);
  store.afterCommit(() => settleKnown(store, key, entry));
  return messageId;
}

/** Once the transaction that created a list has ended: kept if it committed with that content, forgotten otherwise. */
function settleKnown(store: Store, key: string, entry: KnownList): void {
  const byKey = knownLists(store);
  const entries = byKey.get(key);
  if (!entries?.includes(entry)) return;
  // Inside another transaction a read could see that one's uncommitted writes: not settled, forgotten (the next send writes a new list).
  if (!store.inTransaction && storedListIs(store, entry.id, entry.list)) {
    entry.tentative = false;
    return;
  }
  entries.splice(entries.indexOf(entry), 1);
  if (entries.length === 0) byKey.delete(key);
}
