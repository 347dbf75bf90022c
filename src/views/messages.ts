import type { Hearth } from "../context";
import { getUser, type UserRecord } from "../store/users";
import { getRealm } from "../store/realm";
import { REALM_DEFAULTS, realmSetting as realmSettingOrDefault } from "../store/realm_settings";
import {
  flagList,
  getMessage,
  getUserFlags,
  idsInRange,
  MessageFlag,
  newestMessageIdOf,
  topicKey,
  topicsOfChannel,
  type MessageRecord,
} from "../store/messages";
import { accessChannel } from "../access/channels";
import { apiEmail } from "./users";
import { avatarUrl } from "./avatars";
import { channelById, canReadChannel, type MessageChannel } from "./message_channels";
import { channelNarrowSlug, encodeHashComponent, topicLinks, type Linkifier } from "../markdown";

/** A channel by ID if `user` may read its messages, else undefined. */
export type ReadableChannels = (channelId: number) => MessageChannel | undefined;

/**
 * The channels `user` may read, each looked up once: a walk over many messages
 * (walkNarrow) asks once per channel rather than reading the channel per message.
 */
export function readableChannels(h: Hearth, user: UserRecord): ReadableChannels {
  const known = new Map<number, MessageChannel | undefined>();
  return (channelId) => {
    if (!known.has(channelId)) {
      const channel = channelById(h, channelId);
      known.set(channelId, channel && canReadChannel(h, user, channel) ? channel : undefined);
    }
    return known.get(channelId);
  };
}

/** The newest message ID the user has received; -1 when none (Zulip's convention). */
export function maxMessageIdFor(h: Hearth, user: UserRecord): number {
  return newestMessageIdOf(h.store, user.id);
}

/** An organization setting: the stored value, else the realm default, else `fallback`. */
export function realmSetting<T>(h: Hearth, name: string, fallback: T): T {
  const value = realmSettingOrDefault(getRealm(h.store)?.settings ?? {}, name);
  return (value === undefined ? fallback : value) as T;
}

export interface MessageViewOptions {
  applyMarkdown: boolean;
  /** FL 334: clients that can show the empty topic ask for it; others get "general chat". */
  allowEmptyTopicName: boolean;
  /** The realm's linkifiers, read once per request rather than once per message. */
  linkifiers?: Linkifier[];
}

export const DEFAULT_VIEW: MessageViewOptions = { applyMarkdown: true, allowEmptyTopicName: true };

/**
 * The flags a user sees on a message: their row, or — for a channel message they
 * may read without having received it — Zulip's `read` + `historical`.
 * Undefined when the user may not see the message at all.
 */
export function visibleFlags(h: Hearth, user: UserRecord, m: MessageRecord, readable: ReadableChannels = readableChannels(h, user)): number | undefined {
  const own = getUserFlags(h.store, user.id, m.id);
  if (m.type !== "stream") return own;
  // Zulip's has_message_access: a row is not enough in a channel. Someone who left a
  // private channel (or a guest who left any channel) keeps their rows, but no longer
  // reads its messages.
  const channel = readable(m.channel_id!);
  if (!channel) return undefined;
  if (own !== undefined) return own;
  // Private channels with protected history show subscribers only what they received.
  if (channel.invite_only && !channel.history_public_to_subscribers) return undefined;
  return MessageFlag.read | MessageFlag.historical;
}

function displayUser(h: Hearth, id: number): { id: number; email: string; full_name: string; is_mirror_dummy: boolean } {
  const u = getUser(h.store, id);
  return { id, email: u ? apiEmail(h, u) : `user${id}@${h.realmHost()}`, full_name: u?.full_name ?? "Unknown user", is_mirror_dummy: false };
}

export function formatReactions(h: Hearth, m: MessageRecord): Record<string, unknown>[] {
  return m.reactions.map((r) => {
    const u = displayUser(h, r.user_id);
    // `user` is deprecated but zulip-terminal still reads it.
    return { ...r, user: { id: u.id, email: u.email, full_name: u.full_name, is_mirror_dummy: false } };
  });
}

/** The topic as a client sees it: "" becomes `realm_empty_topic_display_name` for clients without FL 334 support. */
export function topicDisplayName(h: Hearth, topic: string, options: Pick<MessageViewOptions, "allowEmptyTopicName">): string {
  if (topic !== "" || options.allowEmptyTopicName) return topic;
  return realmSetting(h, "empty_topic_display_name", String(REALM_DEFAULTS.empty_topic_display_name));
}

/** A message as the API shows it to `viewer` (the OpenAPI message object). */
export function formatMessage(
  h: Hearth,
  viewer: UserRecord,
  m: MessageRecord,
  flags: number,
  options: MessageViewOptions = DEFAULT_VIEW,
): Record<string, unknown> {
  const sender = getUser(h.store, m.sender_id);
  const out: Record<string, unknown> = {
    id: m.id,
    sender_id: m.sender_id,
    content: options.applyMarkdown ? m.rendered_content : m.content,
    recipient_id: m.recipient_id,
    timestamp: m.timestamp,
    client: m.client,
    subject: m.type === "stream" ? topicDisplayName(h, m.topic, options) : "",
    topic_links: m.type === "stream" && m.topic !== "" ? topicLinks(m.topic, options.linkifiers ?? realmSetting(h, "linkifiers", [])) : [],
    is_me_message: m.is_me_message,
    reactions: formatReactions(h, m),
    submessages: m.submessages,
    sender_full_name: sender?.full_name ?? "Unknown user",
    sender_email: sender ? apiEmail(h, sender) : "",
    sender_realm_str: "",
    display_recipient:
      m.type === "stream" ? (channelById(h, m.channel_id!)?.name ?? "") : m.dm_user_ids!.map((id) => displayUser(h, id)),
    type: m.type,
    avatar_url: sender ? avatarUrl(h, sender) : null,
    content_type: options.applyMarkdown ? "text/html" : "text/x-markdown",
    flags: flagList(flags),
  };
  if (m.type === "stream") out.stream_id = m.channel_id;
  const history = visibleEditHistory(h, m);
  if (history.length > 0) out.edit_history = history;
  if (m.last_edit_timestamp !== null) out.last_edit_timestamp = m.last_edit_timestamp;
  if (m.last_moved_timestamp !== null) out.last_moved_timestamp = m.last_moved_timestamp;
  return out;
}

/** The web app's address of a message in its conversation (Zulip's message_link_url), for messages the server writes. */
export function messageNearUrl(h: Hearth, m: MessageRecord): string {
  const base = `${h.realmUrl()}/#narrow`;
  if (m.type !== "stream") return `${base}/dm/${m.dm_user_ids!.join(",")}/near/${m.id}`;
  const channel = channelById(h, m.channel_id!);
  return `${base}/channel/${channelNarrowSlug(m.channel_id!, channel?.name ?? "")}/topic/${encodeHashComponent(m.topic)}/near/${m.id}`;
}

/** `message_edit_history_visibility_policy` (FL 358): "all", "moves" (moves only) or "none". */
export function editHistoryPolicy(h: Hearth): "all" | "moves" | "none" {
  return realmSetting<"all" | "moves" | "none">(h, "message_edit_history_visibility_policy", "all");
}

/** Edit history as the organization lets members see it. */
export function visibleEditHistory(h: Hearth, m: MessageRecord): MessageRecord["edit_history"] {
  if (m.edit_history.length === 0) return m.edit_history;
  const policy = editHistoryPolicy(h);
  if (policy === "none") return [];
  if (policy === "all") return m.edit_history;
  return m.edit_history
    .filter((e) => e.prev_topic !== undefined || e.prev_stream !== undefined)
    .map(({ prev_content, prev_rendered_content, prev_rendered_content_version, ...move }) => move);
}

/** Reads a message and its flags for `user`, or undefined when they may not see it. */
export function readableMessage(
  h: Hearth,
  user: UserRecord,
  id: number,
  readable: ReadableChannels = readableChannels(h, user),
): { message: MessageRecord; flags: number } | undefined {
  const message = getMessage(h.store, id);
  if (!message) return undefined;
  const flags = visibleFlags(h, user, message, readable);
  return flags === undefined ? undefined : { message, flags };
}

/**
 * `GET /users/me/{stream_id}/topics`: a channel's topics, newest first. Where
 * history is protected, only topics with messages the user received, up to the
 * newest of those.
 */
export function topicsForUser(h: Hearth, user: UserRecord, channelId: number, options: MessageViewOptions): { name: string; max_id: number }[] {
  const channel = accessChannel(h, user, channelId, { requireContentAccess: true, allowArchived: true });
  let topics = topicsOfChannel(h.store, channel.id);
  if (channel.invite_only && !channel.history_public_to_subscribers) {
    topics = topics.flatMap((topic) => {
      for (const id of idsInRange(h.store, "topicMessages", [channel.id, topicKey(topic.name)], topic.max_id, "older")) {
        if (getUserFlags(h.store, user.id, id) !== undefined) return [{ name: topic.name, max_id: id }];
      }
      return [];
    });
  }
  return topics.map((topic) => ({ name: topicDisplayName(h, topic.name, options), max_id: topic.max_id }));
}
