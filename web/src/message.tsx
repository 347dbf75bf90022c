/**
 * One message: avatar, name, time, the server's rendered HTML (the only HTML this
 * client ever inserts; the server has sanitized it), markers, reactions, and for
 * the reader's own messages edit and delete.
 */
import { signal } from "@preact/signals";
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { api, errorText } from "./api";
import { EmojiGlyph, EmojiPicker, unicodeGlyph, type EmojiChoice } from "./emoji";
import { markUnreadFromHere, mayEditContent, mayMoveTopic, MoveTopicForm, quoteAndReply, rawContent } from "./message_actions";
import type { Message, Reaction } from "./model";
import { prefs } from "./panels";
import { S, userName } from "./state";

// One formatter each, made once: toLocale…String with options builds a new one per call,
// which was most of the time a feed took to render (docs/benchmarks.md).
const clocks = new Map<string, Intl.DateTimeFormat>();
const clock = () => {
  const key = String(prefs.twenty_four_hour_time);
  let format = clocks.get(key);
  if (!format) clocks.set(key, (format = new Intl.DateTimeFormat([], { hour: "2-digit", minute: "2-digit", hour12: prefs.twenty_four_hour_time === null ? undefined : !prefs.twenty_four_hour_time })));
  return format;
};
const dayFormat = new Intl.DateTimeFormat([], { weekday: "short", month: "short", day: "numeric" });
const fullFormat = new Intl.DateTimeFormat([], { year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", second: "numeric" });
/** Formatting is still the dearer part of a row, and messages come many to a minute: by minute, remembered. */
function byMinute(format: (ts: number) => string): (ts: number) => string {
  const known = new Map<number, string>();
  let clockKey: boolean | null = null;
  return (ts) => {
    if (clockKey !== prefs.twenty_four_hour_time || known.size > 10_000) {
      known.clear();
      clockKey = prefs.twenty_four_hour_time;
    }
    const minute = Math.floor(ts / 60);
    let text = known.get(minute);
    if (text === undefined) known.set(minute, (text = format(minute * 60)));
    return text;
  };
}
export const timeOf = byMinute((ts) => clock().format(ts * 1000));
export const dateOf = byMinute((ts) => dayFormat.format(ts * 1000));

/**
 * At phone width the action buttons are always shown under each message (there is no
 * hover to bring them up); wider, a row renders them only while it is hovered or has the
 * focus, which is when the stylesheet shows them: they were a large share of a row's elements,
 * rendered for every row of the window that nobody pointed at (docs/benchmarks.md).
 */
const phoneQuery = matchMedia("(max-width: 700px)");
const phoneWidth = signal(phoneQuery.matches);
phoneQuery.addEventListener("change", () => (phoneWidth.value = phoneQuery.matches));

export function Avatar({ userId, url, name, size = 36 }: { userId: number; url: string | null | undefined; name: string; size?: number }) {
  const src = url ?? S.users.get(userId)?.avatar_url;
  // Decoded off the main thread: a window step adds many rows, most with an avatar (docs/benchmarks.md).
  if (src) return <img class="avatar" src={src} alt="" width={size} height={size} loading="lazy" decoding="async" />;
  return <span class="avatar avatar-letter" aria-hidden="true">{name.slice(0, 1).toUpperCase()}</span>;
}

/** Reactions grouped by emoji, with counts and who reacted. */
function Reactions({ m }: { m: Message }) {
  const groups = new Map<string, Reaction[]>();
  for (const r of m.reactions) {
    const key = `${r.reaction_type}:${r.emoji_code}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  if (!groups.size) return null;
  return (
    <div class="reactions">
      {[...groups.values()].map((rs) => {
        const mine = rs.some((r) => r.user_id === S.me.user_id);
        const who = rs.map((r) => userName(r.user_id)).join(", ");
        return (
          <button type="button" class={`reaction${mine ? " mine" : ""}`} key={rs[0].emoji_code} title={`${who} (:${rs[0].emoji_name}:)`} aria-pressed={mine} onClick={() => void react(m, rs[0], mine)}>
            <EmojiGlyph reaction={rs[0]} /> <span class="count">{rs.length}</span>
          </button>
        );
      })}
    </div>
  );
}

async function react(m: Message, emoji: EmojiChoice, remove: boolean): Promise<void> {
  await api(remove ? "DELETE" : "POST", `/messages/${m.id}/reactions`, { emoji_name: emoji.emoji_name, emoji_code: emoji.emoji_code, reaction_type: emoji.reaction_type }).catch((e) => alertLater(errorText(e)));
}

/** Errors of one-click actions go to the page's status line. */
export let alertLater: (text: string) => void = () => {};
export function setAlert(show: (text: string) => void): void {
  alertLater = show;
}

/**
 * What a row shows besides the message object, which events change in place: the row
 * re-renders when one of these differs (@preact/signals skips re-rendering a component
 * with hook state whose props are unchanged), and only then, so a new page of the feed
 * or a change elsewhere does not re-render every row in the window.
 */
export function rowFacts(m: Message) {
  const user = S.users.get(m.sender_id);
  return {
    content: m.content,
    flags: m.flags,
    reactions: m.reactions,
    reactors: m.reactions.length ? m.reactions.map((r) => userName(r.user_id)).join() : "",
    unread: S.unread.has(m.id),
    edited: m.last_edit_timestamp,
    moved: m.last_moved_timestamp,
    subject: m.subject,
    sender: user?.full_name ?? m.sender_full_name,
    avatar: m.avatar_url ?? user?.avatar_url,
    clock: prefs.twenty_four_hour_time,
    actionsAlways: phoneWidth.value,
    // The organization's rules decide which actions the row offers.
    mayEdit: mayEditContent(m),
    mayMove: mayMoveTopic(m),
  };
}

export function MessageRow({ m, showSender, isNewDivider, mayEdit, mayMove, actionsAlways }: { m: Message; showSender: boolean; isNewDivider: boolean } & ReturnType<typeof rowFacts>) {
  const [mode, setMode] = useState<"view" | "edit" | "delete" | "react" | "move">("view");
  const [draft, setDraft] = useState("");
  const [error, setError] = useState("");
  /** Hovered or holding the focus: the action buttons are in the page only then (see phoneWidth). */
  const [active, setActive] = useState(false);
  const mine = m.sender_id === S.me.user_id;
  const starred = m.flags.includes("starred");
  const unread = S.unread.has(m.id);
  const body = useRef<HTMLDivElement>(null);
  // The server writes Unicode emoji as `<span class="emoji emoji-1f642">:smile:</span>`
  // for a sprite sheet; this client shows the character itself.
  useLayoutEffect(() => {
    // Most messages have none: no query of their body.
    if (!m.content.includes("emoji-")) return;
    for (const span of Array.from(body.current?.querySelectorAll<HTMLElement>("span.emoji") ?? [])) {
      const code = /\bemoji-([0-9a-f-]+)\b/.exec(span.className)?.[1];
      if (code) span.textContent = unicodeGlyph(code);
    }
  }, [m.content, mode]);

  const startEdit = async () => {
    setError("");
    try {
      setDraft(await rawContent(m.id));
      setMode("edit");
    } catch (e) {
      setError(errorText(e));
    }
  };
  const saveEdit = async () => {
    try {
      await api("PATCH", `/messages/${m.id}`, { content: draft });
      setMode("view");
      setError("");
    } catch (e) {
      setError(errorText(e));
    }
  };
  const remove = async () => {
    try {
      await api("DELETE", `/messages/${m.id}`);
    } catch (e) {
      setError(errorText(e));
      setMode("view");
    }
  };
  const toggleStar = async () => {
    try {
      await api("POST", "/messages/flags", { messages: [m.id], op: starred ? "remove" : "add", flag: "starred" });
    } catch (e) {
      setError(errorText(e));
    }
  };
  const sender = S.users.get(m.sender_id)?.full_name ?? m.sender_full_name;

  return (
    <>
      {isNewDivider && <div class="new-divider" role="separator">New messages</div>}
      <article class={`msg${showSender ? " first" : ""}${unread ? " unread" : ""}${mine ? " mine" : ""}`} data-id={m.id} aria-label={`${sender} at ${timeOf(m.timestamp)}`}
        onMouseEnter={() => setActive(true)}
        onMouseLeave={(e) => setActive(e.currentTarget.contains(document.activeElement))}
        onFocusIn={() => setActive(true)}
        onFocusOut={(e) => setActive(e.currentTarget.contains(e.relatedTarget as Node | null) || e.currentTarget.matches(":hover"))}>
        {showSender ? (
          <>
            <button type="button" class="sender-avatar" aria-label={`Profile of ${sender}`}><Avatar userId={m.sender_id} url={m.avatar_url} name={sender} /></button>
            <button type="button" class="sender" aria-haspopup="dialog">{sender}</button>
            {/* The full date is wanted only on hover, which is when `active` is set. */}
            <time class="sent" dateTime={new Date(m.timestamp * 1000).toISOString()} title={active ? fullFormat.format(m.timestamp * 1000) : undefined}>{timeOf(m.timestamp)}</time>
          </>
        ) : <time class="side-time">{timeOf(m.timestamp)}</time>}
        {mode === "edit" ? (
          <form class="edit-form" onSubmit={(e) => (e.preventDefault(), void saveEdit())}>
            <textarea aria-label="Edit message" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} onKeyDown={(e) => {
              if (e.key === "Enter" && !e.shiftKey) (e.preventDefault(), void saveEdit());
              if (e.key === "Escape") setMode("view");
            }} />
            <button type="submit" class="primary">Save</button>
            <button type="button" onClick={() => setMode("view")}>Cancel</button>
          </form>
        ) : (
          <div class="rendered" ref={body} dangerouslySetInnerHTML={{ __html: m.content }} />
        )}
        {(m.last_edit_timestamp || m.last_moved_timestamp) && mode !== "edit" && (
          <span class="edited">{m.last_edit_timestamp ? "(edited)" : "(moved)"}</span>
        )}
        {m.reactions.length > 0 && <Reactions m={m} />}
        {mode === "delete" && (
          <div class="confirm" role="alertdialog" aria-label="Delete message">
            Delete this message?{" "}
            <button type="button" class="danger" onClick={() => void remove()}>Delete</button>
            <button type="button" onClick={() => setMode("view")}>Cancel</button>
          </div>
        )}
        {mode === "react" && (
          <EmojiPicker onClose={() => setMode("view")} onPick={(choice) => {
            setMode("view");
            const mineAlready = m.reactions.some((r) => r.user_id === S.me.user_id && r.emoji_code === choice.emoji_code);
            void react(m, choice, mineAlready);
          }} />
        )}
        {mode === "move" && <MoveTopicForm m={m} onDone={() => setMode("view")} />}
        {error && <p class="error" role="alert">{error}</p>}
        {(active || actionsAlways || mode !== "view") && (
          <div class="msg-actions">
            <button type="button" class="act-react" title="Add a reaction" aria-label="Add a reaction" onClick={() => setMode(mode === "react" ? "view" : "react")}>☺</button>
            <button type="button" class={`act-star${starred ? " on" : ""}`} title={starred ? "Unstar" : "Star"} aria-label={starred ? "Unstar" : "Star"} aria-pressed={starred} onClick={() => void toggleStar()}>{starred ? "★" : "☆"}</button>
            <button type="button" class="act-quote" title="Quote and reply" aria-label="Quote and reply" onClick={() => void quoteAndReply(m).catch((e) => setError(errorText(e)))}>❝</button>
            <button type="button" class="act-unread" title="Mark as unread from here" aria-label="Mark as unread from here" onClick={() => void markUnreadFromHere(m).catch((e) => setError(errorText(e)))}>◉</button>
            {mayMove && <button type="button" class="act-move" title="Move topic" aria-label="Move topic" onClick={() => setMode(mode === "move" ? "view" : "move")}>⇄</button>}
            {mayEdit && <button type="button" class="act-edit" title="Edit" aria-label="Edit" onClick={() => void startEdit()}>✎</button>}
            {mine && <button type="button" class="act-delete" title="Delete" aria-label="Delete" onClick={() => setMode("delete")}>🗑</button>}
          </div>
        )}
      </article>
    </>
  );
}

