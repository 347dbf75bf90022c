import type { Store } from "./db";
import { idsInRange, indexMessage, mergeIds, reindexMessage, unindexMessage, writtenIndexRows, type IndexRow } from "./message_indexes";
import { MENTION_BITS, MessageFlag, messageLocation, recipientList, type MessageRecord } from "./messages";
import { addImplicitUnreadRows, applyUnreadRemovals, UNREAD_WATERMARK, hasUnreadRow, initUnreadWatermark, putUnreadRow, recipientsChanged, removeUnreadRow, unreadIdStreams, unreadRows, type UnreadRemovals } from "./unread";
import { allUsers } from "./users";
import { StoreCache } from "./cache";
import { RecipientFlags } from "./recipient_flags";
import { initSearchWatermark } from "./search_terms";
import { recipientListRow } from "./shared_recipient_lists";

/**
 * Each recipient's rows for a message (Zulip's UserMessage), and the writes of a
 * message, which keep them in step with every other row that refers to it in one
 * transaction. All writers here run inside `store.commit`.
 *
 * A recipient holds a flags row, `userMessages` [userId, messageId] → flag bits, and
 * the `userMessageIndex` rows its flags imply ("unread", "starred", "mentioned",
 * "alerted", and "dm" for direct messages) for the narrows by flag. Flags 0 (unread,
 * nothing else) are not written as a flags row: the "unread" row, in any of its forms
 * (see the top of unread.ts), already says so. Each message lists the users holding
 * rows in one record (`messageRecipientLists`), which edits, reactions, moves and
 * deletion read instead of a row per user; messages sent to the same list share one
 * stored copy of it (shared_recipient_lists.ts).
 */

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

/** A user's flags for a message, or undefined when they hold no row for it. */
export function getUserFlags(store: Store, userId: number, messageId: number): number | undefined {
  const bits = store.dbs.userMessages.get([userId, messageId]) as number | undefined;
  if (bits !== undefined) return bits;
  return hasUnreadRow(store, userId, messageId) ? 0 : undefined;
}

/**
 * A user's flags for a message a walk of their "unread" rows (unreadMessageIds) just
 * gave: the flags row, else 0. Skips the look for the "unread" row getUserFlags makes
 * when there is no flags row, which the walk has already found.
 */
export function flagsOfUnread(store: Store, userId: number, messageId: number): number {
  return (store.dbs.userMessages.get([userId, messageId]) as number | undefined) ?? 0;
}

/**
 * A user's flags rows for the messages from `lo` to `hi`, read in one range scan, when
 * there are at most `max` of them; undefined when there are more. Rows are sparse for
 * unread messages (flags 0 are not written), dense where the user has read everything:
 * a walk asks for a batch of candidates' rows this way and, when they are dense, reads
 * each candidate's row instead.
 */
export function flagsRowsBetween(store: Store, userId: number, lo: number, hi: number, max: number): Map<number, number> | undefined {
  const rows = new Map<number, number>();
  for (const { key, value } of store.dbs.userMessages.getRange({ start: [userId, lo], end: [userId, hi + 1], limit: max + 1 })) {
    if (rows.size === max) return undefined;
    rows.set((key as unknown as [number, number])[1], value as number);
  }
  return rows;
}

/** getUserFlags with the user's flags rows around the message already read (flagsRowsBetween). */
export function userFlagsGivenRows(store: Store, userId: number, messageId: number, rows: ReadonlyMap<number, number>): number | undefined {
  const bits = rows.get(messageId);
  if (bits !== undefined) return bits;
  return hasUnreadRow(store, userId, messageId) ? 0 : undefined;
}

/**
 * Writes a new message: content once, the recipient list, and rows for the
 * recipients whose flags are not 0 (the sender, mentioned users). Channel
 * recipients with flags 0 hold their "unread" row implicitly until the background
 * job writes it; direct messages (a handful of recipients) get theirs at once. The
 * same job writes the message's search rows (search_terms.ts).
 */
export function insertMessage(store: Store, m: MessageRecord, flagsByUser: ReadonlyMap<number, number>): void {
  newestIds.invalidate(store);
  initUnreadWatermark(store, m.id);
  initSearchWatermark(store, m.id);
  store.dbs.messages.put(m.id, m);
  indexMessage(store, m);
  const flags = flagsByUser instanceof RecipientFlags ? flagsByUser : new RecipientFlags([...flagsByUser.keys()], 0).setAll(flagsByUser);
  if (m.type === "stream" && flags.common === 0) {
    // Most recipients' flags are 0: only the others are looked at one by one.
    for (const [userId, bits] of flags.exceptions) writeFlags(store, userId, m, undefined, bits);
    // Once for the message: the pending index keeps it with the others sent to the same list.
    if (flags.exceptions.size < flags.ids.length) addImplicitUnreadRows(store, m.id, flags.ids);
  } else {
    let implicit = false;
    for (const [userId, bits] of flags) {
      if (bits === 0 && m.type === "stream") implicit = true;
      else writeFlags(store, userId, m, undefined, bits);
    }
    if (implicit) addImplicitUnreadRows(store, m.id, flags.ids);
  }
  // A reference to the shared list when the channel's list is one already stored (shared_recipient_lists.ts).
  store.dbs.messageRecipientLists.put(m.id, recipientListRow(store, m.id, flags.ids));
}

/**
 * Writes a message with every recipient's rows written out, none left implicit: for
 * loading many messages at once (an import into a new data folder). Leaving channel
 * recipients' "unread" rows implicit, as a send does, keeps each in memory (the pending
 * index) until the background job writes them, which for a whole history is memory
 * that grows with it. Only valid while no message waits for deferred rows (the
 * watermark unset, so it follows the last message ID, or at the previous message).
 * `recipientIds` defaults to the users given rows (a bulk load passes more: those
 * whose rows it writes as runs).
 */
export function insertMessageWithRows(store: Store, m: MessageRecord, flagsByUser: ReadonlyMap<number, number>, recipientIds: Iterable<number> = flagsByUser.keys()): void {
  const watermark = store.dbs.meta.get(UNREAD_WATERMARK) as number | undefined;
  if (watermark !== undefined && watermark < m.id - 1) throw new Error("insertMessageWithRows: messages are waiting for their deferred unread rows");
  if (watermark !== undefined) store.dbs.meta.put(UNREAD_WATERMARK, m.id);
  newestIds.invalidate(store);
  store.dbs.messages.put(m.id, m);
  indexMessage(store, m, true);
  for (const [userId, bits] of flagsByUser) writeFlags(store, userId, m, undefined, bits);
  store.dbs.messageRecipientLists.put(m.id, recipientListRow(store, m.id, [...recipientIds].sort((a, b) => a - b)));
}

/**
 * One message's list changed: written inline for it alone. Never as a new shared list:
 * one may already exist under this message's ID (its send created it), and other
 * messages may refer to it.
 */
function updateRecipientList(store: Store, m: MessageRecord, change: (ids: readonly number[]) => number[]): void {
  store.dbs.messageRecipientLists.put(m.id, change(messageRecipientIds(store, m)));
  recipientsChanged(store);
}

/** Sets one user's flags for a message (a new row when `before` is undefined), keeping the index rows in step. */
export function setUserFlags(store: Store, userId: number, m: MessageRecord, before: number | undefined, after: number): void {
  setUserFlagsOfMessages(store, userId, [{ message: m, before, after }]);
}

/** Sets one user's flags on many messages (distinct): the runs that held their "unread" rows are rewritten once each. */
export function setUserFlagsOfMessages(store: Store, userId: number, changes: readonly { message: MessageRecord; before: number | undefined; after: number }[]): void {
  const unreadRemovals: UnreadRemovals = new Map();
  for (const { message, before, after } of changes) {
    if (before === undefined) addUserRows(store, message, [userId], after);
    else writeFlags(store, userId, message, before, after, unreadRemovals);
  }
  applyUnreadRemovals(store, unreadRemovals);
}

/** Gives users who hold no row for a message one with these flags; the recipient list is rewritten once. */
export function addUserRows(store: Store, m: MessageRecord, userIds: readonly number[], bits: number): void {
  if (userIds.length === 0) return;
  newestIds.invalidate(store);
  for (const userId of userIds) writeFlags(store, userId, m, undefined, bits);
  updateRecipientList(store, m, (ids) => [...new Set([...ids, ...userIds])].sort((a, b) => a - b));
}

function removeIndexRow(store: Store, userId: number, index: string, messageId: number, unreadRemovals: UnreadRemovals): void {
  if (index === "unread") removeUnreadRow(store, userId, messageId, unreadRemovals);
  else store.dbs.userMessageIndex.remove([userId, index, messageId]);
}

/**
 * A flags row and its index rows, leaving the recipient list alone; an "unread" row
 * held in a run is left to `unreadRemovals`. New rows (`before` undefined) remove nothing.
 */
function writeFlags(store: Store, userId: number, m: MessageRecord, before: number | undefined, after: number, unreadRemovals?: UnreadRemovals): void {
  const isDm = m.type === "private";
  const old = before === undefined ? [] : flagIndexes(before, isDm);
  const next = flagIndexes(after, isDm);
  for (const index of old) if (!next.includes(index)) removeIndexRow(store, userId, index, m.id, unreadRemovals!);
  for (const index of next) {
    if (old.includes(index)) continue;
    // "unread" and "dm" rows hold the message's place (MessageLocation); the others nothing.
    if (index === "unread") putUnreadRow(store, userId, m);
    else store.dbs.userMessageIndex.put([userId, index, m.id], index === "dm" ? messageLocation(m) : true);
  }
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

/** A user's index rows with their values ("unread" ones written or implicit), walking from `from` (inclusive) in the given direction. */
export function indexRows(store: Store, userId: number, index: string, from: number, direction: "older" | "newer"): Generator<IndexRow> {
  return index === "unread" ? unreadRows(store, userId, from, direction) : writtenIndexRows(store, userId, index, from, direction);
}

/** Rewrites a message whose content, topic or channel changed, moving its index rows. */
export function replaceMessage(store: Store, before: MessageRecord, after: MessageRecord): void {
  if (before.channel_id !== after.channel_id || before.topic !== after.topic) recipientsChanged(store);
  reindexMessage(store, before, after);
  store.dbs.messages.put(after.id, after);
}

/** Removes users' flags rows (and index rows) for messages they can no longer see (user → their flags); each recipient list is rewritten once. */
export function removeUserRows(store: Store, changes: readonly { message: MessageRecord; rows: ReadonlyMap<number, number> }[]): void {
  const unreadRemovals: UnreadRemovals = new Map();
  newestIds.invalidate(store);
  for (const { message: m, rows } of changes) {
    if (rows.size === 0) continue;
    for (const [userId, bits] of rows) removeFlags(store, userId, m, bits, unreadRemovals);
    updateRecipientList(store, m, (ids) => ids.filter((id) => !rows.has(id)));
  }
  applyUnreadRemovals(store, unreadRemovals);
}

function removeFlags(store: Store, userId: number, m: MessageRecord, bits: number, unreadRemovals: UnreadRemovals): void {
  for (const index of flagIndexes(bits, m.type === "private")) removeIndexRow(store, userId, index, m.id, unreadRemovals);
  store.dbs.userMessages.remove([userId, m.id]);
}

/** Deletes messages with every row that refers to them (message → its recipients' flags). */
export function deleteMessageRows(store: Store, messages: readonly { message: MessageRecord; recipients: ReadonlyMap<number, number> }[]): void {
  const unreadRemovals: UnreadRemovals = new Map();
  newestIds.invalidate(store);
  for (const { message: m, recipients } of messages) {
    for (const [userId, bits] of recipients) removeFlags(store, userId, m, bits, unreadRemovals);
    // A shared list the row referred to stays: other messages may share it (shared_recipient_lists.ts).
    store.dbs.messageRecipientLists.remove(m.id);
    store.dbs.messages.remove(m.id);
    unindexMessage(store, m);
  }
  if (messages.length > 0) recipientsChanged(store);
  applyUnreadRemovals(store, unreadRemovals);
}

/**
 * Each user's newest message ID while no message is written or loses recipients: the
 * merge of a user's row streams behind it was most of the cost of GET /users/me
 * (docs/benchmarks.md). Every writer above that adds or removes a user's rows for a
 * message invalidates it; flag changes keep the set of messages a user holds.
 */
const newestIds = new StoreCache<number, number>();
/** Moves whenever a user's newest message ID may have changed (for caches derived from it). */
export const newestIdsVersion = () => newestIds.version;

/** The newest message a user holds a row for (-1: none), register's `max_message_id`. */
export function newestMessageIdOf(store: Store, userId: number): number {
  return newestIds.get(store, userId, () => {
    for (const id of userMessageIds(store, userId, Number.MAX_SAFE_INTEGER, "older")) return id;
    return -1;
  });
}

/**
 * The IDs of the messages a user holds a row for, from `from` (inclusive): the
 * flags rows merged with the "unread" rows that stand for flags 0, in any form.
 */
export function userMessageIds(store: Store, userId: number, from: number, direction: "older" | "newer"): Generator<number> {
  return mergeIds([idsInRange(store, "userMessages", [userId], from, direction), ...unreadIdStreams(store, userId, from, direction, false)], direction);
}
