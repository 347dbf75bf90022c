import type { Hearth } from "../context";
import { ApiError, badRequest } from "../errors";
import { getSavedSnippet, type SavedSnippet } from "../store/personal";
import type { UserRecord } from "../store/users";

export const MAX_SNIPPET_TITLE_LENGTH = 60;
export const MAX_SNIPPET_CONTENT_LENGTH = 10000;

const snippetMissing = () => new ApiError("Saved snippet does not exist.", "BAD_REQUEST", 404);

function checkTitle(title: string): string {
  const t = title.trim();
  if (t === "") throw badRequest("Title cannot be empty.");
  if (t.length > MAX_SNIPPET_TITLE_LENGTH) throw badRequest(`title is too long (limit: ${MAX_SNIPPET_TITLE_LENGTH} characters)`);
  return t;
}

function checkContent(content: string): string {
  if (content.trim() === "") throw badRequest("Content cannot be empty.");
  if (content.length > MAX_SNIPPET_CONTENT_LENGTH) throw badRequest(`content is too long (limit: ${MAX_SNIPPET_CONTENT_LENGTH} characters)`);
  return content;
}

export async function doCreateSavedSnippet(h: Hearth, user: UserRecord, title: string, content: string): Promise<SavedSnippet> {
  const checked = { title: checkTitle(title), content: checkContent(content) };
  const snippet = await h.store.commit(() => {
    const s: SavedSnippet = { id: h.store.nextId("saved_snippet"), ...checked, date_created: Math.floor(Date.now() / 1000) };
    h.store.dbs.savedSnippets.put([user.id, s.id], s);
    return s;
  });
  h.events.publish({ type: "saved_snippets", op: "add", saved_snippet: snippet }, [user.id]);
  return snippet;
}

export async function doEditSavedSnippet(h: Hearth, user: UserRecord, id: number, changes: { title?: string; content?: string }): Promise<void> {
  if (changes.title === undefined && changes.content === undefined) throw badRequest("No new values provided.");
  const title = changes.title === undefined ? undefined : checkTitle(changes.title);
  const content = changes.content === undefined ? undefined : checkContent(changes.content);
  const snippet = await h.store.commit(() => {
    const current = getSavedSnippet(h.store, user.id, id);
    if (!current) throw snippetMissing();
    const next = { ...current, ...(title !== undefined ? { title } : {}), ...(content !== undefined ? { content } : {}) };
    h.store.dbs.savedSnippets.put([user.id, id], next);
    return next;
  });
  h.events.publish({ type: "saved_snippets", op: "update", saved_snippet: snippet }, [user.id]);
}

export async function doDeleteSavedSnippet(h: Hearth, user: UserRecord, id: number): Promise<void> {
  await h.store.commit(() => {
    if (!getSavedSnippet(h.store, user.id, id)) throw snippetMissing();
    h.store.dbs.savedSnippets.remove([user.id, id]);
  });
  h.events.publish({ type: "saved_snippets", op: "remove", saved_snippet_id: id }, [user.id]);
}
