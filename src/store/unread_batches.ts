import { appendTo, sameList } from "../lib/collections";
import type { RunCommit, Store } from "./db";
import { getMessage, MessageFlag, messageLocation, recipientList, type MessageLocation } from "./messages";
import { listHolds, recipientsVersion, UNREAD_WATERMARK, unreadWatermark } from "./unread";
import { putRunRecords, removeRuns, RUN_MAX_IDS, runRecords, type RunRecords } from "./unread_runs";
import { decodeRecipientList } from "./shared_recipient_lists";

/**
 * One batch of the unread-rows job (unread_rows.ts): the "unread" rows that channel
 * messages' recipients hold implicitly (see the top of unread.ts), written as one run
 * per user. A batch takes the messages past the watermark, groups their recipients by
 * user, and writes each user's rows for the batch as one run record, a few hundred
 * users per commit. The last commit of a batch moves the watermark. A crash midway
 * loses nothing: the rows are still implicit, and the next batch rewrites what it must.
 *
 * Each commit holds LMDB's writer lock, which a send's commit (on lmdb-js's write
 * thread, never the main thread: Store.run) then waits for, so commits stay short and
 * are spread apart. Fewer, larger commits collided with fewer sends' fsyncs and gave a
 * lower delivery p99 under scripts/bench-events.ts than commits of 100 users; all of a
 * large channel's users in one commit held the lock so long that the sends it delayed
 * waited far longer.
 */
const USERS_PER_COMMIT = 250;
const PAUSE_MS = 30;
/** Messages per batch: readers scan the lists past the watermark, so it must not trail far behind. */
export const MESSAGES_PER_BATCH = 500;

/**
 * Writes one batch with `commit` (the worker's transaction on its own thread, or the
 * main thread's `Store.commit`; see unread_rows_run.ts); resolves with the number of messages it
 * was planned for (0: nothing was pending; MESSAGES_PER_BATCH: more may wait), counted
 * before the writes, which drop messages deleted meanwhile from the batch.
 */
export async function writeDeferredUnreadBatch(
  store: Store,
  limit: number,
  commit: RunCommit,
): Promise<number> {
  const batch = planDeferredUnreadRows(store, limit);
  if (!batch) return 0;
  const planned = batch.lists.size;
  const idsByUser = new Map<number, number[]>();
  for (const [id, recipients] of batch.lists) {
    if (batch.locations.get(id)) for (const userId of recipients) appendTo(idsByUser, userId, id);
  }
  let chunk = new Map<number, number[]>();
  for (const [userId, ids] of idsByUser) {
    chunk.set(userId, ids);
    if (chunk.size >= USERS_PER_COMMIT) {
      const full = chunk;
      await commit(() => writeDeferredUnreadRows(store, batch, full, false));
      chunk = new Map();
      await Bun.sleep(PAUSE_MS);
    }
  }
  await commit(() => writeDeferredUnreadRows(store, batch, chunk, true));
  return planned;
}

/**
 * What one batch of the background job covers: the channel messages past the
 * watermark, with their recipient lists and locations read once. The job writes the
 * batch in many small commits; `recipientsVersion` says when a commit must read them
 * again (a list or a location changed since).
 */
export interface DeferredUnreadBatch {
  /** The oldest message it may cover: the key of the users' runs it writes (see unread_runs.ts). */
  start: number;
  /** The newest message covered: where the watermark moves once all is written. */
  target: number;
  version: number;
  /** Shared decoded lists (messages sent to the same list may hold the same array): do not change them. */
  lists: Map<number, readonly number[]>;
  /** null: a direct message (its rows were written when sent) or a message since deleted. */
  locations: Map<number, MessageLocation | null>;
  /**
   * The run records last written, by start: most users of a channel hold the same
   * messages, so their runs are the same bytes, encoded once. Valid while `locations` is.
   */
  runs: Map<number, RunRecords>;
  /** Decided by the batch's first commit: whether users may hold runs of an earlier attempt (see UNREAD_BATCH_IN_PROGRESS). */
  removesEarlierRuns?: boolean;
}

/**
 * The start of a batch some of whose commits are written and whose watermark move is
 * not (0: none). A batch planned again from that start (after a crash or a failed
 * commit) must first remove the runs the earlier attempt wrote, which may have other
 * boundaries; any other batch has none to remove, and skips the range read per user
 * that finding them costs (inside a write transaction lmdb-js opens a new cursor for
 * each, a large share of a batch's CPU). Absent in data folders from before this
 * mark: their first batch removes, as every batch used to.
 */
const UNREAD_BATCH_IN_PROGRESS = ["unreadBatchInProgress"];

/** Plans the next batch (at most `limit` messages), or null when nothing is pending. */
export function planDeferredUnreadRows(store: Store, limit: number): DeferredUnreadBatch | null {
  const start = unreadWatermark(store) + 1;
  const batch: DeferredUnreadBatch = { start, target: 0, version: recipientsVersion(store), lists: new Map(), locations: new Map(), runs: new Map() };
  for (const { key, value } of store.dbs.messageRecipientLists.getRange({ start, end: Number.MAX_SAFE_INTEGER, limit })) {
    batch.lists.set(key as number, decodeRecipientList(store, value)!);
    batch.target = key as number;
  }
  if (batch.lists.size === 0) return null;
  readLocations(store, batch);
  return batch;
}

function readLocations(store: Store, batch: DeferredUnreadBatch): void {
  // One object per place, shared by its messages: runs find their places by identity (placeIndex).
  const places = new Map<string, MessageLocation>();
  for (const id of batch.lists.keys()) {
    const m = getMessage(store, id);
    if (!m || m.type !== "stream") {
      batch.locations.set(id, null);
      continue;
    }
    const location = messageLocation(m);
    const key = JSON.stringify(location);
    batch.locations.set(id, places.get(key) ?? places.set(key, location).get(key)!);
  }
}

/**
 * Writes the implicit "unread" rows of these users for the batch's messages (each
 * user's IDs ascending, as the batch lists them) and, with
 * `advance`, moves the watermark to the batch's target. Call inside `store.commit`.
 * Each row is checked again here: the user may have read the message or lost it, it
 * may have moved or gone, or its row may already be written (a mention's).
 */
export function writeDeferredUnreadRows(store: Store, batch: DeferredUnreadBatch, idsByUser: ReadonlyMap<number, readonly number[]>, advance: boolean): void {
  if (batch.version !== recipientsVersion(store)) {
    for (const id of batch.lists.keys()) {
      const list = recipientList(store, id);
      if (list) batch.lists.set(id, list);
      else batch.lists.delete(id);
    }
    readLocations(store, batch);
    batch.runs.clear();
    batch.version = recipientsVersion(store);
  }
  if (batch.removesEarlierRuns === undefined) {
    const inProgress = store.dbs.meta.get(UNREAD_BATCH_IN_PROGRESS) as number | undefined;
    batch.removesEarlierRuns = inProgress === undefined || inProgress === batch.start;
    if (!advance) store.dbs.meta.put(UNREAD_BATCH_IN_PROGRESS, batch.start);
  }
  for (const [userId, ids] of idsByUser) {
    if (ids.length === 0) continue;
    // Two range reads per user instead of two lookups per row: within a batch's span a
    // user has few written rows (their own messages, mentions, what they read early).
    const from = ids[0];
    const to = ids[ids.length - 1] + 1;
    const skip = new Set<number>();
    for (const { key, value } of store.dbs.userMessages.getRange({ start: [userId, from], end: [userId, to] })) {
      if ((value as number) & MessageFlag.read) skip.add((key as [number, number])[1]);
    }
    for (const key of store.dbs.userMessageIndex.getKeys({ start: [userId, "unread", from], end: [userId, "unread", to] })) {
      skip.add((key as [number, string, number])[2]);
    }
    const runIds: number[] = [];
    const places: MessageLocation[] = [];
    for (const id of ids) {
      const location = batch.locations.get(id);
      if (!location || skip.has(id) || !listHolds(batch.lists.get(id), userId)) continue;
      runIds.push(id);
      places.push(location);
    }
    // A batch cut short by a crash is planned again from the same start: what it wrote is replaced.
    if (batch.removesEarlierRuns) removeRuns(store, userId, batch.start, batch.target);
    for (let i = 0; i < runIds.length; i += RUN_MAX_IDS) {
      const start = i === 0 ? batch.start : runIds[i];
      const chunk = runIds.slice(i, i + RUN_MAX_IDS);
      let records = batch.runs.get(start);
      // The same IDs in a batch have the same locations: equal IDs, equal records.
      if (!records || !sameList(records.ids, chunk)) {
        // The batch's locations are one object per place (readLocations), as runRecords needs.
        records = runRecords(start, chunk, places.slice(i, i + RUN_MAX_IDS));
        batch.runs.set(start, records);
      }
      putRunRecords(store, userId, records);
    }
  }
  if (advance && batch.target > unreadWatermark(store)) {
    store.dbs.meta.put(UNREAD_WATERMARK, batch.target);
    store.dbs.meta.put(UNREAD_BATCH_IN_PROGRESS, 0);
  }
}
