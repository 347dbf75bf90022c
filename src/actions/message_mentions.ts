import type { Hearth } from "../context";
import { escapeRegExp } from "../lib/text";
import type { RenderResult } from "../markdown";
import { getMessage, MessageFlag, topicKey } from "../store/messages";
import { idsInRange } from "../store/message_indexes";
import { alertWordsByUser } from "../store/personal";
import { groupMemberIds } from "../views/message_channels";

/** Who a message's content mentions, as flags per recipient: for a send and for a content edit alike. */

/** Users mentioned by `@topic`: those who posted in the topic. */
export function topicParticipants(h: Hearth, channelId: number, topic: string): Set<number> {
  const ids = new Set<number>();
  for (const id of idsInRange(h.store, "topicMessages", [channelId, topicKey(topic)], Number.MAX_SAFE_INTEGER, "older")) {
    const m = getMessage(h.store, id);
    if (m) ids.add(m.sender_id);
  }
  return ids;
}

/** The mention bits a recipient gets from a rendering. */
export function mentionBitsFor(userId: number, senderId: number, rendered: RenderResult, groupMembers: Set<number>, topicUsers: Set<number>): number {
  let bits = 0;
  if (rendered.mentionedUserIds.has(userId) || groupMembers.has(userId)) bits |= MessageFlag.mentioned;
  if (rendered.channelWildcard) bits |= MessageFlag.stream_wildcard_mentioned;
  if (rendered.topicWildcard && topicUsers.has(userId)) bits |= MessageFlag.topic_wildcard_mentioned;
  return userId === senderId ? bits & ~MessageFlag.stream_wildcard_mentioned & ~MessageFlag.topic_wildcard_mentioned : bits;
}

/**
 * The `has_alert_word` bit of each recipient, for one message: any of their alert
 * words in the message, case insensitive, standing alone between Zulip's separators
 * (spaces, quotes, brackets, punctuation); never for one's own messages. Only users
 * who have alert words are checked (a message to a large channel usually checks a few).
 */
export function alertWordBits(h: Hearth, senderId: number, content: string): (userId: number) => number {
  const byUser = alertWordsByUser(h.store);
  let lower: string | undefined;
  return (userId) => {
    const pattern = userId === senderId ? undefined : alertWordPattern(byUser, userId);
    if (!pattern) return 0;
    lower ??= content.toLowerCase();
    return pattern.test(lower) ? MessageFlag.has_alert_word : 0;
  };
}

/**
 * A user's alert words as one pattern: any of them, standing as a word. Compiled once
 * per version of the alert-word map (a change of anyone's words replaces the map).
 */
const alertWordPatterns = new WeakMap<ReadonlyMap<number, readonly string[]>, Map<number, RegExp>>();

function alertWordPattern(byUser: ReadonlyMap<number, readonly string[]>, userId: number): RegExp | undefined {
  let patterns = alertWordPatterns.get(byUser);
  if (!patterns) alertWordPatterns.set(byUser, (patterns = new Map()));
  let pattern = patterns.get(userId);
  if (pattern) return pattern;
  const words = byUser.get(userId)?.filter((word) => word !== "");
  if (!words || words.length === 0) return undefined;
  const alternatives = words.map((word) => escapeRegExp(word.toLowerCase())).join("|");
  pattern = new RegExp(`(?<![^\\s'"(,:<])(?:${alternatives})(?![^\\s'"),.:;?!>])`, "u");
  patterns.set(userId, pattern);
  return pattern;
}

/** Members of the groups a message mentions: they get the `mentioned` flag. */
export function mentionedGroupMembers(h: Hearth, rendered: RenderResult): Set<number> {
  const members = new Set<number>();
  for (const id of rendered.mentionedGroupIds) for (const member of groupMemberIds(h, id)) members.add(member);
  return members;
}
