import { appendTo, listKey, sameList } from "../lib/collections";
import { StoreCache } from "./cache";
import type { Store } from "./db";
import { firstAbove, idsInRange, mergeBy, mergeIds, writtenIndexRows, type IndexRow } from "./message_indexes";
import { getMessage, MessageFlag, messageLocation, recipientList, type MessageLocation, type MessageRecord } from "./messages";
import { decodeRecipientList } from "./shared_recipient_lists";
import { applyRunRemovals, inUnreadRun, relocateInUnreadRuns, runsChanged, unreadRunIds, unreadRunLocation, unreadRunRows, type RunRemovals } from "./unread_runs";

/**
 * The "unread" index: which messages each user has not read, with where each one sits
 * (its MessageLocation), so that unread counts by conversation never read a message.
 *
 * Why it has three forms: a message's per-recipient rows are what a send costs. Each
 * lands on a different page of a per-user B-tree, and LMDB copies, writes and fsyncs
 * every page a transaction touches, so a channel message to a large channel cost
 * megabytes of page writes per commit. A channel message therefore writes no row per
 * recipient when it is sent; the flags value 0 (unread, nothing else) is stored only
 * as this index's row, and the row itself is first implicit, then written in bulk.
 * A user holds an "unread" row for a message in exactly one of these forms:
 *
 * - written: `userMessageIndex` [userId, "unread", messageId] → location. Direct
 *   messages (a handful of recipients), recipients whose flags are not 0 when it is
 *   sent (a mention) and rows written later (a message marked unread again) get this
 *   form at once (src/store/user_messages.ts).
 * - in a run: `userMessageIndex` [userId, "unreadBatch", batchStart] → the run's
 *   message IDs, ascending, then for each the position of its location in the places
 *   record (varint distances and one byte per place, src/store/unread_runs.ts), and
 *   [userId, "unreadBatchPlaces", batchStart] → those distinct locations. The
 *   background job (unread_rows.ts) writes a batch's rows for one user this way;
 *   unread_runs.ts keeps them.
 * - implicit: the message is newer than the watermark, meta ["unreadRowsWrittenUpTo"],
 *   the user is in its recipient list (`messageRecipientLists`), and they hold no
 *   flags row saying it is read. The job writes these as runs and moves the watermark.
 *   Data folders from before implicit rows have no watermark: all their rows are written.
 *
 * Two more meta keys serve the job: ["recipientsVersion"] moves whenever a recipient
 * list or a location changes (recipientsChanged), and ["unreadBatchInProgress"] marks a
 * batch partly written (unread_batches.ts).
 *
 * The interface: add (initUnreadWatermark and addImplicitUnreadRows as a message is
 * sent, putUnreadRow), mark (removeUnreadRow, gathered and applied once per change by
 * applyUnreadRemovals; relocateUnreadRows after a move), and read (hasUnreadRow,
 * unreadRows, unreadMessageIds, unreadIdStreams, writtenUnreadLocation). Readers merge
 * the three forms; a row that exists in two forms is one row.
 */

export const UNREAD_WATERMARK = ["unreadRowsWrittenUpTo"];

/**
 * Every message up to this ID has its "unread" rows written; newer channel messages
 * may hold them implicitly (see the top of this file). Data folders from before
 * implicit rows have no watermark: all their messages have their rows.
 */
export function unreadWatermark(store: Store): number {
  return (store.dbs.meta.get(UNREAD_WATERMARK) as number | undefined) ?? store.lastId("message");
}

/** Whether any channel message past the watermark waits for its deferred "unread" rows (one key read). */
export function hasDeferredUnreadRows(store: Store): boolean {
  for (const _ of store.dbs.messageRecipientLists.getKeys({ start: unreadWatermark(store) + 1, end: Number.MAX_SAFE_INTEGER, limit: 1 })) return true;
  return false;
}

/**
 * Sets the watermark below the first message sent with implicit rows, if none is set:
 * every message before it has its rows written. Call inside `store.commit`, before the
 * message's rows are added.
 */
export function initUnreadWatermark(store: Store, messageId: number): void {
  if (watermarkCommitted.has(store)) return;
  if (store.dbs.meta.get(UNREAD_WATERMARK) === undefined) store.dbs.meta.put(UNREAD_WATERMARK, messageId - 1);
}

/**
 * Stores whose watermark is set in committed data (seen outside any transaction, in
 * loadPendingUnreadIndex): nothing removes it, so their sends skip the read above.
 */
const watermarkCommitted = new WeakSet<Store>();

/** Binary search in a sorted recipient list. */
export function listHolds(list: readonly number[] | undefined, userId: number): boolean {
  return list !== undefined && list[firstAbove(list, userId - 1)] === userId;
}

/**
 * Per store, the messages past the watermark grouped by the recipient list they were
 * sent with: without it, every read of a user's unread state would decode every
 * pending recipient list, theirs or not. A send adds its ID to one group (the messages
 * of a channel share their list until its subscribers change), so its cost does not
 * grow with the channel; a user's messages are those of the groups whose list holds
 * them, gathered when read and kept until the next change (`byUser`). It may hold more
 * than is true (a send rolled back, a user removed since, a recipient whose flags row
 * says read): entries are checked against the stored list and the flags before use.
 * It never holds less: sends add to it inside their transaction, and it is rebuilt
 * from the lists at first use; entries leave only when the watermark passes them.
 */
interface PendingGroup {
  /** The recipient list, ascending, as the messages' sends stored it. */
  list: readonly number[];
  /** The messages sent with it, ascending. */
  messageIds: number[];
}

interface PendingIndex {
  watermark: number;
  groups: PendingGroup[];
  /** The groups of each listKey (keys may collide: a group is found with sameList). */
  byKey: Map<string, PendingGroup[]>;
  /** Each user's pending message IDs, ascending, gathered from the groups since their last change. */
  byUser: Map<number, ArrayLike<number>>;
}

/**
 * The decoded recipient lists of messages past the watermark, shared by every user's
 * reads of implicit rows: each read checks the user against the lists of their pending
 * messages, and decoding every list (as many IDs as the channel has members) for every
 * user made a register measurably slower for every few hundred pending messages. Any
 * change to a list drops them all (recipientsChanged); the watermark's advance prunes
 * them with the pending index. Main thread only: the worker reads lists straight from
 * the store.
 */
const pendingLists = new StoreCache<number, readonly number[] | undefined>();
const pendingIndexes = new WeakMap<Store, PendingIndex>();

function pendingIndex(store: Store, watermark = unreadWatermark(store)): PendingIndex {
  let index = pendingIndexes.get(store);
  if (!index) {
    index = { watermark, groups: [], byKey: new Map(), byUser: new Map() };
    for (const { key, value } of store.dbs.messageRecipientLists.getRange({ start: watermark + 1, end: Number.MAX_SAFE_INTEGER })) {
      appendPending(index, decodeRecipientList(store, value)!, key as number);
    }
    // Kept only when built from committed data (see loadPendingUnreadIndex); built inside
    // a transaction, it serves that read alone, and the next one outside builds it again.
    if (!store.inTransaction) pendingIndexes.set(store, index);
  } else if (index.watermark < watermark && !store.inTransaction) {
    // Pruned only on committed data: inside a transaction the watermark read may be
    // the batch's own uncommitted move, and a rollback would leave the index short.
    const kept = index.groups;
    index.groups = [];
    index.byKey = new Map();
    for (const group of kept) {
      const rest = group.messageIds.slice(firstAbove(group.messageIds, watermark));
      if (rest.length > 0) addGroup(index, { list: group.list, messageIds: rest });
    }
    index.byUser = new Map();
    index.watermark = watermark;
    pendingLists.prune(store, (id) => id > watermark);
  }
  return index;
}

/**
 * Builds the index from committed data, or prunes it to the committed watermark: called
 * at start and after each batch of the background job, outside any transaction, so a
 * watermark moved by a batch that later rolls back can never shape it, and a server
 * nobody reads from does not grow it without bound.
 */
export function loadPendingUnreadIndex(store: Store): void {
  runsChanged(store);
  pendingIndex(store);
  if (!store.inTransaction && store.dbs.meta.get(UNREAD_WATERMARK) !== undefined) watermarkCommitted.add(store);
}

function addGroup(index: PendingIndex, group: PendingGroup): void {
  index.groups.push(group);
  const key = listKey(group.list);
  const sharing = index.byKey.get(key);
  if (sharing) sharing.push(group);
  else index.byKey.set(key, [group]);
}

function appendPending(index: PendingIndex, list: readonly number[], messageId: number): void {
  if (index.byUser.size > 0) index.byUser = new Map();
  const group = index.byKey.get(listKey(list))?.find((g) => sameList(g.list, list));
  if (!group) {
    // Its own copy: the caller's list may be a sender's working array.
    addGroup(index, { list: list.slice(), messageIds: [messageId] });
    return;
  }
  const ids = group.messageIds;
  if (ids[ids.length - 1] < messageId) ids.push(messageId);
  else {
    // IDs a rolled-back batch gave out come again: keep the list sorted and without repeats.
    const at = firstAbove(ids, messageId - 1);
    if (ids[at] !== messageId) ids.splice(at, 0, messageId);
  }
}

/** A user's pending message IDs, ascending (shared: do not change it); empty when none. */
function pendingIdsOf(index: PendingIndex, userId: number): ArrayLike<number> {
  let ids = index.byUser.get(userId);
  if (ids) return ids;
  const holding = index.groups.filter((group) => listHolds(group.list, userId));
  if (holding.length === 0) ids = [];
  else if (holding.length === 1) ids = holding[0].messageIds.slice();
  // Several channels' groups: one merge, an ID in two groups (a rolled-back send's ID given out again) once.
  else ids = Array.from(mergeIds(holding.map((group) => group.messageIds[Symbol.iterator]()), "newer"));
  index.byUser.set(userId, ids);
  return ids;
}

/**
 * A new channel message whose recipients (its stored recipient list, sorted) may hold
 * their "unread" row implicitly: those whose flags are 0. Recipients with a flags row
 * are listed too; readers check the flags. Call inside `store.commit`.
 */
export function addImplicitUnreadRows(store: Store, messageId: number, recipientList: readonly number[]): void {
  if (recipientList.length === 0) return;
  // Inside the send's transaction an index that exists is only appended to (pruning waits for a read outside).
  appendPending(pendingIndexes.get(store) ?? pendingIndex(store), recipientList, messageId);
}

/**
 * Whether a user holds an "unread" row for a message, in any form (see the top of this
 * file). For a user who holds no flags row for it (the callers have looked): a pending
 * message is then unread for every recipient on its stored list.
 */
export function hasUnreadRow(store: Store, userId: number, messageId: number): boolean {
  // Runs first: a walk's lookups mostly hit the decoded runs kept in memory, and a
  // message is never both in a run and in a written row.
  if (inUnreadRun(store, userId, messageId)) return true;
  if (store.dbs.userMessageIndex.doesExist([userId, "unread", messageId])) return true;
  if (messageId <= unreadWatermark(store)) return false;
  // Implicit: pending for the user, and on the message's stored list (the index may hold more than is true).
  const pending = pendingIdsOf(pendingIndex(store), userId);
  return pending[firstAbove(pending, messageId - 1)] === messageId && listHolds(pendingLists.get(store, messageId, () => recipientList(store, messageId)), userId);
}

/** Writes a user's "unread" row for a message. Call inside `store.commit`. */
export function putUnreadRow(store: Store, userId: number, m: MessageRecord): void {
  store.dbs.userMessageIndex.put([userId, "unread", m.id], messageLocation(m));
}

/**
 * "unread" rows to take out of runs, by user: gathered over all the messages of a
 * change and applied once (applyUnreadRemovals), since taking a message out rewrites
 * its run.
 */
export type UnreadRemovals = RunRemovals;

/** Removes a user's written "unread" row for a message; one held in a run is gathered in `removals`. Call inside `store.commit`. */
export function removeUnreadRow(store: Store, userId: number, messageId: number, removals: UnreadRemovals): void {
  const key = [userId, "unread", messageId];
  if (!store.dbs.userMessageIndex.doesExist(key)) appendTo(removals, userId, messageId);
  else store.dbs.userMessageIndex.remove(key);
}

/** Takes the gathered rows out of the runs that hold them, each run rewritten once. Call inside `store.commit`. */
export function applyUnreadRemovals(store: Store, removals: UnreadRemovals): void {
  applyRunRemovals(store, removals);
}

/** After a move: the unread rows of the messages' recipients (user → their flags) point at the messages' new places. */
export function relocateUnreadRows(store: Store, moved: readonly { message: MessageRecord; holders: ReadonlyMap<number, number> }[]): void {
  const inRuns = new Map<number, Map<number, MessageLocation>>();
  for (const { message: m, holders } of moved) {
    // One object per message, shared by its holders' runs (relocateInUnreadRuns).
    const location = messageLocation(m);
    for (const [userId, bits] of holders) {
      // Implicit rows (not yet written) need nothing: they read the message's current place.
      if (bits & MessageFlag.read) continue;
      if (store.dbs.userMessageIndex.doesExist([userId, "unread", m.id])) store.dbs.userMessageIndex.put([userId, "unread", m.id], location);
      else (inRuns.get(userId) ?? inRuns.set(userId, new Map()).get(userId)!).set(m.id, location);
    }
  }
  for (const [userId, places] of inRuns) relocateInUnreadRuns(store, userId, places);
}

/**
 * Moves whenever a message's recipient list or location changes, inside the
 * transaction that changes it. Stored, not kept in memory: the job runs on a worker
 * thread, which sees the main thread's writes only through the store.
 */
const RECIPIENTS_VERSION = ["recipientsVersion"];
export const recipientsVersion = (store: Store) => (store.dbs.meta.get(RECIPIENTS_VERSION) as number | undefined) ?? 0;
export function recipientsChanged(store: Store): void {
  store.dbs.meta.put(RECIPIENTS_VERSION, recipientsVersion(store) + 1);
  pendingLists.invalidate(store);
}

/**
 * Messages past the watermark that the user holds a row for through the recipient
 * list alone, walking from `from` (inclusive); with `unreadOnly`, those they have not read.
 */
function* implicitRowIds(store: Store, userId: number, from: number, direction: "older" | "newer", unreadOnly: boolean, watermark = unreadWatermark(store)): Generator<number> {
  const index = pendingIndex(store, watermark);
  // Shared and never changed in place (a send gathers a new one): a send during the walk does not shift it.
  const snapshot = pendingIdsOf(index, userId);
  if (snapshot.length === 0) return;
  const check = (id: number) =>
    id > index.watermark &&
    listHolds(pendingLists.get(store, id, () => recipientList(store, id)), userId) &&
    !(unreadOnly && ((store.dbs.userMessages.get([userId, id]) as number | undefined) ?? 0) & MessageFlag.read);
  if (direction === "older") {
    for (let i = firstAbove(snapshot, from) - 1; i >= 0; i--) if (check(snapshot[i])) yield snapshot[i];
  } else {
    for (let i = firstAbove(snapshot, from - 1); i < snapshot.length; i++) if (check(snapshot[i])) yield snapshot[i];
  }
}

/**
 * The "unread" index rows of a user with their locations, written (one row each or
 * in runs) and implicit merged, walking from `from` (inclusive) in the given direction.
 */
export function* unreadRows(store: Store, userId: number, from: number, direction: "older" | "newer"): Generator<IndexRow> {
  yield* mergeBy(
    [
      writtenIndexRows(store, userId, "unread", from, direction),
      unreadRunRows(store, userId, from, direction),
      implicitUnreadRows(store, userId, from, direction),
    ],
    (row) => row.id,
    direction,
  );
}

function* implicitUnreadRows(store: Store, userId: number, from: number, direction: "older" | "newer"): Generator<IndexRow> {
  for (const id of implicitRowIds(store, userId, from, direction, true)) {
    const m = getMessage(store, id);
    if (m) yield { id, value: messageLocation(m) };
  }
}

/** IDs of the user's unread messages from `from` (inclusive), written, run and implicit rows merged. */
export function unreadMessageIds(store: Store, userId: number, from: number, direction: "older" | "newer"): Generator<number> {
  return mergeIds(unreadIdStreams(store, userId, from, direction, true), direction);
}

/**
 * The IDs of a user's "unread" rows in each form, from `from` (inclusive), for a merge
 * (mergeIds); without `unreadOnly`, implicit rows the user has read are included too
 * (for merging with their flags rows, which hold those).
 */
export function unreadIdStreams(store: Store, userId: number, from: number, direction: "older" | "newer", unreadOnly: boolean): Iterator<number>[] {
  // Read once for both streams: each read is a meta get, on every `is:unread` walk.
  const watermark = unreadWatermark(store);
  return [
    idsInRange(store, "userMessageIndex", [userId, "unread"], from, direction),
    unreadRunIds(store, userId, from, direction, watermark),
    implicitRowIds(store, userId, from, direction, unreadOnly, watermark),
  ];
}

/** Where a user's written "unread" row for a message (its own or in a run) says the message is; undefined without one. */
export function writtenUnreadLocation(store: Store, userId: number, messageId: number): MessageLocation | undefined {
  const own = store.dbs.userMessageIndex.get([userId, "unread", messageId]) as MessageLocation | undefined;
  if (own !== undefined) return own;
  return unreadRunLocation(store, userId, messageId);
}
