import type { Hearth } from "../context";
import { getUser, type UserRecord } from "../store/users";
import { getRealm } from "../store/realm";
import { flagList, MessageFlag, topicKey, type MessageRecord } from "../store/messages";
import { idsInRange, topicsOfChannel } from "../store/message_indexes";
import { getUserFlags, messageRecipientFlags, newestMessageIdOf } from "../store/user_messages";
import { accessChannel, hasMetadataAccess } from "../access/channels";
import { messageMarkdownLink } from "../markdown/links";
import { apiEmail } from "./users";
import { avatarUrl } from "./avatars";
import { channelById, type MessageChannel } from "./message_channels";
import { accessMessage } from "../access/messages";
import { badRequest } from "../errors";
import { DIFF_CELLS_PER_REQUEST, htmlDiff } from "../markdown/html_diff";
import { channelNarrowSlug, encodeHashComponent, topicLinks, type Linkifier } from "../markdown";
import { REALM_DEFAULTS, realmSetting as realmSettingOrDefault } from "../store/realm_settings";

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

function displayUser(h: Hearth, id: number): { id: number; email: string; full_name: string; is_mirror_dummy: boolean } {
  const u = getUser(h.store, id);
  return { id, email: u ? apiEmail(h, u) : `user${id}@${h.realmHost()}`, full_name: u?.full_name ?? "Unknown user", is_mirror_dummy: false };
}

export function formatReactions(h: Hearth, m: MessageRecord): Record<string, unknown>[] {
  // A new message has none (every message event): no mapping call.
  if (m.reactions.length === 0) return [];
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

/**
 * A message as the API shows it to `viewer` (the OpenAPI message object). All but
 * `flags` must stay the same for every viewer: GET /messages shares the rest between
 * viewers (messages_json.ts, which lists what the object may depend on). `flags`
 * null: without the field (a message event's flags go per recipient).
 */
export function formatMessage(
  h: Hearth,
  viewer: UserRecord,
  m: MessageRecord,
  flags: number | null,
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
  };
  if (flags !== null) out.flags = flagList(flags);
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

/**
 * `message_url` and `message_link` of `POST /messages`' answer (FL 508): the
 * message's address in its conversation, naming the channel only for a sender who
 * may see its metadata (else by ID alone, and the link is the bare URL, as for DMs).
 */
export function sentMessageLinks(h: Hearth, sender: UserRecord, m: MessageRecord): { message_url: string; message_link: string } {
  if (m.type !== "stream") {
    const url = messageNearUrl(h, m);
    return { message_url: url, message_link: url };
  }
  const channel = channelById(h, m.channel_id!);
  if (!channel || !hasMetadataAccess(h, sender, channel)) {
    const url = `${h.realmUrl()}/#narrow/channel/${m.channel_id}/topic/${encodeHashComponent(m.topic)}/near/${m.id}`;
    return { message_url: url, message_link: url };
  }
  const url = messageNearUrl(h, m);
  return { message_url: url, message_link: messageMarkdownLink(channel.name, m.topic, url) };
}

/**
 * The same answer's fields as JSON (`"message_url":…,"message_link":…`): a topic's
 * sends share everything but the ID, so the text around it is kept per channel
 * record (a rename or any channel write makes a new one), realm URL, whether the
 * sender may see the channel's metadata, and topic; a send only adds its ID (digits
 * need no escaping in JSON).
 */
export function sentMessageLinksJson(h: Hearth, sender: UserRecord, m: MessageRecord): string {
  const channel = m.type === "stream" ? channelById(h, m.channel_id!) : undefined;
  if (!channel) return linksJson(sentMessageLinks(h, sender, m));
  const named = hasMetadataAccess(h, sender, channel);
  const realmUrl = h.realmUrl();
  let kept = linkJsonParts.get(channel);
  if (!kept || kept.realmUrl !== realmUrl) linkJsonParts.set(channel, (kept = { realmUrl, named: new Map(), byId: new Map() }));
  const byTopic = named ? kept.named : kept.byId;
  let parts = byTopic.get(m.topic);
  if (parts === undefined) {
    // Built from the links of a placeholder ID, split where the ID goes.
    parts = linksJson(sentMessageLinks(h, sender, { ...m, id: ID_MARK })).split(String(ID_MARK));
    // The placeholder's digits inside a name: not kept, built whole.
    if (parts.length !== 3) return linksJson(sentMessageLinks(h, sender, m));
    if (byTopic.size >= MAX_KEPT_TOPICS) byTopic.clear();
    byTopic.set(m.topic, parts);
  }
  return parts[0] + m.id + parts[1] + m.id + parts[2];
}

const linksJson = (links: { message_url: string; message_link: string }) => `"message_url":${JSON.stringify(links.message_url)},"message_link":${JSON.stringify(links.message_link)}`;

/** An ID no message has: its digits mark where a send's ID goes. */
const ID_MARK = 987654321012345;
const MAX_KEPT_TOPICS = 1000;
/** The answer's text before, between and after the ID, by channel record, then topic. */
const linkJsonParts = new WeakMap<MessageChannel, { realmUrl: string; named: Map<string, string[]>; byId: Map<string, string[]> }>();

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

/**
 * GET /messages/{id}/history: oldest first, each entry the state after that change.
 * Without `allowEmptyTopicName` (FL 334) a channel message's "" topic shows as the
 * realm's display name.
 */
export function getMessageHistory(h: Hearth, user: UserRecord, messageId: number, allowEmptyTopicName = false): Record<string, unknown>[] {
  const { message } = accessMessage(h, user, messageId);
  const policy = editHistoryPolicy(h);
  if (policy === "none") throw badRequest("Message edit history is disabled in this organization");
  const entries: Record<string, unknown>[] = [];
  // One budget for the whole history: a long message edited many times stays cheap to ask for.
  const diffBudget = { cells: DIFF_CELLS_PER_REQUEST };
  let content = message.content;
  let rendered = message.rendered_content;
  let topic = message.topic;
  let stream = message.channel_id;
  // Walk back from the current state; edit_history is newest first.
  for (const e of message.edit_history) {
    const snapshot: Record<string, unknown> = { user_id: e.user_id, timestamp: e.timestamp, topic, content, rendered_content: rendered };
    if (e.prev_content !== undefined && policy === "all") {
      snapshot.prev_content = e.prev_content;
      snapshot.prev_rendered_content = e.prev_rendered_content;
      // What the edit changed, word by word, as Zulip marks it.
      if (e.prev_rendered_content !== undefined) snapshot.content_html_diff = htmlDiff(e.prev_rendered_content, rendered, diffBudget);
      content = e.prev_content;
      rendered = e.prev_rendered_content ?? rendered;
    }
    if (e.prev_topic !== undefined) {
      snapshot.prev_topic = e.prev_topic;
      topic = e.prev_topic;
    }
    if (e.prev_stream !== undefined) {
      snapshot.prev_stream = e.prev_stream;
      snapshot.stream = stream;
      stream = e.prev_stream;
    }
    entries.push(snapshot);
  }
  entries.push({ user_id: message.sender_id, timestamp: message.timestamp, topic, content, rendered_content: rendered });
  if (message.type === "stream" && !allowEmptyTopicName) {
    for (const entry of entries) {
      for (const key of ["topic", "prev_topic"]) {
        if (entry[key] !== undefined) entry[key] = topicDisplayName(h, entry[key] as string, { allowEmptyTopicName });
      }
    }
  }
  return entries.reverse();
}

/** GET /messages/{id}/read_receipts: who read it, as far as each lets it be known. */
export function getReadReceipts(h: Hearth, user: UserRecord, messageId: number): number[] {
  if (!realmSetting<boolean>(h, "enable_read_receipts", true)) throw badRequest("Read receipts are disabled in this organization.");
  const { message } = accessMessage(h, user, messageId);
  const ids: number[] = [];
  for (const [userId, bits] of messageRecipientFlags(h.store, message)) {
    if (userId === message.sender_id || !(bits & MessageFlag.read) || bits & MessageFlag.historical) continue;
    const u = getUser(h.store, userId);
    if (!u || !u.is_active || u.settings.send_read_receipts === false) continue;
    ids.push(userId);
  }
  return ids.sort((a, b) => a - b);
}
