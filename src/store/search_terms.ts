import { appendTo } from "../lib/collections";
import type { RunCommit, Store } from "./db";
import { getMessage, getMessageShared, searchWords, type MessageRecord } from "./messages";

/**
 * The search index, `searchTerms` [term, messageId] → true: a row per distinct word of
 * a message's content and topic, so that a word or a word's prefix is a range scan;
 * and the sender index, `senderMessages` [senderId, messageId] → true.
 *
 * A send writes neither. A message's fifteen or so search rows were a large share of a
 * send's main-thread CPU, and the sender rows of a batch of sends from many people
 * dirty a B-tree page each, which the batch's commit writes to the disk in full
 * (docs/benchmarks.md). Nothing needs them at once: the background job (unread_rows.ts)
 * writes them for a few hundred messages at a time, in key order, and moves a
 * watermark, meta ["searchTermsWrittenUpTo"]. So:
 *
 * - a message up to the watermark has its rows written, and they follow its edits,
 *   moves and deletion (message_indexes.ts);
 * - a message past the watermark has no search rows (a sender row only if an older
 *   Hearth wrote it with the send); a search or a sender narrow reads those few
 *   messages directly (unindexedMessageIds, unindexedMessagesOf) beside the rows of
 *   the rest, merged without repeats, and a search checks every candidate's words
 *   anyway (src/views/narrow.ts), so both are exact either way.
 *
 * Edits and deletion of a message past the watermark touch no rows: the job checks
 * each message again inside its own write transaction (writeSearchTerms), which LMDB
 * orders before or after the edit's, so it writes the words the message has then,
 * and none for one deleted.
 * Data folders from before the watermark have none: every message has its rows, and
 * the first send records the watermark below itself (initSearchWatermark), as the
 * unread rows' watermark does (unread.ts).
 */
export const SEARCH_WATERMARK = ["searchTermsWrittenUpTo"];

/**
 * Messages written per commit of a busy server's run (sends arriving): a commit holds
 * LMDB's writer lock, which sends then wait for, but each commit also costs its page
 * writes and its fsync, a large share of the search side's CPU with smaller commits.
 * At this size a commit still holds the lock far less long than a commit of the unread
 * side does (docs/benchmarks.md, "The background job's cost, second pass"). A run on a
 * quiet server writes a whole batch in one commit instead (writePendingBatches).
 */
const BUSY_MESSAGES_PER_COMMIT = 100;
/**
 * The pause between a batch's commits (the writer lock free for sends): as long per
 * message as before commits grew to this size, so the job keeps its pace under load.
 */
const PAUSE_MS = 40;

/**
 * The words of the content and the topic, without repeats: one scan of both (a space
 * between them splits words as any separator does; removal relies on getting the same
 * set as the insert).
 */
function indexTerms(message: MessageRecord): string[] {
  return searchWords(`${message.content} ${message.topic}`);
}

/** Every message up to this ID has its search rows written; none past it has any. */
export function searchWatermark(store: Store): number {
  return (store.dbs.meta.get(SEARCH_WATERMARK) as number | undefined) ?? store.lastId("message");
}

/** Sets the watermark below the first message sent without its rows, if none is set. Call inside `store.commit`. */
export function initSearchWatermark(store: Store, messageId: number): void {
  if (store.dbs.meta.get(SEARCH_WATERMARK) === undefined) store.dbs.meta.put(SEARCH_WATERMARK, messageId - 1);
}

/** Whether a message waits for its search rows (one key read). */
export function hasUnindexedMessages(store: Store): boolean {
  const watermark = store.dbs.meta.get(SEARCH_WATERMARK) as number | undefined;
  if (watermark === undefined) return false;
  for (const _ of store.dbs.messages.getKeys({ start: watermark + 1, end: Number.MAX_SAFE_INTEGER, limit: 1 })) return true;
  return false;
}

/**
 * A message written with its rows at once (a bulk load): written when nothing waits
 * before it (the watermark moves past it), else left to the job like a send, so that
 * no message past the watermark ever holds rows. Call inside `store.commit`.
 */
export function indexTermsOfLoadedMessage(store: Store, m: MessageRecord): void {
  const watermark = store.dbs.meta.get(SEARCH_WATERMARK) as number | undefined;
  if (watermark !== undefined && watermark < m.id - 1) return;
  putTerms(store, m);
  store.dbs.senderMessages.put([m.sender_id, m.id], true);
  if (watermark !== undefined) store.dbs.meta.put(SEARCH_WATERMARK, m.id);
}

/** A rewritten message's rows follow its words; a message past the watermark has none to move. Call inside `store.commit`. */
export function reindexTerms(store: Store, before: MessageRecord, after: MessageRecord): void {
  if (before.content === after.content && before.topic === after.topic) return;
  if (before.id > searchWatermark(store)) return;
  removeTerms(store, before);
  putTerms(store, after);
}

/** A deleted message's rows. Call inside `store.commit`. */
export function unindexTerms(store: Store, m: MessageRecord): void {
  if (m.id > searchWatermark(store)) return;
  removeTerms(store, m);
}

function putTerms(store: Store, m: MessageRecord): void {
  for (const term of indexTerms(m)) store.dbs.searchTerms.put([term, m.id], true);
}
function removeTerms(store: Store, m: MessageRecord): void {
  for (const term of indexTerms(m)) store.dbs.searchTerms.remove([term, m.id]);
}

/**
 * The messages past the watermark whose lower-cased text holds `prefix` (a word of
 * searchWords), from `from` (inclusive) in the given direction: all that their rows
 * would give a search and a few more, which the search's own check of every
 * candidate's words drops (src/views/narrow.ts). The watermark is read now, before the caller reads any
 * row: a row read later may be newer than it (a batch written meanwhile), never
 * older, so no message falls between the two.
 */
export function unindexedMessageIds(store: Store, prefix: string, from: number, direction: "older" | "newer"): Iterable<number> {
  return withWordStarting(store, unindexedIds(store, from, direction), prefix);
}

/**
 * The messages past the watermark sent by `senderId`, from `from` (inclusive) in the
 * given direction. As for unindexedMessageIds, the watermark is read now, before the rows.
 */
export function unindexedMessagesOf(store: Store, senderId: number, from: number, direction: "older" | "newer"): Generator<number> {
  return sentBy(store, unindexedIds(store, from, direction), senderId);
}

/** The IDs of the messages past the watermark, read now, from `from` (inclusive) in the given direction. */
function unindexedIds(store: Store, from: number, direction: "older" | "newer"): Iterable<number> {
  const watermark = searchWatermark(store);
  if (direction === "older" && from <= watermark) return [];
  const range = direction === "older" ? { start: from, end: watermark, reverse: true } : { start: Math.max(from, watermark + 1), end: Number.MAX_SAFE_INTEGER };
  return store.dbs.messages.getKeys(range) as Iterable<number>;
}

function* sentBy(store: Store, ids: Iterable<number>, senderId: number): Generator<number> {
  for (const id of ids) if (getMessageShared(store, id)?.sender_id === senderId) yield id;
}

function* withWordStarting(store: Store, ids: Iterable<number>, prefix: string): Generator<number> {
  for (const id of ids) {
    // A substring test, not the words: the search's own check splits the words of those
    // that pass, and the decoded record is shared with it (getMessageShared); splitting
    // here too made a common word's search dearer (docs/benchmarks.md, "Search terms
    // off the send path").
    const m = getMessageShared(store, id);
    if (m && `${m.content} ${m.topic}`.toLowerCase().includes(prefix)) yield id;
  }
}

/**
 * Writes the rows of up to `limit` messages past the watermark with `commit` (the
 * job's, see RunCommit), in commits of `perCommit` messages, each of which moves the
 * watermark. Resolves with the number of messages covered (0: none waited).
 */
export async function writeSearchTermBatch(store: Store, limit: number, commit: RunCommit, perCommit = BUSY_MESSAGES_PER_COMMIT): Promise<number> {
  let covered = 0;
  while (covered < limit) {
    const plan = planSearchTerms(store, Math.min(perCommit, limit - covered));
    if (!plan) break;
    const wrote = await commit(() => writeSearchTerms(store, plan));
    covered += wrote;
    if (wrote < perCommit || covered >= limit) break;
    await Bun.sleep(PAUSE_MS);
  }
  return covered;
}

/** The next commit's messages, read before it: their stored bytes, words and sender. */
export interface SearchTermsPlan {
  watermark: number;
  last: number;
  messages: Map<number, { bytes: Buffer; terms: string[]; sender: number }>;
}

/**
 * Reads and splits the messages outside the write transaction: the worker runs at the
 * lowest priority, and a commit it holds open (LMDB's writer lock) is a wait for every
 * send while the busy machine gives it no CPU.
 */
export function planSearchTerms(store: Store, limit: number): SearchTermsPlan | null {
  const watermark = store.dbs.meta.get(SEARCH_WATERMARK) as number | undefined;
  if (watermark === undefined) return null;
  const plan: SearchTermsPlan = { watermark, last: watermark, messages: new Map() };
  for (const id of store.dbs.messages.getKeys({ start: watermark + 1, end: Number.MAX_SAFE_INTEGER, limit }) as Iterable<number>) {
    const bytes = store.dbs.messages.getBinary(id);
    const m = getMessage(store, id);
    if (!bytes || !m) continue;
    plan.messages.set(id, { bytes: Buffer.from(bytes), terms: indexTerms(m), sender: m.sender_id });
    plan.last = id;
  }
  return plan.messages.size === 0 ? null : plan;
}

/**
 * One commit's rows, for the messages as they are in this transaction: a message
 * whose bytes changed since the plan (an edit, a move) is split again, one gone is
 * skipped. The rows go in key order (each B-tree page visited once). Returns the
 * number of messages covered (0: another run moved the watermark first).
 */
export function writeSearchTerms(store: Store, plan: SearchTermsPlan): number {
  if (store.dbs.meta.get(SEARCH_WATERMARK) !== plan.watermark) return 0;
  // Each term's and each sender's messages, ascending (read in ID order): the rows then
  // go in key order (each B-tree page visited once) with a sort of the distinct keys only.
  const idsByTerm = new Map<string, number[]>();
  const idsBySender = new Map<number, number[]>();
  for (const id of store.dbs.messages.getKeys({ start: plan.watermark + 1, end: plan.last + 1 }) as Iterable<number>) {
    const planned = plan.messages.get(id);
    const bytes = store.dbs.messages.getBinaryFast(id);
    const current = planned && bytes && planned.bytes.equals(bytes) ? planned : null;
    const m = current ? null : getMessage(store, id)!;
    for (const term of current ? current.terms : indexTerms(m!)) appendTo(idsByTerm, term, id);
    appendTo(idsBySender, current ? current.sender : m!.sender_id, id);
  }
  for (const term of [...idsByTerm.keys()].sort()) for (const id of idsByTerm.get(term)!) store.dbs.searchTerms.put([term, id], true);
  for (const sender of [...idsBySender.keys()].sort((a, b) => a - b)) for (const id of idsBySender.get(sender)!) store.dbs.senderMessages.put([sender, id], true);
  store.dbs.meta.put(SEARCH_WATERMARK, plan.last);
  return plan.messages.size;
}
