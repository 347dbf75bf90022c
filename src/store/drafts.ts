import { valuesOf, type Store } from "./db";

/** A draft as stored and as the API shows it (Zulip's Draft object). */
export interface Draft {
  id: number;
  type: "" | "stream" | "private";
  to: number[];
  topic: string;
  content: string;
  timestamp: number;
}

/** The user's drafts in key order (by ID). */
export function userDrafts(store: Store, userId: number): Draft[] {
  return valuesOf<Draft>(store.dbs.drafts, userId);
}

export function getDraft(store: Store, userId: number, id: number): Draft | undefined {
  return store.dbs.drafts.get([userId, id]) as Draft | undefined;
}

/** Call inside `commit`. */
export function putDraft(store: Store, userId: number, draft: Draft): void {
  store.dbs.drafts.put([userId, draft.id], draft);
}

/** Call inside `commit`. */
export function removeDraft(store: Store, userId: number, id: number): void {
  store.dbs.drafts.remove([userId, id]);
}

/** Every draft the user stored; call inside `commit`. */
export function removeAllDrafts(store: Store, userId: number): void {
  for (const key of store.dbs.drafts.getKeys({ start: [userId], end: [userId, Infinity] })) store.dbs.drafts.remove(key);
}
