import { channelNarrowSlug, encodeHashComponent } from "./narrow_urls";

/**
 * Links to a channel, a topic or a message in messages the server writes (notices,
 * reminders, reports), as Zulip's topic_link_util writes them: the `#**channel>topic**`
 * syntax, or, when a name holds a character that syntax cannot carry (`` ` ``, `>`,
 * `*`, `&`, `[`, `]`, `$$`), a plain Markdown link with those characters escaped.
 */
const BREAKS_LINK_SYNTAX = /[`>*&[\]]|(\$\$)/g;
const HAS_BREAKING_CHARACTER = new RegExp(BREAKS_LINK_SYNTAX.source);
const ESCAPES: Record<string, string> = { "`": "&#96;", ">": "&gt;", "*": "&#42;", "&": "&amp;", $$: "&#36;&#36;", "[": "&#91;", "]": "&#93;" };
/** What an empty topic shows as in such a link (Zulip's EMPTY_TOPIC_FALLBACK_NAME). */
const EMPTY_TOPIC_NAME = "general chat";

const breaksSyntax = (name: string) => HAS_BREAKING_CHARACTER.test(name);
const escape = (text: string) => text.replace(BREAKS_LINK_SYNTAX, (c) => ESCAPES[c] ?? c);

function fallbackLink(channelId: number, channelName: string, topic?: string, messageId?: number): string {
  let link = `#narrow/channel/${channelNarrowSlug(channelId, channelName)}`;
  let text = `#${escape(channelName)}`;
  if (topic !== undefined) {
    link += `/topic/${encodeHashComponent(topic)}`;
    text += ` > ${escape(topic === "" ? EMPTY_TOPIC_NAME : topic)}`;
  }
  if (messageId !== undefined) {
    link += `/near/${messageId}`;
    text += " @ 💬";
  }
  return `[${text}](${link})`;
}

export function channelLinkSyntax(channelId: number, channelName: string): string {
  return breaksSyntax(channelName) ? fallbackLink(channelId, channelName) : `#**${channelName}**`;
}

export function topicLinkSyntax(channelId: number, channelName: string, topic: string): string {
  return breaksSyntax(channelName) || breaksSyntax(topic) ? fallbackLink(channelId, channelName, topic) : `#**${channelName}>${topic}**`;
}

export function messageLinkSyntax(channelId: number, channelName: string, topic: string, messageId: number): string {
  return breaksSyntax(channelName) || breaksSyntax(topic) ? fallbackLink(channelId, channelName, topic, messageId) : `#**${channelName}>${topic}@${messageId}**`;
}

/**
 * The Markdown link to a sent message that `POST /messages` answers (FL 508,
 * `message_link`): `[#channel > topic @ 💬](url)`, its names escaped as in the
 * fallback links above.
 */
export function messageMarkdownLink(channelName: string, topic: string, url: string): string {
  return `[#${escape(channelName)} > ${escape(topic === "" ? EMPTY_TOPIC_NAME : topic)} @ 💬](${url})`;
}
