import { appendTo } from "../lib/collections";
import { StoreCache } from "./cache";
import type { Store } from "./db";
import { allUsers } from "./users";

/**
 * Messages are stored once (`messages`); each recipient holds a flags row
 * (`userMessages`, Zulip's UserMessage, in the compact forms below) and index rows
 * that make every narrow a range scan ending in the message ID. All writers here run
 * inside `store.commit`.
 *
 * A message's per-recipient rows are what a send costs: each lands on a different
 * page of a per-user B-tree, and LMDB copies, writes and fsyncs every page a
 * transaction touches (a message to 1,000 recipients: ~4 MB and ~15 ms per commit).
 * So a channel message writes no row per recipient at all when it is sent:
 * - the flags value 0 (unread, nothing else) lives only in the "unread" index row;
 * - the recipients are one list per message (`messageRecipientLists`);
 * - recipients with flags 0 of a message newer than the unread watermark hold their
 *   "unread" row implicitly, through that list; `writeDeferredUnreadRows` (run in the
 *   background, see src/actions/unread_rows.ts) later writes those rows for many
 *   messages at once, one run record per user and batch (see UNREAD_RUN), and then
 *   advances the watermark.
 * Readers of the "unread" index merge the three forms (`unreadRows`, `getUserFlags`,
 * `userMessageIds`); a row that exists in two forms is one row.
 */

/** Zulip's UserMessage flag bits (the names are the API's flag strings). */
export const MessageFlag = {
  read: 1,
  starred: 2,
  collapsed: 4,
  mentioned: 8,
  stream_wildcard_mentioned: 16,
  topic_wildcard_mentioned: 32,
  has_alert_word: 64,
  historical: 128,
} as const;
export type FlagName = keyof typeof MessageFlag;
export const FLAG_NAMES = Object.keys(MessageFlag) as FlagName[];

/** Names the API shows: the two wildcard bits both read as `wildcard_mentioned`. */
export function flagList(bits: number): string[] {
  const out: string[] = [];
  for (const name of FLAG_NAMES) {
    if (!(bits & MessageFlag[name])) continue;
    if (name === "stream_wildcard_mentioned" || name === "topic_wildcard_mentioned") {
      if (!out.includes("wildcard_mentioned")) out.push("wildcard_mentioned");
    } else out.push(name);
  }
  return out;
}

export const MENTION_BITS = MessageFlag.mentioned | MessageFlag.stream_wildcard_mentioned | MessageFlag.topic_wildcard_mentioned;

export interface Reaction {
  emoji_name: string;
  emoji_code: string;
  reaction_type: "unicode_emoji" | "realm_emoji" | "zulip_extra_emoji";
  user_id: number;
}

export interface EditHistoryEntry {
  user_id: number | null;
  timestamp: number;
  prev_content?: string;
  prev_rendered_content?: string;
  prev_rendered_content_version?: number;
  prev_topic?: string;
  topic?: string;
  prev_stream?: number;
  stream?: number;
}

/** Zulip's SubMessage: widget state attached to a message (the first one, from the sender, says which widget). */
export interface Submessage {
  id: number;
  message_id: number;
  sender_id: number;
  msg_type: string;
  /** JSON text, kept exactly as sent. */
  content: string;
}

export interface MessageRecord {
  id: number;
  sender_id: number;
  type: "stream" | "private";
  /** Channel messages only. */
  channel_id: number | null;
  /** "" for direct messages (the API still shows `subject: ""`). */
  topic: string;
  /** Direct messages only: every participant, sorted, the sender included. */
  dm_user_ids: number[] | null;
  recipient_id: number;
  content: string;
  rendered_content: string;
  timestamp: number;
  client: string;
  is_me_message: boolean;
  has_link: boolean;
  has_image: boolean;
  has_attachment: boolean;
  reactions: Reaction[];
  /** In ID order. */
  submessages: Submessage[];
  /** Most recent first, as the API lists it. */
  edit_history: EditHistoryEntry[];
  last_edit_timestamp: number | null;
  last_moved_timestamp: number | null;
}

export const topicKey = (topic: string) => topic.toLowerCase();
/** Zulip marks a topic resolved by prefixing its name with this. */
export const RESOLVED_TOPIC_PREFIX = "✔ ";
/**
 * The most people in one direct-message conversation: its member list is part of
 * index keys, which LMDB caps at 1978 bytes (200 IDs of 7 digits fit).
 */
export const MAX_DM_PARTICIPANTS = 200;

export const conversationKey = (userIds: readonly number[]) => [...new Set(userIds)].sort((a, b) => a - b).join(",");

/** Index rows derived from flags: which `userMessageIndex` rows a flags value implies. */
function flagIndexes(bits: number, isDm: boolean): string[] {
  const out: string[] = [];
  if (!(bits & MessageFlag.read)) out.push("unread");
  if (bits & MessageFlag.starred) out.push("starred");
  if (bits & MENTION_BITS) out.push("mentioned");
  if (bits & MessageFlag.has_alert_word) out.push("alerted");
  if (isDm) out.push("dm");
  return out;
}

/** Lower-cased words of a text: what full-text search matches, by word or prefix. */
export function searchWords(text: string): string[] {
  const words = text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  return [...new Set(words.filter((w) => w.length <= 60))];
}

function indexTerms(message: MessageRecord): string[] {
  return [...new Set([...searchWords(message.content), ...searchWords(message.topic)])];
}

export function getMessage(store: Store, id: number): MessageRecord | undefined {
  return store.dbs.messages.get(id) as MessageRecord | undefined;
}

/** A user's flags for a message, or undefined when they hold no row for it. */
export function getUserFlags(store: Store, userId: number, messageId: number): number | undefined {
  const bits = store.dbs.userMessages.get([userId, messageId]) as number | undefined;
  if (bits !== undefined) return bits;
  if (store.dbs.userMessageIndex.doesExist([userId, "unread", messageId])) return 0;
  if (unreadRunHolding(store, userId, messageId)) return 0;
  if (messageId <= unreadWatermark(store)) return undefined;
  const pending = pendingIndex(store).byUser.get(userId);
  if (!pending) return undefined;
  const at = firstAbove(pending, messageId - 1);
  return pending[at] === messageId && listHolds(recipientList(store, messageId), userId) ? 0 : undefined;
}

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

/** Binary search in a sorted recipient list. */
function listHolds(list: readonly number[] | undefined, userId: number): boolean {
  return list !== undefined && list[firstAbove(list, userId - 1)] === userId;
}

/**
 * Per store, each user's messages past the watermark that they may hold implicitly,
 * ascending: without it, every read of a user's unread state would decode every
 * pending recipient list, theirs or not. It may hold more than is true (a send rolled
 * back, a user removed since): entries are checked against the list before use. It
 * never holds less: sends add to it inside their transaction, and it is rebuilt from
 * the lists at first use; entries leave only when the watermark passes them.
 */
interface PendingIndex {
  watermark: number;
  byUser: Map<number, number[]>;
}

/**
 * The decoded recipient lists of messages past the watermark, shared by every user's
 * reads of implicit rows: each read checks the user against the lists of their pending
 * messages, and decoding every list (1,000 IDs for a 1,000-member channel) for every
 * user made a register ~4 ms slower per 500 pending messages. Any change to a list
 * drops them all (recipientsChanged); the watermark's advance prunes them with the
 * pending index. Main thread only: the worker reads lists straight from the store.
 */
const pendingLists = new StoreCache<number, readonly number[] | undefined>();
const pendingIndexes = new WeakMap<Store, PendingIndex>();

function pendingIndex(store: Store): PendingIndex {
  const watermark = unreadWatermark(store);
  let index = pendingIndexes.get(store);
  if (!index) {
    index = { watermark, byUser: new Map() };
    for (const { key, value } of store.dbs.messageRecipientLists.getRange({ start: watermark + 1, end: Number.MAX_SAFE_INTEGER })) {
      for (const userId of value as number[]) appendPending(index, userId, key as number);
    }
    // Kept only when built from committed data (see loadPendingUnreadIndex); built inside
    // a transaction, it serves that read alone, and the next one outside builds it again.
    if (!store.inTransaction) pendingIndexes.set(store, index);
  } else if (index.watermark < watermark && !store.inTransaction) {
    // Pruned only on committed data: inside a transaction the watermark read may be
    // the batch's own uncommitted move, and a rollback would leave the index short.
    for (const [userId, ids] of index.byUser) {
      const rest = ids.slice(firstAbove(ids, watermark));
      if (rest.length === 0) index.byUser.delete(userId);
      else index.byUser.set(userId, rest);
    }
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
}

function appendPending(index: PendingIndex, userId: number, messageId: number): void {
  const ids = index.byUser.get(userId);
  if (!ids) index.byUser.set(userId, [messageId]);
  else if (ids[ids.length - 1] < messageId) ids.push(messageId);
  else {
    // IDs a rolled-back batch gave out come again: keep the list sorted and without repeats.
    const at = firstAbove(ids, messageId - 1);
    if (ids[at] !== messageId) ids.splice(at, 0, messageId);
  }
}

/** The position of the first ID above `id` in an ascending list. */
function firstAbove(ids: ArrayLike<number>, id: number): number {
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
 * Messages past the watermark that the user holds a row for through the recipient
 * list alone, walking from `from` (inclusive); with `unreadOnly`, those they have not read.
 */
function* implicitRowIds(store: Store, userId: number, from: number, direction: "older" | "newer", unreadOnly: boolean): Generator<number> {
  const index = pendingIndex(store);
  const ids = index.byUser.get(userId);
  if (!ids) return;
  const check = (id: number) =>
    id > index.watermark &&
    listHolds(pendingLists.get(store, id, () => recipientList(store, id)), userId) &&
    !(unreadOnly && ((store.dbs.userMessages.get([userId, id]) as number | undefined) ?? 0) & MessageFlag.read);
  // A copy: a send during the walk must not shift it.
  const snapshot = ids.slice();
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
function* unreadRows(store: Store, userId: number, from: number, direction: "older" | "newer"): Generator<IndexRow> {
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

type IndexRow = { id: number; value: unknown };

/** IDs of the user's unread messages from `from` (inclusive), written, run and implicit rows merged. */
export function* unreadMessageIds(store: Store, userId: number, from: number, direction: "older" | "newer"): Generator<number> {
  yield* mergeIds(
    [idsInRange(store, "userMessageIndex", [userId, "unread"], from, direction), unreadRunIds(store, userId, from, direction), implicitRowIds(store, userId, from, direction, true)],
    direction,
  );
}

/**
 * Unread runs: the background job writes a user's "unread" rows for one batch as one
 * run instead of a row per message: two puts per user and batch instead of ~25 (50
 * messages a second to 1,000 users: 4,000 puts a second instead of 50,000). A run is
 * two records in `userMessageIndex`: `[userId, UNREAD_RUN, batchStart]` → its message
 * IDs, ascending, and where each one's location is in the other record (see Run:
 * bytes a lookup binary-searches without decoding), and
 * `[userId, UNREAD_RUN_PLACES, batchStart]` → the distinct locations, read only by
 * what needs them (unread counts by conversation). A run's IDs
 * are all at least its start, and the runs of one user cover disjoint spans (one per
 * batch), so the run that may hold a message is the one with the greatest start not
 * above it.
 *
 * A run entry means exactly what a written "unread" row means, and leaves as one
 * does: whatever removes a user's "unread" row for a message (reading it, losing it,
 * its deletion: writeFlags, removeFlags) takes it out of the run, and a move updates
 * its location there (relocateUnreadRows). A message is never both in a run and in a
 * written "unread" row: the job skips messages with a row, and a message leaves the
 * run before a new row can be written for it.
 */
const UNREAD_RUN = "unreadBatch";
const UNREAD_RUN_PLACES = "unreadBatchPlaces";
/**
 * A batch's messages for one user are split into runs of at most this many: taking a
 * message out rewrites its run, and a user reading a backlog message by message
 * rewrites it each time. (Changes to many messages at once gather their removals and
 * rewrite each run once: deleting 500 messages of 1,000 recipients takes ~1.0 s,
 * against ~1.1 s with a row per message and 15.7 s rewriting a 500-ID run per
 * message and recipient.)
 */
const RUN_MAX_IDS = 64;

/**
 * A run as stored: its IDs, then for each the position of its location in the run's
 * places, as float64 in the machine's byte order (every platform Hearth builds for is
 * little-endian). Taking a message out rewrites this record alone; the places, a
 * batch's few conversations, stay as they are.
 */
interface Run {
  start: number;
  ids: Float64Array;
  placeAt: Float64Array;
}

function encodeRun(ids: ArrayLike<number>, placeAt: ArrayLike<number>): Buffer {
  const values = new Float64Array(ids.length * 2);
  values.set(ids);
  values.set(placeAt, ids.length);
  return Buffer.from(values.buffer);
}

function decodeRun(start: number, value: unknown): Run {
  const bytes = value as Uint8Array;
  // Copied: lmdb-js reuses its read buffer, and a Float64Array view needs 8-byte alignment.
  const values = new Float64Array(bytes.length / 8);
  new Uint8Array(values.buffer).set(bytes);
  const count = values.length / 2;
  return { start, ids: values.subarray(0, count), placeAt: values.subarray(count) };
}

/** The user's runs from the one that may hold `from`, in the given direction. */
function* userRuns(store: Store, userId: number, from: number, direction: "older" | "newer"): Generator<Run> {
  let after = from;
  for (const { key, value } of store.dbs.userMessageIndex.getRange({ start: [userId, UNREAD_RUN, from], end: [userId, UNREAD_RUN, -1], reverse: true, limit: direction === "older" ? undefined : 1 })) {
    const start = (key as [number, string, number])[2];
    yield decodeRun(start, value);
    after = start;
  }
  if (direction === "older") return;
  for (const { key, value } of store.dbs.userMessageIndex.getRange({ start: [userId, UNREAD_RUN, Math.max(after, from) + 1], end: [userId, UNREAD_RUN, Number.MAX_SAFE_INTEGER] })) {
    yield decodeRun((key as [number, string, number])[2], value);
  }
}

/**
 * Each user's run last looked up, decoded: a walk over a user's messages (GET
 * /messages) asks for the flags of message after message, mostly within one run, and
 * a cursor per message made a 50-message narrow ~0.35 ms slower
 * (scripts/bench-messages.ts). Writes to runs on this thread drop it (runsChanged);
 * reads inside a transaction, which writes follow, never use it. The worker's writes go
 * to runs of later messages, or, for a batch planned again, to the same messages.
 */
const lastRunRead = new StoreCache<number, Run | undefined>();

function runsChanged(store: Store): void {
  lastRunRead.invalidate(store);
}

/** The run holding a user's "unread" row for a message, and the message's position in it. */
function unreadRunHolding(store: Store, userId: number, messageId: number): (Run & { at: number }) | undefined {
  // A run spans from its start to its last ID: no other run of the user starts inside it.
  const spans = (run: Run | undefined) => run !== undefined && run.start <= messageId && messageId <= run.ids[run.ids.length - 1];
  const run = lastRunRead.getFitting(store, userId, spans, () => {
    for (const found of userRuns(store, userId, messageId, "older")) return found;
    return undefined;
  });
  if (!run || run.start > messageId) return undefined;
  const at = firstAbove(run.ids, messageId - 1);
  return run.ids[at] === messageId ? { ...run, at } : undefined;
}

function runPlaces(store: Store, userId: number, start: number): MessageLocation[] {
  return (store.dbs.userMessageIndex.get([userId, UNREAD_RUN_PLACES, start]) as MessageLocation[] | undefined) ?? [];
}

/** Removes a user's runs starting from `from` to `to` (inclusive). Call inside `store.commit`. */
function removeRuns(store: Store, userId: number, from: number, to: number): void {
  runsChanged(store);
  for (const key of store.dbs.userMessageIndex.getKeys({ start: [userId, UNREAD_RUN, from], end: [userId, UNREAD_RUN, to + 1] })) {
    const start = (key as [number, string, number])[2];
    store.dbs.userMessageIndex.remove([userId, UNREAD_RUN, start]);
    store.dbs.userMessageIndex.remove([userId, UNREAD_RUN_PLACES, start]);
  }
}

/** Writes a user's run (non-empty). Call inside `store.commit`. */
function putRun(store: Store, userId: number, start: number, ids: ArrayLike<number>, locations: MessageLocation[]): void {
  runsChanged(store);
  const places: MessageLocation[] = [];
  const placeAt = locations.map((location) => placeIndex(places, location));
  store.dbs.userMessageIndex.put([userId, UNREAD_RUN, start], encodeRun(ids, placeAt));
  store.dbs.userMessageIndex.put([userId, UNREAD_RUN_PLACES, start], places);
}

/** The position of a location in a run's places, added when new. */
function placeIndex(places: MessageLocation[], location: MessageLocation): number {
  // The job's locations are shared objects, one per message of the batch: most are found by identity.
  const same = places.indexOf(location);
  if (same !== -1) return same;
  const key = JSON.stringify(location);
  const at = places.findIndex((place) => JSON.stringify(place) === key);
  return at !== -1 ? at : places.push(location) - 1;
}

/** Where a user's written "unread" row for a message (its own or in a run) says the message is; undefined without one. */
export function writtenUnreadLocation(store: Store, userId: number, messageId: number): MessageLocation | undefined {
  const own = store.dbs.userMessageIndex.get([userId, "unread", messageId]) as MessageLocation | undefined;
  if (own !== undefined) return own;
  const inRun = unreadRunHolding(store, userId, messageId);
  return inRun && runPlaces(store, userId, inRun.start)[inRun.placeAt[inRun.at]];
}

/**
 * "unread" rows held in runs to take out, by user: gathered over all the messages of
 * a change, then written once per run (applyRunRemovals), since taking a message out
 * rewrites its run.
 */
type RunRemovals = Map<number, number[]>;

/**
 * Visits, once each, the user's runs that span some of these messages, with those
 * messages (ascending IDs in, in any order): a change to many messages rewrites each
 * run once.
 */
function forEachRunSpanning(store: Store, userId: number, messageIds: Iterable<number>, visit: (run: Run, spanned: number[]) => void): void {
  const ids = [...new Set(messageIds)].sort((x, y) => x - y);
  if (ids.length === 0) return;
  // One walk over the runs from the first ID's to the last ID (not a lookup per ID: most
  // IDs of a large change are in no run); collected first, since `visit` rewrites runs.
  const runs: Run[] = [];
  for (const run of userRuns(store, userId, ids[0], "newer")) {
    if (run.start > ids[ids.length - 1]) break;
    runs.push(run);
  }
  let i = 0;
  for (const run of runs) {
    const last = run.ids[run.ids.length - 1];
    while (i < ids.length && ids[i] < run.start) i++;
    const spanned: number[] = [];
    for (; i < ids.length && ids[i] <= last; i++) spanned.push(ids[i]);
    if (spanned.length > 0) visit(run, spanned);
  }
}

/** Takes the gathered messages out of the users' runs that hold them. Call inside `store.commit`. */
function applyRunRemovals(store: Store, removals: RunRemovals): void {
  for (const [userId, messageIds] of removals) forEachRunSpanning(store, userId, messageIds, (run, gone) => rewriteRunWithout(store, userId, run, new Set(gone)));
}

function rewriteRunWithout(store: Store, userId: number, run: Run, gone: ReadonlySet<number>): void {
  const kept: number[] = [];
  for (let i = 0; i < run.ids.length; i++) if (!gone.has(run.ids[i])) kept.push(i);
  if (kept.length === run.ids.length) return;
  if (kept.length === 0) {
    removeRuns(store, userId, run.start, run.start);
    return;
  }
  // Rewritten through putRun so places no kept entry uses are dropped.
  const places = runPlaces(store, userId, run.start);
  putRun(
    store,
    userId,
    run.start,
    kept.map((i) => run.ids[i]),
    kept.map((i) => places[run.placeAt[i]]),
  );
}

/** Points the user's run entries for moved messages (message ID → its new place) at their new places, each run rewritten once. */
function relocateInUnreadRuns(store: Store, userId: number, moved: ReadonlyMap<number, MessageLocation>): void {
  forEachRunSpanning(store, userId, moved.keys(), (run, spanned) => {
    const places = runPlaces(store, userId, run.start);
    const locations = Array.from(run.placeAt, (at) => places[at]);
    let changed = false;
    for (const id of spanned) {
      const at = firstAbove(run.ids, id - 1);
      if (run.ids[at] !== id) continue;
      locations[at] = moved.get(id)!;
      changed = true;
    }
    // Rewritten through putRun so places no entry uses any more are dropped.
    if (changed) putRun(store, userId, run.start, run.ids, locations);
  });
}

/** A user's run rows with their locations, walking from `from` (inclusive) in the given direction. */
function* unreadRunRows(store: Store, userId: number, from: number, direction: "older" | "newer"): Generator<IndexRow> {
  for (const run of userRuns(store, userId, from, direction)) {
    const places = runPlaces(store, userId, run.start);
    for (const i of runPositions(run.ids, from, direction)) yield { id: run.ids[i], value: places[run.placeAt[i]] };
  }
}

function* unreadRunIds(store: Store, userId: number, from: number, direction: "older" | "newer"): Generator<number> {
  for (const run of userRuns(store, userId, from, direction)) for (const i of runPositions(run.ids, from, direction)) yield run.ids[i];
}

/** Positions in an ascending list from `from` (inclusive) in the given direction. */
function* runPositions(ids: ArrayLike<number>, from: number, direction: "older" | "newer"): Generator<number> {
  if (direction === "older") for (let i = firstAbove(ids, from) - 1; i >= 0; i--) yield i;
  else for (let i = firstAbove(ids, from - 1); i < ids.length; i++) yield i;
}

/**
 * What one batch of the background job covers: the channel messages past the
 * watermark, with their recipient lists and locations read once. The job writes the
 * batch in many small commits; `recipientsVersion` says when a commit must read them
 * again (a list or a location changed since).
 */
export interface DeferredUnreadBatch {
  /** The oldest message it may cover: the key of the users' runs it writes (see UNREAD_RUN). */
  start: number;
  /** The newest message covered: where the watermark moves once all is written. */
  target: number;
  version: number;
  lists: Map<number, number[]>;
  /** null: a direct message (its rows were written when sent) or a message since deleted. */
  locations: Map<number, MessageLocation | null>;
  /** Decided by the batch's first commit: whether users may hold runs of an earlier attempt (see UNREAD_BATCH_IN_PROGRESS). */
  removesEarlierRuns?: boolean;
}

/**
 * The start of a batch some of whose commits are written and whose watermark move is
 * not (0: none). A batch planned again from that start (after a crash or a failed
 * commit) must first remove the runs the earlier attempt wrote, which may have other
 * boundaries; any other batch has none to remove, and skips the range read per user
 * that finding them costs (inside a write transaction lmdb-js opens a new cursor for
 * each: ~5–10 µs, a fifth of a batch's CPU for 1,000 users). Absent in data folders
 * from before this mark: their first batch removes, as every batch used to.
 */
const UNREAD_BATCH_IN_PROGRESS = ["unreadBatchInProgress"];

/**
 * Moves whenever a message's recipient list or location changes, inside the
 * transaction that changes it. Stored, not kept in memory: the job runs on a worker
 * thread, which sees the main thread's writes only through the store.
 */
const RECIPIENTS_VERSION = ["recipientsVersion"];
const recipientsVersion = (store: Store) => (store.dbs.meta.get(RECIPIENTS_VERSION) as number | undefined) ?? 0;
export function recipientsChanged(store: Store): void {
  store.dbs.meta.put(RECIPIENTS_VERSION, recipientsVersion(store) + 1);
  pendingLists.invalidate(store);
}

/** Plans the next batch (at most `limit` messages), or null when nothing is pending. */
export function planDeferredUnreadRows(store: Store, limit: number): DeferredUnreadBatch | null {
  const start = unreadWatermark(store) + 1;
  const batch: DeferredUnreadBatch = { start, target: 0, version: recipientsVersion(store), lists: new Map(), locations: new Map() };
  for (const { key, value } of store.dbs.messageRecipientLists.getRange({ start, end: Number.MAX_SAFE_INTEGER, limit })) {
    batch.lists.set(key as number, value as number[]);
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
      putRun(store, userId, i === 0 ? batch.start : runIds[i], runIds.slice(i, i + RUN_MAX_IDS), places.slice(i, i + RUN_MAX_IDS));
    }
  }
  if (advance && batch.target > unreadWatermark(store)) {
    store.dbs.meta.put(UNREAD_WATERMARK, batch.target);
    store.dbs.meta.put(UNREAD_BATCH_IN_PROGRESS, 0);
  }
}

/** Stable recipient IDs, allocated on first use (Zulip's Recipient table). */
export function recipientIdFor(store: Store, key: string): number {
  const existing = store.dbs.recipients.get(key) as number | undefined;
  if (existing !== undefined) return existing;
  const id = store.nextId("recipient");
  store.dbs.recipients.put(key, id);
  return id;
}

function putLocation(store: Store, m: MessageRecord): void {
  if (m.type === "stream") {
    const key = topicKey(m.topic);
    store.dbs.channelMessages.put([m.channel_id, m.id], true);
    store.dbs.topicMessages.put([m.channel_id, key, m.id], true);
    const topic = store.dbs.topics.get([m.channel_id, key]) as { name: string; max_id: number } | undefined;
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
    refreshTopic(store, m.channel_id!, key);
  } else {
    store.dbs.dmMessages.remove([conversationKey(m.dm_user_ids!), m.id]);
  }
}

/** Recomputes a topic's max_id after messages left it; drops the topic when empty. */
function refreshTopic(store: Store, channelId: number, key: string): void {
  let newest: number | undefined;
  for (const k of store.dbs.topicMessages.getKeys({ start: [channelId, key, Infinity], end: [channelId, key, 0], reverse: true, limit: 1 })) {
    newest = (k as [number, string, number])[2];
  }
  if (newest === undefined) {
    store.dbs.topics.remove([channelId, key]);
    return;
  }
  const name = getMessage(store, newest)?.topic ?? key;
  store.dbs.topics.put([channelId, key], { name, max_id: newest });
}

function putTerms(store: Store, m: MessageRecord): void {
  for (const term of indexTerms(m)) store.dbs.searchTerms.put([term, m.id], true);
}
function removeTerms(store: Store, m: MessageRecord): void {
  for (const term of indexTerms(m)) store.dbs.searchTerms.remove([term, m.id]);
}

/**
 * Writes a new message: content once, the recipient list, and rows for the
 * recipients whose flags are not 0 (the sender, mentioned users). Channel
 * recipients with flags 0 hold their "unread" row implicitly until the background
 * job writes it; direct messages (a handful of recipients) get theirs at once.
 */
export function insertMessage(store: Store, m: MessageRecord, flagsByUser: Map<number, number>): void {
  // The first message written this way: everything before it has its rows.
  if (store.dbs.meta.get(UNREAD_WATERMARK) === undefined) store.dbs.meta.put(UNREAD_WATERMARK, m.id - 1);
  store.dbs.messages.put(m.id, m);
  putLocation(store, m);
  store.dbs.senderMessages.put([m.sender_id, m.id], true);
  putTerms(store, m);
  const index = m.type === "stream" ? pendingIndex(store) : null;
  for (const [userId, bits] of flagsByUser) {
    if (bits !== 0 || !index) writeFlags(store, userId, m, undefined, bits);
    else appendPending(index, userId, m.id);
  }
  store.dbs.messageRecipientLists.put(m.id, [...flagsByUser.keys()].sort((a, b) => a - b));
}

function recipientList(store: Store, messageId: number): number[] | undefined {
  return store.dbs.messageRecipientLists.get(messageId) as number[] | undefined;
}

function updateRecipientList(store: Store, m: MessageRecord, change: (ids: readonly number[]) => number[]): void {
  store.dbs.messageRecipientLists.put(m.id, change(messageRecipientIds(store, m)));
  recipientsChanged(store);
}

/**
 * Where a message sits, kept in its "unread" and "dm" index rows so unread counts
 * and recent conversations are computed without reading message content:
 * `[channelId, topic]` for channel messages, the conversation key for direct ones.
 */
export type MessageLocation = [number, string] | string;

export function messageLocation(m: MessageRecord): MessageLocation {
  return m.type === "stream" ? [m.channel_id!, m.topic] : conversationKey(m.dm_user_ids!);
}

function indexValue(index: string, m: MessageRecord): unknown {
  return index === "unread" || index === "dm" ? messageLocation(m) : true;
}

/** Sets one user's flags for a message (a new row when `before` is undefined), keeping the index rows in step. */
export function setUserFlags(store: Store, userId: number, m: MessageRecord, before: number | undefined, after: number): void {
  setUserFlagsOfMessages(store, userId, [{ message: m, before, after }]);
}

/** Sets one user's flags on many messages (distinct): the runs that held their "unread" rows are rewritten once each. */
export function setUserFlagsOfMessages(store: Store, userId: number, changes: readonly { message: MessageRecord; before: number | undefined; after: number }[]): void {
  const runRemovals: RunRemovals = new Map();
  for (const { message, before, after } of changes) {
    if (before === undefined) addUserRows(store, message, [userId], after);
    else writeFlags(store, userId, message, before, after, runRemovals);
  }
  applyRunRemovals(store, runRemovals);
}

/** Gives users who hold no row for a message one with these flags; the recipient list is rewritten once. */
export function addUserRows(store: Store, m: MessageRecord, userIds: readonly number[], bits: number): void {
  if (userIds.length === 0) return;
  for (const userId of userIds) writeFlags(store, userId, m, undefined, bits);
  updateRecipientList(store, m, (ids) => [...new Set([...ids, ...userIds])].sort((a, b) => a - b));
}

/** Removes an index row; an "unread" row may be held in a run instead (see UNREAD_RUN). */
function removeIndexRow(store: Store, userId: number, index: string, messageId: number, runRemovals: RunRemovals): void {
  const key = [userId, index, messageId];
  if (index === "unread" && !store.dbs.userMessageIndex.doesExist(key)) appendTo(runRemovals, userId, messageId);
  else store.dbs.userMessageIndex.remove(key);
}

/**
 * A flags row and its index rows, leaving the recipient list alone; an "unread" row
 * held in a run is left to `runRemovals`. New rows (`before` undefined) remove nothing.
 */
function writeFlags(store: Store, userId: number, m: MessageRecord, before: number | undefined, after: number, runRemovals?: RunRemovals): void {
  const isDm = m.type === "private";
  const old = before === undefined ? [] : flagIndexes(before, isDm);
  const next = flagIndexes(after, isDm);
  for (const index of old) if (!next.includes(index)) removeIndexRow(store, userId, index, m.id, runRemovals!);
  for (const index of next) if (!old.includes(index)) store.dbs.userMessageIndex.put([userId, index, m.id], indexValue(index, m));
  // Flags 0 are implied by the "unread" row just written (see getUserFlags).
  if (after !== 0) store.dbs.userMessages.put([userId, m.id], after);
  else if (before !== undefined) store.dbs.userMessages.remove([userId, m.id]);
}

/**
 * The users holding a row for a message (its recipients). Messages stored before
 * recipient lists existed have none: their holders are found by checking each user
 * who could hold one.
 */
export function messageRecipientIds(store: Store, m: MessageRecord): readonly number[] {
  const listed = recipientList(store, m.id);
  if (listed) return listed;
  const candidates = m.type === "private" ? m.dm_user_ids! : [...allUsers(store)].map((u) => u.id);
  return candidates.filter((id) => getUserFlags(store, id, m.id) !== undefined).sort((a, b) => a - b);
}

/** The users holding a row for a message, with their flags (0 for a bare "unread" row). */
export function messageRecipientFlags(store: Store, m: MessageRecord): Map<number, number> {
  // A holder without a flags row has flags 0 (the "unread" row alone).
  return new Map(messageRecipientIds(store, m).map((id) => [id, (store.dbs.userMessages.get([id, m.id]) as number | undefined) ?? 0]));
}

/** After a move: the unread rows of the messages' recipients (user → their flags) point at the messages' new places. */
export function relocateUnreadRows(store: Store, moved: readonly { message: MessageRecord; holders: ReadonlyMap<number, number> }[]): void {
  const inRuns = new Map<number, Map<number, MessageLocation>>();
  for (const { message: m, holders } of moved) {
    // One object per message: the runs' place lists then match it by identity, not by JSON.
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

/** A user's index rows with their values ("unread" ones written or implicit), walking from `from` (inclusive) in the given direction. */
export function indexRows(store: Store, userId: number, index: string, from: number, direction: "older" | "newer"): Generator<{ id: number; value: unknown }> {
  return index === "unread" ? unreadRows(store, userId, from, direction) : writtenIndexRows(store, userId, index, from, direction);
}

function* writtenIndexRows(store: Store, userId: number, index: string, from: number, direction: "older" | "newer"): Generator<{ id: number; value: unknown }> {
  const range =
    direction === "older"
      ? { start: [userId, index, from], end: [userId, index, -1], reverse: true }
      : { start: [userId, index, from], end: [userId, index, Number.MAX_SAFE_INTEGER] };
  for (const { key, value } of store.dbs.userMessageIndex.getRange(range as any)) {
    yield { id: (key as unknown as [number, string, number])[2], value };
  }
}

/** Rewrites a message whose content, topic or channel changed, moving its index rows. */
export function replaceMessage(store: Store, before: MessageRecord, after: MessageRecord): void {
  const moved = before.channel_id !== after.channel_id || before.topic !== after.topic;
  if (moved) {
    removeLocation(store, before);
    recipientsChanged(store);
  }
  if (before.content !== after.content || before.topic !== after.topic) {
    removeTerms(store, before);
    putTerms(store, after);
  }
  store.dbs.messages.put(after.id, after);
  if (moved) putLocation(store, after);
}

/** Removes users' flags rows (and index rows) for messages they can no longer see (user → their flags); each recipient list is rewritten once. */
export function removeUserRows(store: Store, changes: readonly { message: MessageRecord; rows: ReadonlyMap<number, number> }[]): void {
  const runRemovals: RunRemovals = new Map();
  for (const { message: m, rows } of changes) {
    if (rows.size === 0) continue;
    for (const [userId, bits] of rows) removeFlags(store, userId, m, bits, runRemovals);
    updateRecipientList(store, m, (ids) => ids.filter((id) => !rows.has(id)));
  }
  applyRunRemovals(store, runRemovals);
}

function removeFlags(store: Store, userId: number, m: MessageRecord, bits: number, runRemovals: RunRemovals): void {
  for (const index of flagIndexes(bits, m.type === "private")) removeIndexRow(store, userId, index, m.id, runRemovals);
  store.dbs.userMessages.remove([userId, m.id]);
}

/** Deletes messages with every row that refers to them (message → its recipients' flags). */
export function deleteMessageRows(store: Store, messages: readonly { message: MessageRecord; recipients: ReadonlyMap<number, number> }[]): void {
  const runRemovals: RunRemovals = new Map();
  for (const { message: m, recipients } of messages) {
    for (const [userId, bits] of recipients) removeFlags(store, userId, m, bits, runRemovals);
    store.dbs.messageRecipientLists.remove(m.id);
    removeTerms(store, m);
    store.dbs.senderMessages.remove([m.sender_id, m.id]);
    store.dbs.messages.remove(m.id);
    removeLocation(store, m);
  }
  if (messages.length > 0) recipientsChanged(store);
  applyRunRemovals(store, runRemovals);
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
 * Message IDs containing a word that starts with `prefix`, in ID order from `from`:
 * a lazy k-way merge of each matching word's ordered rows, so the newest matches
 * come first without reading every match.
 */
export function* idsForTermPrefix(store: Store, prefix: string, from: number, direction: "older" | "newer"): Generator<number> {
  const terms = termsWithPrefix(store, prefix, 512);
  yield* mergeIds(terms.map((term) => idsInRange(store, "searchTerms", [term], from, direction)), direction);
}

export function topicsOfChannel(store: Store, channelId: number): { name: string; max_id: number }[] {
  const out: { name: string; max_id: number }[] = [];
  for (const { value } of store.dbs.topics.getRange({ start: [channelId], end: [channelId + 1] })) {
    out.push(value as { name: string; max_id: number });
  }
  return out.sort((a, b) => b.max_id - a.max_id);
}

export function newestMessageIdOf(store: Store, userId: number): number {
  for (const id of userMessageIds(store, userId, Number.MAX_SAFE_INTEGER, "older")) return id;
  return -1;
}

/**
 * The IDs of the messages a user holds a row for, from `from` (inclusive): the
 * flags rows merged with the "unread" rows that stand for flags 0, written or implicit.
 */
export function* userMessageIds(store: Store, userId: number, from: number, direction: "older" | "newer"): Generator<number> {
  yield* mergeIds(
    [
      idsInRange(store, "userMessages", [userId], from, direction),
      idsInRange(store, "userMessageIndex", [userId, "unread"], from, direction),
      unreadRunIds(store, userId, from, direction),
      implicitRowIds(store, userId, from, direction, false),
    ],
    direction,
  );
}

/** The union of ID streams that each run in `direction`, in that order, without repeats. */
export function mergeIds(streams: Iterator<number>[], direction: "older" | "newer"): Generator<number> {
  return mergeBy(streams, (id) => id, direction);
}

/**
 * The union of streams whose items each run in `direction` by ID, in that order, without
 * repeats; of items with one ID, the first stream's. A caller that stops early (the
 * newest ID, a page of 50) ends this generator, which ends every stream: a range scan
 * left open keeps its read transaction, and with it LMDB's reader slot and the snapshot
 * that stops it reusing pages freed since (the data file grows, the reader table fills).
 */
function* mergeBy<T>(streams: Iterator<T>[], idOf: (item: T) => number, direction: "older" | "newer"): Generator<T> {
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
