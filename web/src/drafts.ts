/**
 * Unsent text kept on the server with the drafts API (GET/POST/PATCH/DELETE
 * /drafts), so it survives a reload and follows the member to another browser.
 * One draft per conversation: a channel's topic, or a set of DM recipients. Saves
 * run one at a time, in order, so a quick edit never creates a second draft.
 */
import { api, csrfToken } from "./api";

export type DraftTarget = { kind: "channel"; streamId: number; topic: string } | { kind: "dm"; ids: number[] };

interface Draft {
  id: number;
  content: string;
}

const byKey = new Map<string, Draft>();
let loaded: Promise<void> | null = null;
let chain: Promise<unknown> = Promise.resolve();
const timers = new Map<string, ReturnType<typeof setTimeout>>();
/** Text typed in the last moment, not yet saved: sent as the page goes away. */
const unsaved = new Map<string, { t: DraftTarget; content: string }>();

export function draftKey(t: DraftTarget): string {
  return t.kind === "channel" ? `s:${t.streamId}:${t.topic.toLowerCase()}` : `d:${[...t.ids].sort((a, b) => a - b).join(",")}`;
}

function wire(t: DraftTarget, content: string) {
  const base = t.kind === "channel" ? { type: "stream", to: [t.streamId], topic: t.topic } : { type: "private", to: t.ids, topic: "" };
  return { ...base, content, timestamp: Math.floor(Date.now() / 1000) };
}

/** Fetches the member's drafts once; later calls wait for the same answer. */
export function loadDrafts(): Promise<void> {
  loaded ??= api("GET", "/drafts")
    .then((answer) => {
      // Newest last, so the newest draft of a conversation wins.
      for (const d of [...(answer.drafts ?? [])].sort((a: any, b: any) => a.timestamp - b.timestamp)) {
        const t: DraftTarget = d.type === "stream" ? { kind: "channel", streamId: d.to[0], topic: d.topic } : { kind: "dm", ids: d.to };
        byKey.set(draftKey(t), { id: d.id, content: d.content });
      }
    })
    .catch(() => {
      // Without drafts the box still works; nothing to restore.
    });
  return loaded;
}

/** Text the server holds as a draft (so leaving its conversation loses nothing). */
export const isSavedDraft = (content: string): boolean => !!content.trim() && [...byKey.values()].some((d) => d.content === content);

export const draftText = (t: DraftTarget): string => byKey.get(draftKey(t))?.content ?? "";

function write(t: DraftTarget, content: string): Promise<unknown> {
  const key = draftKey(t);
  chain = chain.then(async () => {
    const known = byKey.get(key);
    try {
      if (!content.trim()) {
        if (known) {
          byKey.delete(key);
          await api("DELETE", `/drafts/${known.id}`);
        }
      } else if (known) {
        known.content = content;
        await api("PATCH", `/drafts/${known.id}`, { draft: wire(t, content) });
      } else {
        const { ids } = await api("POST", "/drafts", { drafts: [wire(t, content)] });
        byKey.set(key, { id: ids[0], content });
      }
    } catch {
      // A draft that could not be saved is still in the box.
    }
  });
  return chain;
}

/** Saves the text a moment after typing stops (an empty box deletes the draft). */
export function saveDraftSoon(t: DraftTarget, content: string): void {
  const key = draftKey(t);
  clearTimeout(timers.get(key));
  unsaved.set(key, { t, content });
  timers.set(key, setTimeout(() => (timers.delete(key), unsaved.delete(key), void write(t, content)), 800));
}

/**
 * A reload or a closed tab right after typing: the last text goes out with `keepalive`,
 * which outlives the page (a PATCH of the known draft, else a new one).
 */
addEventListener("pagehide", () => {
  for (const [key, { t, content }] of unsaved) {
    clearTimeout(timers.get(key));
    const known = byKey.get(key);
    if (!content.trim() && !known) continue;
    const [method, path, body] = !content.trim()
      ? ["DELETE", `/json/drafts/${known!.id}`, undefined]
      : known
        ? ["PATCH", `/json/drafts/${known.id}`, new URLSearchParams({ draft: JSON.stringify(wire(t, content)) })]
        : ["POST", "/json/drafts", new URLSearchParams({ drafts: JSON.stringify([wire(t, content)]) })];
    void fetch(path, { method, body, keepalive: true, credentials: "same-origin", headers: { "X-CSRFToken": csrfToken() } }).catch(() => {});
  }
  unsaved.clear();
});

/** Saves now (leaving a conversation) or deletes (the message was sent). */
export function saveDraftNow(t: DraftTarget, content: string): Promise<unknown> {
  const key = draftKey(t);
  clearTimeout(timers.get(key));
  timers.delete(key);
  unsaved.delete(key);
  if ((byKey.get(key)?.content ?? "") === content && content.trim()) return chain;
  return write(t, content);
}
