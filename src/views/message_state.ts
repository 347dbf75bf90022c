import { statePart } from "./state_parts";
import type { Hearth } from "../context";
import { appendTo } from "../lib/collections";
import type { UserRecord } from "../store/users";
import { getSubscription } from "../store/subscriptions";
import { getMessage, messageLocation, topicKey, type MessageLocation } from "../store/messages";
import { getUserTopics, VisibilityPolicy } from "../store/user_topics";
import { idsInRange } from "../store/message_indexes";
import { indexRows } from "../store/user_messages";
import { topicDisplayName } from "./messages";

/**
 * The message parts of POST /register's initial state. All read per-user index
 * rows (unread, starred, direct messages), never the whole message history.
 */

/** Zulip's cap on unread IDs sent at register (`MAX_UNREAD_MESSAGES`). */
const MAX_UNREAD_MESSAGES = 50000;
/** Zulip scans this many recent direct messages for `recent_private_conversations`. */
const RECENT_DM_SCAN = 1000;

/** The location stored in an index row (rows written before locations were stored hold `true`). */
function locationOf(h: Hearth, id: number, value: unknown): MessageLocation | undefined {
  if (value !== true) return value as MessageLocation;
  const m = getMessage(h.store, id);
  return m ? messageLocation(m) : undefined;
}

/**
 * Zulip's is_row_muted (get_raw_unread_data): a muted channel's message counts only in
 * a topic unmuted or followed there; an unmuted channel's, unless its topic is muted.
 */
export function isRowMuted(channelMuted: boolean, topicPolicy: number): boolean {
  if (channelMuted) return topicPolicy !== VisibilityPolicy.UNMUTED && topicPolicy !== VisibilityPolicy.FOLLOWED;
  return topicPolicy === VisibilityPolicy.MUTED;
}

/** `allowEmptyTopicName`: the client's empty_topic_name capability (FL 334); without it "" shows as the realm's display name. */
export function unreadMessagesState(h: Hearth, user: UserRecord, allowEmptyTopicName: boolean): Record<string, unknown> {
  const pms = new Map<number, number[]>();
  const huddles = new Map<string, number[]>();
  const streams = new Map<string, { stream_id: number; topic: string; unread_message_ids: number[] }>();
  const mentions = new Set<number>();
  const unreadIds = new Set<number>();
  // `listed` bounds the walk (Zulip's MAX_UNREAD_MESSAGES); `count` is what clients show.
  let listed = 0;
  let count = 0;
  let missing = false;
  const subscriptions = new Map<number, { active: boolean; muted: boolean }>();
  const subscriptionOf = (channelId: number) => {
    let sub = subscriptions.get(channelId);
    if (sub === undefined) {
      const record = getSubscription(h.store, channelId, user.id);
      subscriptions.set(channelId, (sub = { active: record?.active !== false, muted: record?.is_muted === true }));
    }
    return sub;
  };
  // A user's topic policies are few: read once, not once per unread row.
  const topicPolicies = new Map<string, number>();
  for (const t of getUserTopics(h.store, user.id)) topicPolicies.set(`${t.stream_id}\u0000${topicKey(t.topic_name)}`, t.visibility_policy);
  const rowMuted = (channelId: number, topic: string) =>
    isRowMuted(subscriptionOf(channelId).muted, topicPolicies.get(`${channelId}\u0000${topicKey(topic)}`) ?? VisibilityPolicy.INHERIT);
  // Unread rows carry each message's location, so no message content is read here.
  for (const { id, value } of indexRows(h.store, user.id, "unread", Number.MAX_SAFE_INTEGER, "older")) {
    if (listed >= MAX_UNREAD_MESSAGES) {
      missing = true;
      break;
    }
    const location = locationOf(h, id, value);
    if (location === undefined) continue;
    // Zulip's get_raw_unread_data leaves out channels the user has left (an inactive
    // subscription): their rows stay, but they are no longer the user's to read.
    if (Array.isArray(location) && !subscriptionOf(location[0]).active) continue;
    listed++;
    unreadIds.add(id);
    // Zulip's aggregate_unread_data: direct messages, and channel messages not muted.
    if (!Array.isArray(location) || !rowMuted(location[0], location[1])) count++;
    if (Array.isArray(location)) {
      const [streamId, topic] = location;
      const key = `${streamId}\u0000${topic}`;
      const entry = streams.get(key) ?? { stream_id: streamId, topic: topicDisplayName(h, topic, { allowEmptyTopicName }), unread_message_ids: [] };
      entry.unread_message_ids.push(id);
      streams.set(key, entry);
    } else {
      const members = location.split(",").map(Number);
      if (members.length <= 2) {
        const other = members.find((x) => x !== user.id) ?? user.id;
        appendTo(pms, other, id);
      } else appendTo(huddles, location, id);
    }
  }
  // Mentions are their own (small) index; Zulip lists only the unread ones, which
  // are the unread rows just walked (no flags read per mention).
  for (const { id } of indexRows(h.store, user.id, "mentioned", Number.MAX_SAFE_INTEGER, "older")) {
    if (unreadIds.has(id)) mentions.add(id);
  }
  const asc = (ids: number[]) => ids.sort((a, b) => a - b);
  // Buckets in a stable order (Zulip's order is unspecified; clients index them).
  return {
    count,
    pms: [...pms].map(([other, ids]) => ({ other_user_id: other, sender_id: other, unread_message_ids: asc(ids) })).sort((a, b) => a.other_user_id - b.other_user_id),
    streams: [...streams.values()]
      .map((s) => ({ ...s, unread_message_ids: asc(s.unread_message_ids) }))
      .sort((a, b) => a.stream_id - b.stream_id || (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0)),
    huddles: [...huddles].map(([key, ids]) => ({ user_ids_string: key, unread_message_ids: asc(ids) })).sort((a, b) => (a.user_ids_string < b.user_ids_string ? -1 : 1)),
    mentions: asc([...mentions]),
    old_unreads_missing: missing,
  };
}

export function recentPrivateConversations(h: Hearth, user: UserRecord): { max_message_id: number; user_ids: number[] }[] {
  const byKey = new Map<string, { max_message_id: number; user_ids: number[] }>();
  let scanned = 0;
  for (const { id, value } of indexRows(h.store, user.id, "dm", Number.MAX_SAFE_INTEGER, "older")) {
    if (++scanned > RECENT_DM_SCAN) break;
    const location = locationOf(h, id, value);
    if (typeof location !== "string") continue;
    const key = location;
    if (byKey.has(key)) continue;
    const others = key.split(",").map(Number).filter((x) => x !== user.id);
    byKey.set(key, { max_message_id: id, user_ids: others });
  }
  return [...byKey.values()];
}

export function starredMessageIds(h: Hearth, user: UserRecord): number[] {
  return [...idsInRange(h.store, "userMessageIndex", [user.id, "starred"], 0, "newer")];
}

// Unread counts stay current only with both message and flag events (Zulip's rule).
export const unreadMsgsPart = statePart("unread_msgs", (ctx) => ctx.want("message") && ctx.want("update_message_flags"), ({ h, user, capabilities }) => ({
  unread_msgs: user ? unreadMessagesState(h, user, capabilities.empty_topic_name) : { count: 0, pms: [], streams: [], huddles: [], mentions: [], old_unreads_missing: false },
}));
export const recentPrivateConversationsPart = statePart("recent_private_conversations", ["recent_private_conversations"], ({ h, user }) => ({
  recent_private_conversations: user ? recentPrivateConversations(h, user) : [],
}));
export const starredMessagesPart = statePart("starred_messages", ["starred_messages"], ({ h, user }) => ({
  starred_messages: user ? starredMessageIds(h, user) : [],
}));
