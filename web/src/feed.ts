/**
 * The open view: which narrow, which of its messages are loaded (ascending ids), and
 * whether the oldest and newest are among them. Messages are fetched around the
 * first unread one, then page by page with anchors as the reader scrolls.
 */
import { api, errorText } from "./api";
import type { Message } from "./model";
import { apiNarrow, narrowMatches, type Narrow } from "./narrow";
import { changed, markUnread, noteMessage, S } from "./state";

export interface Feed {
  narrow: Narrow;
  ids: number[];
  foundOldest: boolean;
  foundNewest: boolean;
  loading: boolean;
  error: string;
  /** The first message unread when the view opened: the "new messages" divider goes above it. */
  firstUnread: number | null;
}

export const PAGE = 100;

export const feed: Feed = { narrow: { kind: "recent" }, ids: [], foundOldest: false, foundNewest: false, loading: false, error: "", firstUnread: null };

/** Each openNarrow call gets a number; answers for an older one are dropped. */
let generation = 0;

async function fetchMessages(n: Narrow, anchor: number | string, before: number, after: number): Promise<{ messages: Message[]; found_oldest: boolean; found_newest: boolean }> {
  return api("GET", "/messages", {
    anchor: String(anchor),
    num_before: before,
    num_after: after,
    narrow: apiNarrow(n),
    apply_markdown: true,
    client_gravatar: false,
  });
}

function take(messages: Message[]): number[] {
  for (const m of messages) {
    noteMessage(m);
    markUnread(m);
  }
  return messages.map((m) => m.id);
}

export async function openNarrow(n: Narrow): Promise<void> {
  const gen = ++generation;
  Object.assign(feed, { narrow: n, ids: [], foundOldest: false, foundNewest: false, loading: true, error: "", firstUnread: null });
  changed();
  try {
    const anchor = n.kind === "recent" ? "newest" : "first_unread";
    const result = await fetchMessages(n, anchor, n.kind === "recent" ? 400 : PAGE / 2, n.kind === "recent" ? 0 : PAGE / 2);
    if (gen !== generation) return;
    const ids = take(result.messages);
    const firstUnread = result.messages.find((m) => !m.flags.includes("read"))?.id ?? null;
    Object.assign(feed, { ids, foundOldest: result.found_oldest, foundNewest: result.found_newest, loading: false, firstUnread });
  } catch (e) {
    if (gen !== generation) return;
    Object.assign(feed, { loading: false, error: errorText(e) });
  }
  changed();
}

/** The page before (older) or after (newer) what is loaded. */
export async function loadMore(direction: "older" | "newer"): Promise<void> {
  if (feed.loading || !feed.ids.length) return;
  if (direction === "older" ? feed.foundOldest : feed.foundNewest) return;
  const gen = generation;
  feed.loading = true;
  changed();
  try {
    const older = direction === "older";
    const anchor = older ? feed.ids[0] : feed.ids[feed.ids.length - 1];
    const result = await fetchMessages(feed.narrow, anchor, older ? PAGE : 0, older ? 0 : PAGE);
    if (gen !== generation) return;
    const known = new Set(feed.ids);
    const fresh = take(result.messages).filter((id) => !known.has(id));
    feed.ids = older ? [...fresh, ...feed.ids] : [...feed.ids, ...fresh];
    if (older) feed.foundOldest = result.found_oldest;
    else feed.foundNewest = result.found_newest;
    feed.error = "";
  } catch (e) {
    if (gen === generation) feed.error = errorText(e);
  } finally {
    if (gen === generation) feed.loading = false;
    changed();
  }
}

/** A message that just arrived joins the view when it belongs there and the view reaches the present. */
export function offerMessage(m: Message): void {
  if (!feed.foundNewest || feed.loading) return;
  const matches = feed.narrow.kind === "recent" ? true : narrowMatches(feed.narrow, m, S.me.user_id);
  if (!matches || feed.ids.includes(m.id)) return;
  const last = feed.ids[feed.ids.length - 1];
  if (last === undefined || last < m.id) feed.ids.push(m.id);
  else feed.ids = [...feed.ids, m.id].sort((a, b) => a - b);
}

/** After an edit, move, star or delete: drop what no longer belongs. */
export function refilter(): void {
  if (feed.narrow.kind === "recent" || feed.narrow.kind === "search") {
    feed.ids = feed.ids.filter((id) => S.messages.has(id));
    return;
  }
  feed.ids = feed.ids.filter((id) => {
    const m = S.messages.get(id);
    return m && narrowMatches(feed.narrow, m, S.me.user_id) !== false;
  });
}
