import type { Hearth } from "../context";
import { badRequest } from "../errors";
import { appendTo } from "../lib/collections";
import { renderPlainLine, renderWithMarkdownIt, type Linkifier, type MentionableUser, type RenderContext, type RenderResult } from "../markdown";
import { truncateContent } from "../markdown/syntax";
import { fitsKey } from "../store/db";
import { topicKey } from "../store/messages";
import { idsInRange } from "../store/message_indexes";
import { activeRealmEmojiByName } from "../store/realm_emoji";
import { allUsers, getUser, type UserRecord } from "../store/users";
import { readableChannels, readableMessage } from "../access/messages";
import { canReadChannel, channelByName, groupForMention, type MessageChannel } from "../views/message_channels";
import { realmSetting, topicDisplayName } from "../views/messages";
import { realmEmojiPath } from "../views/realm_emoji";
import { userSetting } from "../views/settings";

/**
 * What every message action shares: the length limits, how content and topics are
 * normalized, and how content is rendered for its writer (Zulip's zerver/lib/message.py
 * and render_incoming_message).
 */

export const MAX_MESSAGE_LENGTH = 10000;
export const MAX_TOPIC_LENGTH = 60;

/** Where a message goes: a channel's topic, or a direct-message conversation (sender included). */
export type MessageTarget =
  | { type: "stream"; channel: MessageChannel; topic: string }
  | { type: "private"; userIds: number[] };

/** Zulip truncates over-long content instead of refusing it. */
export function normalizeContent(content: string): string {
  // Zulip's normalize_body: trailing whitespace and leading blank lines go; NUL is refused.
  const trimmed = content.replace(/\s+$/, "").replace(/^\n+/, "");
  if (trimmed.trim() === "") throw badRequest("Message must not be empty");
  if (trimmed.includes("\0")) throw badRequest("Message must not contain null bytes");
  return truncateContent(trimmed, MAX_MESSAGE_LENGTH);
}

const BAD_TOPIC_CHARACTER = /[\p{Cc}\p{Cs}\p{Cn}]/u;

/** Topic rules: trimmed, `(no topic)` is the empty topic, no control characters, 60 characters (truncated like Zulip). */
export function normalizeTopic(raw: string): string {
  let topic = raw.trim();
  if (topic === "(no topic)") topic = "";
  // One scan of the whole topic first: the position (in characters) is needed only for the error.
  if (BAD_TOPIC_CHARACTER.test(topic)) {
    const bad = [...topic].findIndex((ch) => BAD_TOPIC_CHARACTER.test(ch));
    throw badRequest(`Invalid character in topic, at position ${bad + 1}!`);
  }
  // No more code units than the limit: no more characters either.
  if (topic.length > MAX_TOPIC_LENGTH && [...topic].length > MAX_TOPIC_LENGTH) topic = [...topic].slice(0, MAX_TOPIC_LENGTH - 3).join("") + "...";
  return topic;
}

/** The most messages one render reads to find topic links' `with` messages. */
const TOPIC_LINK_READS = 1000;

/** Lookups for the renderer, as seen by the sender (hidden channels are not linked). */
export function renderContextFor(h: Hearth, sender: UserRecord): RenderContext {
  let byName: Map<string, MentionableUser[]> | null = null;
  let readable: ReturnType<typeof readableChannels> | undefined;
  const topicLinkIds = new Map<string, number | undefined>();
  let topicLinkReads = 0;
  return {
    userById(id) {
      const u = getUser(h.store, id);
      return u && !u.is_system_bot ? { id: u.id, full_name: u.full_name, is_active: u.is_active } : undefined;
    },
    usersByName(name) {
      if (!byName) {
        byName = new Map();
        for (const u of allUsers(h.store)) {
          if (u.is_system_bot) continue;
          const key = u.full_name.toLowerCase();
          appendTo(byName, key, { id: u.id, full_name: u.full_name, is_active: u.is_active });
        }
      }
      const matches = byName.get(name.toLowerCase()) ?? [];
      // A deactivated namesake does not make an active user's name ambiguous.
      const active = matches.filter((u) => u.is_active !== false);
      return active.length > 0 ? active : matches;
    },
    groupByName: (name) => groupForMention(h, name),
    channelByName(name) {
      const c = channelByName(h, name);
      return c && (sender.is_system_bot || canReadChannel(h, sender, c)) ? { id: c.id, name: c.name } : undefined;
    },
    linkifiers: realmSetting(h, "linkifiers", [] as { pattern: string; url_template: string }[]),
    realmEmojiByName(name) {
      const e = activeRealmEmojiByName(h.store, name);
      // A relative URL, as Zulip renders it: the page's origin serves it.
      return e ? { id: e.id, url: realmEmojiPath(e) } : undefined;
    },
    topicLinkMessageId(channelId, topic) {
      // Since FL 400 the newest message the writer can read (Zulip's
      // get_last_message_for_user_in_topic). Each topic is looked up once per message,
      // and one message reads at most TOPIC_LINK_READS messages in all (a topic whose
      // recent messages the writer cannot read gets a link without `with`): a message repeating a link must not cost a
      // topic's whole history each time.
      // A topic longer than any key (the link's text is the writer's) was never stored.
      if (!fitsKey(topicKey(topic))) return undefined;
      const key = `${channelId}\u0000${topicKey(topic)}`;
      if (topicLinkIds.has(key)) return topicLinkIds.get(key);
      readable ??= readableChannels(h, sender);
      let found: number | undefined;
      for (const id of idsInRange(h.store, "topicMessages", [channelId, topicKey(topic)], Number.MAX_SAFE_INTEGER, "older")) {
        if (topicLinkReads++ >= TOPIC_LINK_READS) break;
        if (sender.is_system_bot || readableMessage(h, sender, id, readable)) {
          found = id;
          break;
        }
      }
      topicLinkIds.set(key, found);
      return found;
    },
    emptyTopicDisplayName: topicDisplayName(h, "", { allowEmptyTopicName: false }),
    ownUrl: h.realmUrl(),
    translateEmoticons: userSetting(sender, "translate_emoticons") === true,
    defaultCodeBlockLanguage: realmSetting(h, "default_code_block_language", ""),
  };
}

export function renderMessageContent(h: Hearth, sender: UserRecord, content: string): RenderResult {
  // A plain line of words needs only the linkifiers (see plainLineHtml), not the whole context.
  return renderPlainLine(content, realmSetting(h, "linkifiers", [] as Linkifier[])) ?? renderWithMarkdownIt(content, renderContextFor(h, sender));
}
