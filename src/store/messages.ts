import type { Store } from "./db";
import { StoreCache } from "./cache";
import { decodeRecipientList } from "./shared_recipient_lists";

/**
 * A message as stored: content once (`messages`, Zulip's Message), with what every
 * other message module keys on (flag bits, topic and conversation keys, locations).
 * The rows that refer to a message live with their own modules, all below the write
 * path of src/store/user_messages.ts, which keeps them in step in one transaction:
 * - each recipient's flags and index rows (Zulip's UserMessage): user_messages.ts;
 * - the "unread" index, partly implicit until a background job writes it: unread.ts;
 * - the channel, topic, conversation, sender and search rows narrows scan: message_indexes.ts.
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

/** Lower-cased words of a text: what full-text search matches, by word or prefix. */
export function searchWords(text: string): string[] {
  const words = text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  return [...new Set(words.filter((w) => w.length <= 60))];
}

export function getMessage(store: Store, id: number): MessageRecord | undefined {
  return store.dbs.messages.get(id) as MessageRecord | undefined;
}

/**
 * Recently read messages, decoded, each beside the stored bytes it was decoded from.
 * A narrow walk (GET /messages) reads the same recent messages request after request,
 * and decoding them was a large share of its cost (docs/benchmarks.md). A hit is
 * checked against the bytes stored now, so any writer of a message (edit, move,
 * reaction, submessage, deletion) is followed without telling this cache; the check
 * is one lookup and a byte comparison instead of a decode. While nothing at all has
 * been committed since a hit was last checked (the store's write epoch, see
 * `Store.memo`; messages are written only through `commit`), the check is skipped.
 * Bounded (a few KB per entry: the bytes, the record, its JSON in messages_json.ts):
 * the oldest entry goes first.
 */
const sharedMessages = new WeakMap<Store, Map<number, { bytes: Buffer; record: MessageRecord; checkedIn: object }>>();
const MAX_SHARED_MESSAGES = 1024;

/**
 * `getMessage` for read-only callers: the record may be shared with other readers,
 * so it must not be changed (build a new one, as writers do).
 */
export function getMessageShared(store: Store, id: number): MessageRecord | undefined {
  // Inside a transaction the bytes may be a write that rolls back: read, don't keep.
  if (store.inTransaction) return getMessage(store, id);
  let cache = sharedMessages.get(store);
  if (!cache) sharedMessages.set(store, (cache = new Map()));
  // A new object after every commit (and for each read while one is in flight).
  const epoch = store.memo("sharedMessagesEpoch", () => ({}));
  const hit = cache.get(id);
  if (hit !== undefined && hit.checkedIn === epoch) return hit.record;
  const bytes = store.dbs.messages.getBinaryFast(id);
  if (bytes === undefined) {
    if (hit !== undefined) cache.delete(id);
    return undefined;
  }
  // getBinaryFast answers lmdb-js's shared read buffer, its `length` set to the value's
  // size (the buffer itself is larger): compare and copy that many bytes only.
  const size = bytes.length;
  if (hit !== undefined && hit.bytes.length === size && hit.bytes.compare(bytes, 0, size) === 0) {
    hit.checkedIn = epoch;
    return hit.record;
  }
  // The shared buffer is overwritten by the next read: copy before reading again.
  const copy = Buffer.from(bytes.subarray(0, size));
  const record = getMessage(store, id);
  if (hit !== undefined) cache.delete(id);
  if (record === undefined) return undefined;
  else if (cache.size >= MAX_SHARED_MESSAGES) cache.delete(cache.keys().next().value!);
  cache.set(id, { bytes: copy, record, checkedIn: epoch });
  return record;
}

/**
 * The ID of the oldest message sent at or after `timestamp` (seconds), if any. Message
 * IDs grow with send times, so a binary search over the ID range finds it reading a
 * few dozen records (each probe: the first message at or after an ID).
 */
export function firstMessageIdSentSince(store: Store, timestamp: number): number | undefined {
  const firstFrom = (id: number): MessageRecord | undefined => {
    for (const { value } of store.dbs.messages.getRange({ start: id, limit: 1 })) return value as MessageRecord;
    return undefined;
  };
  let newest: MessageRecord | undefined;
  for (const { value } of store.dbs.messages.getRange({ reverse: true, limit: 1 })) newest = value as MessageRecord;
  if (!newest || newest.timestamp < timestamp) return undefined;
  let lo = 0;
  let hi = newest.id;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (firstFrom(mid)!.timestamp >= timestamp) hi = mid;
    else lo = mid + 1;
  }
  return firstFrom(lo)!.id;
}

/** Stable recipient IDs, allocated on first use (Zulip's Recipient table). */
export function recipientIdFor(store: Store, key: string): number {
  const existing = existingRecipientId(store, key);
  if (existing !== undefined) return existing;
  const id = store.nextId("recipient");
  store.dbs.recipients.put(key, id);
  return id;
}

/**
 * A conversation's recipient ID if it has one, without allocating: a send asks before
 * its transaction, where the cache serves it (inside one, reads bypass caches). An
 * ID never changes once given out and none is removed, so nothing invalidates it: a
 * new one is a miss until committed (misses are not kept).
 */
export function existingRecipientId(store: Store, key: string): number | undefined {
  return recipientIds.get(store, key, () => store.dbs.recipients.get(key) as number | undefined);
}

const recipientIds = new StoreCache<string, number | undefined>();

/**
 * The sorted IDs of the users holding a row for a message (`messageRecipientLists`,
 * inline or shared: decodeRecipientList); none for messages stored before the lists.
 * Shared with other readers: do not change it.
 */
export function recipientList(store: Store, messageId: number): readonly number[] | undefined {
  return decodeRecipientList(store, store.dbs.messageRecipientLists.get(messageId));
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

/** Every message in ID order (send order), read lazily: an export walks them in one pass. */
export function* allMessages(store: Store): Generator<MessageRecord> {
  for (const { value } of store.dbs.messages.getRange({})) yield value as MessageRecord;
}

/** How many messages the store holds (for progress). */
export function messageCount(store: Store): number {
  return (store.dbs.messages.getStats() as { entryCount: number }).entryCount;
}
