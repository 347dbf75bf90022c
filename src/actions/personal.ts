import type { Hearth } from "../context";
import { ApiError, badRequest } from "../errors";
import type { UserRecord } from "../store/users";
import {
  getAlertWords,
  getMutedUsers,
  getSavedSnippet,
  isMuted,
  putAlertWords,
  putMuted,
  putSavedSnippet,
  type SavedSnippet,
} from "../store/personal";
import { accessUser } from "./users";
import { SERVER_LIMITS } from "../views/realm-settings";

/*
 * Per-user settings lists. Each change reaches only the user's own queues, with the
 * whole new list (alert_words, muted_users) or the one changed item (saved_snippets),
 * as Zulip sends them.
 */

function cleanAlertWords(words: string[]): string[] {
  return words.map((w) => w.trim()).filter((w) => w !== "");
}

/** Adds words not already present (case-insensitively), keeping the first spelling. */
export async function doAddAlertWords(h: Hearth, user: UserRecord, words: string[]): Promise<string[]> {
  const result = await h.store.commit(() => {
    const current = getAlertWords(h.store, user.id);
    const seen = new Set(current.map((w) => w.toLowerCase()));
    const next = [...current];
    for (const word of cleanAlertWords(words)) {
      if (seen.has(word.toLowerCase())) continue;
      seen.add(word.toLowerCase());
      next.push(word);
    }
    putAlertWords(h.store, user.id, next);
    return next;
  });
  h.events.publish({ type: "alert_words", alert_words: result }, [user.id]);
  return result;
}

export async function doRemoveAlertWords(h: Hearth, user: UserRecord, words: string[]): Promise<string[]> {
  const remove = new Set(cleanAlertWords(words).map((w) => w.toLowerCase()));
  const result = await h.store.commit(() => {
    const next = getAlertWords(h.store, user.id).filter((w) => !remove.has(w.toLowerCase()));
    putAlertWords(h.store, user.id, next);
    return next;
  });
  h.events.publish({ type: "alert_words", alert_words: result }, [user.id]);
  return result;
}

export async function checkMuteUser(h: Hearth, user: UserRecord, mutedId: number, mute: boolean): Promise<void> {
  if (mutedId === user.id && mute) throw badRequest("Cannot mute self");
  accessUser(h, mutedId, { allowDeactivated: true });
  const list = await h.store.commit(() => {
    const already = isMuted(h.store, user.id, mutedId);
    if (mute && already) throw badRequest("User already muted");
    if (!mute && !already) throw badRequest("User is not muted");
    putMuted(h.store, user.id, mutedId, mute ? Math.floor(Date.now() / 1000) : null);
    return getMutedUsers(h.store, user.id);
  });
  h.events.publish({ type: "muted_users", muted_users: list }, [user.id]);
}

const snippetNotFound = () => new ApiError("Saved snippet does not exist.", "BAD_REQUEST", 404);

function checkSnippetText(title: string | undefined, content: string | undefined): void {
  if (title !== undefined && title.trim() === "") throw badRequest("Title cannot be empty.");
  if (content !== undefined && content.trim() === "") throw badRequest("Content cannot be empty.");
  if (title !== undefined && title.length > 60) throw badRequest("title is too long (limit: 60 characters)");
  if (content !== undefined && content.length > SERVER_LIMITS.max_message_length) {
    throw badRequest(`content is too long (limit: ${SERVER_LIMITS.max_message_length} characters)`);
  }
}

export async function doCreateSavedSnippet(h: Hearth, user: UserRecord, title: string, content: string): Promise<SavedSnippet> {
  checkSnippetText(title, content);
  const snippet = await h.store.commit(() => {
    const created: SavedSnippet = { id: h.store.nextId("saved_snippet"), title: title.trim(), content, date_created: Math.floor(Date.now() / 1000) };
    putSavedSnippet(h.store, user.id, created);
    return created;
  });
  h.events.publish({ type: "saved_snippets", op: "add", saved_snippet: snippet }, [user.id]);
  return snippet;
}

export async function doEditSavedSnippet(h: Hearth, user: UserRecord, id: number, changes: { title?: string; content?: string }): Promise<void> {
  checkSnippetText(changes.title, changes.content);
  if (changes.title === undefined && changes.content === undefined) throw badRequest("No changes were requested");
  const snippet = await h.store.commit(() => {
    const current = getSavedSnippet(h.store, user.id, id);
    if (!current) throw snippetNotFound();
    const next = { ...current, ...(changes.title !== undefined ? { title: changes.title.trim() } : {}), ...(changes.content !== undefined ? { content: changes.content } : {}) };
    putSavedSnippet(h.store, user.id, next);
    return next;
  });
  h.events.publish({ type: "saved_snippets", op: "update", saved_snippet: snippet }, [user.id]);
}

export async function doDeleteSavedSnippet(h: Hearth, user: UserRecord, id: number): Promise<void> {
  await h.store.commit(() => {
    if (!getSavedSnippet(h.store, user.id, id)) throw snippetNotFound();
    putSavedSnippet(h.store, user.id, { id, deleted: true });
  });
  h.events.publish({ type: "saved_snippets", op: "remove", saved_snippet_id: id }, [user.id]);
}
