/** Pieces of Zulip's message syntax that the server writes into its own messages. */

/** A mention that notifies nobody (Zulip's silent_mention_syntax_for_user). */
export function silentMention(user: { id: number; full_name: string }): string {
  return `@_**${user.full_name}|${user.id}**`;
}

const TRUNCATION_MARKER = "\n[message truncated]";

/** `content` cut to `maxLength` with Zulip's marker at the end (its truncate_content); unchanged when it fits. */
export function truncateContent(content: string, maxLength: number): string {
  if (content.length <= maxLength) return content;
  return content.slice(0, Math.max(0, maxLength - TRUNCATION_MARKER.length)) + TRUNCATION_MARKER;
}

/** Zulip's get_unused_fence: one backtick more than the longest fence opening a line of `text` (at least three). */
export function unusedFence(text: string): string {
  let length = 3;
  for (const match of text.matchAll(/^ {0,3}(`{3,})/gm)) length = Math.max(length, match[1].length + 1);
  return "`".repeat(length);
}
