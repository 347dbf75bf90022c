/**
 * The message feed of the open view, grouped under recipient bars. With many
 * messages loaded only a window of them is in the page; scrolling near either end
 * moves the window or fetches the next page, keeping the message under the reader's
 * eyes where it was. Unread messages that are on screen while the page is visible
 * are marked read.
 */
import { signal, useComputed } from "@preact/signals";
import { Component } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { api } from "./api";
import { feed, loadMore } from "./feed";
import { dateOf, MessageRow, rowFacts } from "./message";
import { autoReadPaused } from "./message_actions";
import type { Message } from "./model";
import { conversationKey, narrowHash, type Narrow } from "./narrow";
import { changed, channelName, S, userName } from "./state";

/** Messages in the page at once. */
const WINDOW = 150;
/** How far the window moves at a time (a smaller step made more long frames: docs/benchmarks.md); an older page is fetched while the window's start is this near the loaded start. */
const STEP = 50;
/**
 * Rows a view that just opened renders in its first frame: a screenful and more. The
 * rest of the window follows once that frame is painted, so a narrow switch shows its
 * messages after rendering a fifth of them (docs/benchmarks.md).
 */
const FIRST = 30;
/**
 * Rows shown a frame when the window moves up: a step's new rows are in the page at once
 * but empty, and fill in from the bottom up a few a frame above what the reader sees, so
 * no one frame renders the whole step (docs/benchmarks.md).
 */
const CHUNK = 10;
/** Rows of messages older than this are still empty (0: none). */
const shownFrom = signal(0);
/**
 * Blank space above the rows, in px, that rows added above take up instead of pushing the
 * rows below them down: those keep their place in the scroller, so the browser neither
 * lays out, repaints nor rasterizes them again for every step and chunk (it did, for the
 * whole window, each time the scroll position made up for rows added above; docs/benchmarks.md).
 * It is made up once every SPARE px of history, and taken out at the view's beginning.
 */
const SPARE = 20_000;
/**
 * The first message of the group under the top of the feed, whose recipient bar stays
 * shown there (as in Zulip's web app) while any message of that group is read; null while
 * that group's own bar is wholly in view. One bar over the feed, set on scroll from the
 * same bisection over the row wrappers that the anchoring uses, rather than each group's
 * rows wrapped in an element for its bar to stick within (which would regroup the
 * wrappers whenever the window moves).
 */
const topBar = signal<Message | null>(null);

export const hashOf = (n: Narrow) => narrowHash(n, { channel: channelName, user: userName });

function RecipientBar({ m, copy = false }: { m: Message; copy?: boolean }) {
  // The bar over the feed repeats an in-flow bar: out of the tab order (the in-flow one is in it).
  const tab = copy ? -1 : undefined;
  if (m.type === "stream" && m.stream_id !== undefined) {
    const sub = S.subs.get(m.stream_id);
    const name = sub?.name ?? (typeof m.display_recipient === "string" ? m.display_recipient : "");
    return (
      <div class="recipient-bar" style={sub ? { borderLeftColor: sub.color } : undefined}>
        <a href={hashOf({ kind: "channel", streamId: m.stream_id })} class="bar-channel" tabIndex={tab}>#{name}</a>
        <a href={hashOf({ kind: "channel", streamId: m.stream_id, topic: m.subject })} class="bar-topic" tabIndex={tab}>{m.subject || "general chat"}</a>
        <span class="bar-date">{dateOf(m.timestamp)}</span>
      </div>
    );
  }
  const others = Array.isArray(m.display_recipient) ? m.display_recipient.filter((r) => r.id !== S.me.user_id) : [];
  const ids = (others.length ? others.map((r) => r.id) : [S.me.user_id]).sort((a, b) => a - b);
  return (
    <div class="recipient-bar dm-bar">
      <a href={hashOf({ kind: "dm", ids })} tabIndex={tab}>You and {others.length ? others.map((r) => userName(r.id)).join(", ") : "yourself"}</a>
      <span class="bar-date">{dateOf(m.timestamp)}</span>
    </div>
  );
}

/** What a recipient bar shows besides the message: it renders again only when that changed. */
function barFacts(m: Message): string {
  if (m.type === "stream" && m.stream_id !== undefined) {
    const sub = S.subs.get(m.stream_id);
    return `${sub?.name}\u0000${sub?.color}\u0000${m.subject}\u0000${dateOf(m.timestamp)}`;
  }
  const others = Array.isArray(m.display_recipient) ? m.display_recipient.map((r) => userName(r.id)).join() : "";
  return `${others}\u0000${dateOf(m.timestamp)}`;
}

class Bar extends Component<{ m: Message; facts: string }> {
  override shouldComponentUpdate(next: { m: Message; facts: string }) {
    return next.m !== this.props.m || next.facts !== this.props.facts;
  }
  render() {
    return <RecipientBar m={this.props.m} />;
  }
}

/** The bar of the group under the top of the feed (see topBar); `version` renders it again when names or colours change. */
function TopBar(_: { version: number }) {
  const m = topBar.value;
  return <div class="feed-top-bar" aria-hidden="true">{m && <RecipientBar m={m} copy />}</div>;
}

/** Read flags waiting to be sent, in one request per batch. */
const toMarkRead = new Set<number>();
let flushTimer: ReturnType<typeof setTimeout> | null = null;
function markRead(id: number): void {
  if (toMarkRead.has(id) || !S.unread.has(id) || autoReadPaused(id)) return;
  toMarkRead.add(id);
  // Shown read at once; the server's event confirms it.
  S.unread.delete(id);
  S.unreadMentions.delete(id);
  changed();
  flushTimer ??= setTimeout(() => {
    const ids = [...toMarkRead];
    toMarkRead.clear();
    flushTimer = null;
    void api("POST", "/messages/flags", { messages: ids, op: "add", flag: "read" }).catch(() => {
      // The server keeps them unread; the next register shows that.
    });
  }, 300);
}

export function FeedView({ version }: { version: number }) {
  const scroller = useRef<HTMLDivElement>(null);
  const [startId, setStartId] = useState<number | null>(null);
  const [pinnedEnd, setPinnedEnd] = useState(true);
  const positioned = useRef<string>("");
  /** The view whose whole window is rendered: one that just opened shows its first screenful first. */
  const [complete, setComplete] = useState("");
  const spacer = useRef<HTMLDivElement>(null);
  /** The spacer's height (see SPARE). */
  const spare = useRef(0);
  /** The first message of the window, for moving it after a fetch (indexes change when a page is prepended). */
  const windowTop = useRef<number | null>(null);
  /** Each shown row's id → the first message of its group (the one rendered with the bar). */
  const groupHead = useRef(new Map<number, Message>());
  const ids = feed.ids;
  const viewKey = hashOf(feed.narrow);

  let start = pinnedEnd || startId === null ? Math.max(0, ids.length - WINDOW) : Math.max(0, ids.findIndex((id) => id >= startId));
  if (start > Math.max(0, ids.length - WINDOW)) start = Math.max(0, ids.length - WINDOW);
  const end = Math.min(ids.length, start + WINDOW);
  // The first screenful: from just above the first unread message, else the newest.
  let from = start;
  let to = end;
  if (complete !== viewKey && end - start > FIRST) {
    const unreadAt = feed.firstUnread === null ? -1 : ids.indexOf(feed.firstUnread, start);
    from = unreadAt >= 0 && unreadAt < end ? Math.max(start, Math.min(unreadAt - 5, end - FIRST)) : end - FIRST;
    to = from + FIRST;
  }
  windowTop.current = ids[start] ?? null;
  const shown = ids.slice(from, to).map((id) => S.messages.get(id)).filter((m): m is Message => !!m);

  // Before the page changes: what the reader is looking at, to keep it in place.
  const el = scroller.current;
  let anchor: { id: string; top: number } | null = null;
  let atBottom = true;
  if (el) {
    atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
    const row = firstRowBelow(el, el.scrollTop);
    if (row) anchor = { id: row.dataset.row!, top: row.offsetTop - el.scrollTop };
  }

  useLayoutEffect(() => {
    const box = scroller.current;
    if (!box) return;
    // Another view: no blank space above its rows.
    if (positioned.current !== viewKey && spare.current) setSpare(0);
    if (positioned.current !== viewKey && !feed.loading) {
      // A view just opened: its first unread message, else its end; the rest of the window after this frame.
      positioned.current = viewKey;
      const first = feed.firstUnread !== null ? box.querySelector<HTMLElement>(`.msg-wrap[data-row="${feed.firstUnread}"]`) : null;
      if (first) box.scrollTop = first.offsetTop - 60;
      else box.scrollTop = box.scrollHeight;
      requestAnimationFrame(() => setTimeout(() => setComplete(viewKey), 0));
    } else if (atBottom && pinnedEnd) box.scrollTop = box.scrollHeight;
    else if (anchor) {
      const row = box.querySelector<HTMLElement>(`.msg-wrap[data-row="${anchor.id}"]`);
      if (row) keepInPlace(box, row.offsetTop - anchor.top - box.scrollTop);
    }
    seeUnread(box);
    showTopBar(box, groupHead.current);
  });

  useEffect(() => {
    setStartId(null);
    setPinnedEnd(true);
    shownFrom.value = 0;
    topBar.value = null;
  }, [viewKey]);

  useEffect(() => {
    const look = () => scroller.current && seeUnread(scroller.current);
    document.addEventListener("visibilitychange", look);
    window.addEventListener("focus", look);
    return () => {
      document.removeEventListener("visibilitychange", look);
      window.removeEventListener("focus", look);
    };
  }, []);

  const setSpare = (height: number) => {
    spare.current = height;
    if (spacer.current) spacer.current.style.height = `${height}px`;
  };
  /**
   * The rows under the reader's eyes moved down by `shift` px (rows were added above, or up
   * when rows went): the spacer gives that room back, else the scroll position follows. At
   * the view's beginning, fully shown, the spacer goes (the scroll position follows, once).
   */
  const keepInPlace = (box: HTMLElement, shift: number) => {
    let room = spare.current - shift;
    if (feed.foundOldest && windowTop.current === feed.ids[0] && !shownFrom.peek()) room = 0;
    // Out of room: made up at once, the rows move (and are painted again) this once.
    else if (room < 0) room += SPARE;
    const moved = room - spare.current + shift;
    if (room !== spare.current) setSpare(room);
    if (moved) box.scrollTop += moved;
  };
  /** How far the reader is below the first row of the window. */
  const fromTop = (box: HTMLElement) => box.scrollTop - spare.current;

  /** The window moves up a step through what is loaded (one step of rows rendered, not a whole window). */
  const moveUp = () => {
    const at = windowTop.current === null ? -1 : feed.ids.indexOf(windowTop.current);
    if (at <= 0 || shownFrom.peek() > 0) return false;
    const next = Math.max(0, at - STEP);
    const added = feed.ids.slice(next, at);
    const hidden = Math.max(0, added.length - CHUNK);
    shownFrom.value = hidden ? added[hidden] : 0;
    // Up to the window's start as it is then (a page that came meanwhile may have moved it).
    const fill = () => {
      const box = scroller.current;
      const height = box?.scrollHeight ?? 0;
      const edge = feed.ids.indexOf(shownFrom.peek());
      const top = windowTop.current === null ? -1 : feed.ids.indexOf(windowTop.current);
      shownFrom.value = edge > 0 && edge - CHUNK > top ? feed.ids[edge - CHUNK] : 0;
      // The rows render in a microtask queued before this one; all of them are above what the reader sees.
      queueMicrotask(() => {
        if (box) keepInPlace(box, box.scrollHeight - height);
      });
      if (shownFrom.peek()) requestAnimationFrame(fill);
    };
    // Not in the step's own frame, which renders the step's first CHUNK rows: a frame callback asked
    // for in a scroll handler runs in that same frame, so the filling starts from the one after.
    if (hidden) requestAnimationFrame(() => requestAnimationFrame(fill));
    setStartId(feed.ids[next]);
    setPinnedEnd(false);
    return true;
  };

  const onScroll = () => {
    const box = scroller.current!;
    seeUnread(box);
    showTopBar(box, groupHead.current);
    if (complete !== viewKey) return;
    if (fromTop(box) < 400) moveUp();
    else if (box.scrollHeight - box.scrollTop - box.clientHeight < 400) {
      if (end < ids.length) {
        const next = start + STEP;
        setPinnedEnd(next + WINDOW >= ids.length);
        setStartId(ids[next]);
      } else if (!feed.foundNewest && !feed.loading) void loadMore("newer");
    }
    // The older page is fetched ahead, while the reader is still in the upper part of a window
    // near the loaded start; a reader already at the top moves on to it when it comes.
    if (start < STEP && (fromTop(box) < 400 || fromTop(box) < (box.scrollHeight - spare.current) / 3) && !feed.foundOldest && !feed.loading) {
      void loadMore("older").then(() => {
        if (scroller.current && fromTop(scroller.current) < 400) moveUp();
      });
    }
  };

  let previous: Message | null = null;
  let head: Message | null = null;
  const heads = (groupHead.current = new Map<number, Message>());
  return (
    <div class="feed" ref={scroller} onScroll={onScroll} data-version={version} aria-busy={feed.loading}>
      <TopBar version={version} />
      <div class="feed-spacer" ref={spacer} aria-hidden="true" />
      {feed.foundOldest && from === 0 && ids.length > 0 && <p class="feed-start">The beginning of this view.</p>}
      {feed.loading && <p class="loading">Loading…</p>}
      {feed.error && <p class="error" role="alert">{feed.error}</p>}
      {!feed.loading && !ids.length && !feed.error && <p class="empty">No messages here yet.</p>}
      {shown.map((m) => {
        const newGroup = !previous || conversationKey(previous, S.me.user_id) !== conversationKey(m, S.me.user_id) || dateOf(previous.timestamp) !== dateOf(m.timestamp);
        const showSender = newGroup || previous!.sender_id !== m.sender_id || m.timestamp - previous!.timestamp > 600;
        previous = m;
        if (newGroup || !head) head = m;
        heads.set(m.id, head);
        return <RowWrap key={m.id} m={m} bar={newGroup ? barFacts(m) : null} showSender={showSender} isNewDivider={m.id === feed.firstUnread && m.id !== ids[0]} {...rowFacts(m)} />;
      })}
    </div>
  );
}

type RowProps = { m: Message; bar: string | null; showSender: boolean; isNewDivider: boolean } & ReturnType<typeof rowFacts>;

/**
 * A row's wrapper (the feed anchors on these): empty while its message is older than
 * `shownFrom`; only the rows that fill in render again when that moves. Its props are
 * all plain values (the recipient bar's and the row's facts), so when the window moves
 * the wrappers whose rows did not change are skipped whole (@preact/signals compares
 * the props of a component that reads a signal), not re-rendered to compare new children.
 */
function RowWrap(props: RowProps) {
  const { m, bar } = props;
  const empty = useComputed(() => m.id < shownFrom.value).value;
  return (
    <div class="msg-wrap" data-row={m.id}>
      {empty ? null : (
        <>
          {bar !== null && <Bar m={m} facts={bar} />}
          <MessageRow {...props} />
        </>
      )}
    </div>
  );
}

/**
 * The first row (`.msg-wrap`) whose bottom is below `y` in the scroller: rows are in
 * order, so bisection measures a few of them rather than every one above the viewport.
 */
function firstRowBelow(box: HTMLElement, y: number, rows = box.querySelectorAll<HTMLElement>(".msg-wrap")): HTMLElement | null {
  let low = 0;
  let high = rows.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (rows[mid].offsetTop + rows[mid].offsetHeight > y) high = mid;
    else low = mid + 1;
  }
  return rows[low] ?? null;
}

/**
 * Sets topBar from the row under the top of the feed: the bar of its group, unless that row
 * is the group's first and its own bar is wholly in view. Reads only the few row offsets
 * of a bisection (layout is clean in a scroll handler and after the feed's own layout effect).
 */
function showTopBar(box: HTMLElement, heads: Map<number, Message>): void {
  const rows = box.querySelectorAll<HTMLElement>(".msg-wrap");
  if (!rows.length) {
    topBar.value = null;
    return;
  }
  // Row offsets are from their offset parent, which is the feed's own when the feed is not positioned.
  const base = rows[0].offsetParent === box ? 0 : box.offsetTop + box.clientTop;
  const top = box.scrollTop + base;
  const row = firstRowBelow(box, top, rows);
  const head = row ? heads.get(Number(row.dataset.row)) ?? null : null;
  topBar.value = head && (head.id !== Number(row!.dataset.row) || row!.offsetTop < top) ? head : null;
}

/** Marks read the unread messages wholly or mostly on screen, while the page is seen. */
function seeUnread(box: HTMLElement): void {
  if (document.visibilityState !== "visible") return;
  const view = box.getBoundingClientRect();
  for (const row of Array.from(box.querySelectorAll<HTMLElement>("article.msg.unread"))) {
    const rect = row.getBoundingClientRect();
    const visible = Math.min(rect.bottom, view.bottom) - Math.max(rect.top, view.top);
    if (visible >= Math.min(rect.height, view.height) * 0.6) markRead(Number(row.dataset.id));
  }
}
