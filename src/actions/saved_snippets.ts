import type { Hearth } from "../context";
import { ApiError, badRequest } from "../errors";
import { getSavedSnippet, putSavedSnippet, removeSavedSnippet, type SavedSnippet } from "../store/personal";
import type { UserRecord } from "../store/users";
import { commit } from "../events/commit";

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
  return commit(h, (tx) => {
    const snippet: SavedSnippet = { id: h.store.nextId("saved_snippet"), ...checked, date_created: Math.floor(Date.now() / 1000) };
    putSavedSnippet(h.store, user.id, snippet);
    tx.notify({ type: "saved_snippets", op: "add", saved_snippet: snippet }, [user.id]);
    return snippet;
  });
}

export async function doEditSavedSnippet(h: Hearth, user: UserRecord, id: number, changes: { title?: string; content?: string }): Promise<void> {
  if (changes.title === undefined && changes.content === undefined) throw badRequest("No new values provided.");
  const title = changes.title === undefined ? undefined : checkTitle(changes.title);
  const content = changes.content === undefined ? undefined : checkContent(changes.content);
  await commit(h, (tx) => {
    const current = getSavedSnippet(h.store, user.id, id);
    if (!current) throw snippetMissing();
    const snippet = { ...current, ...(title !== undefined ? { title } : {}), ...(content !== undefined ? { content } : {}) };
    putSavedSnippet(h.store, user.id, snippet);
    tx.notify({ type: "saved_snippets", op: "update", saved_snippet: snippet }, [user.id]);
  });
}

export async function doDeleteSavedSnippet(h: Hearth, user: UserRecord, id: number): Promise<void> {
  await commit(h, (tx) => {
    if (!getSavedSnippet(h.store, user.id, id)) throw snippetMissing();
    removeSavedSnippet(h.store, user.id, id);
    tx.notify({ type: "saved_snippets", op: "remove", saved_snippet_id: id }, [user.id]);
  });
}
