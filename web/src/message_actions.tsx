/**
 * Message actions beyond edit, delete, star and react: quote and reply (Zulip's
 * `@_**Name|id** [said](link):` line and a ```quote block), mark unread from a
 * message on (and stop marking that view read until the reader moves on, as Zulip's
 * web app does), and moving a topic (PATCH /messages/{id} with the new topic and
 * which messages follow).
 */
import { useState } from "preact/hooks";
import { api } from "./api";
import { openCompose } from "./compose_request";
import type { DraftTarget } from "./drafts";
import { feed } from "./feed";
import type { Message } from "./model";
import { apiNarrow, dmPartners, narrowHash } from "./narrow";
import { inGroupSetting, myRole, realm, type GroupSetting } from "./realm";
import { channelName, S, userName } from "./state";
import { useAction } from "./use_action";

function conversationOf(m: Message): DraftTarget {
  if (m.type === "stream" && m.stream_id !== undefined) return { kind: "channel", streamId: m.stream_id, topic: m.subject };
  return { kind: "dm", ids: dmPartners(m, S.me.user_id) };
}

/** A link to the message in its conversation, as Zulip writes them (`…/near/<id>`). */
export const messageLink = (m: Message) => `${location.origin}/${narrowHash(conversationOf(m), { channel: channelName, user: userName })}/near/${m.id}`;

/** A message's Markdown source, as its sender wrote it (for editing and quoting). */
export async function rawContent(id: number): Promise<string> {
  const { raw_content, message } = await api("GET", `/messages/${id}`, { apply_markdown: false });
  return raw_content ?? message.content;
}

export async function quoteAndReply(m: Message): Promise<void> {
  const raw = (await rawContent(m.id)).trimEnd();
  // A fence longer than any in the quoted text keeps its code blocks inside the quote.
  const longest = Math.max(2, ...(raw.match(/`{3,}/g) ?? []).map((f) => f.length));
  const fence = "`".repeat(longest + 1);
  const name = S.users.get(m.sender_id)?.full_name ?? m.sender_full_name;
  const text = `@_**${name}|${m.sender_id}** [said](${messageLink(m)}):\n${fence}quote\n${raw}\n${fence}\n`;
  openCompose(conversationOf(m), text);
}

/** After "mark unread from here", this view stops marking that message and later ones read. */
let paused: { view: string; fromId: number } | null = null;
export const autoReadPaused = (id: number) => paused !== null && paused.view === JSON.stringify(feed.narrow) && id >= paused.fromId;

export async function markUnreadFromHere(m: Message): Promise<void> {
  paused = { view: JSON.stringify(feed.narrow), fromId: m.id };
  await api("POST", "/messages/flags/narrow", {
    anchor: String(m.id),
    include_anchor: true,
    num_before: 0,
    num_after: 5000,
    narrow: feed.narrow.kind === "recent" ? apiNarrow(conversationOf(m)) : apiNarrow(feed.narrow),
    op: "remove",
    flag: "read",
  });
}

/**
 * Moving a topic, as Hearth's server allows it: my own messages, or anyone's when the
 * organization's `can_move_messages_between_topics_group` (or the channel's
 * `can_move_messages_within_channel_group`) includes me; and, below moderators, only
 * within `move_messages_within_stream_limit_seconds` of sending.
 */
export function mayMoveTopic(m: Message): boolean {
  if (m.type !== "stream") return false;
  const setting = realm.realm_can_move_messages_between_topics_group as GroupSetting | undefined;
  const channelSetting = m.stream_id === undefined ? undefined : (S.subs.get(m.stream_id) as { can_move_messages_within_channel_group?: GroupSetting } | undefined)?.can_move_messages_within_channel_group;
  const permitted = setting === undefined || m.sender_id === S.me.user_id || inGroupSetting(setting) || inGroupSetting(channelSetting);
  if (!permitted) return false;
  if (myRole() <= 300) return true;
  const limit = realm.realm_move_messages_within_stream_limit_seconds as number | null | undefined;
  return limit == null || Date.now() / 1000 - m.timestamp <= limit;
}

/** Editing a message's content: my own, while the organization allows editing and within its time limit. */
export function mayEditContent(m: Message): boolean {
  if (m.sender_id !== S.me.user_id || realm.realm_allow_message_editing === false) return false;
  const limit = realm.realm_message_content_edit_limit_seconds as number | null | undefined;
  return !limit || Date.now() / 1000 - m.timestamp <= limit;
}

export function MoveTopicForm({ m, onDone }: { m: Message; onDone(): void }) {
  const [topic, setTopic] = useState(m.subject);
  const [which, setWhich] = useState("change_all");
  const [error, busy, run] = useAction();
  // Read from the form itself: a submit may come before the last keystroke re-rendered.
  const move = async (form: HTMLFormElement) => {
    const field = (name: string) => (form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement).value;
    if (await run(() => api("PATCH", `/messages/${m.id}`, { topic: field("new-topic").trim(), propagate_mode: field("propagate") }))) onDone();
  };
  return (
    <form class="move-form" aria-label="Move topic" onSubmit={(e) => (e.preventDefault(), void move(e.currentTarget))} onKeyDown={(e) => e.key === "Escape" && onDone()}>
      <input name="new-topic" aria-label="New topic" value={topic} maxLength={60} onInput={(e) => setTopic(e.currentTarget.value)} />
      <select name="propagate" aria-label="Which messages" value={which} onChange={(e) => setWhich(e.currentTarget.value)}>
        <option value="change_one">Only this message</option>
        <option value="change_later">This and later messages</option>
        <option value="change_all">All messages in the topic</option>
      </select>
      <button type="submit" class="primary" disabled={busy}>Move</button>
      <button type="button" onClick={onDone}>Cancel</button>
      {error && <p class="error" role="alert">{error}</p>}
    </form>
  );
}
