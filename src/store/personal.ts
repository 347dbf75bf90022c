import type { Store } from "./db";

/** Per-user data that only its owner sees: alert words, muted users, saved snippets. */

export function getAlertWords(store: Store, userId: number): string[] {
  return (store.dbs.alertWords.get(userId) as string[] | undefined) ?? [];
}

export function putAlertWords(store: Store, userId: number, words: string[]): void {
  if (words.length === 0) store.dbs.alertWords.remove(userId);
  else store.dbs.alertWords.put(userId, words);
}

export interface MutedUser {
  id: number;
  timestamp: number;
}

export function getMutedUsers(store: Store, userId: number): MutedUser[] {
  const out: MutedUser[] = [];
  for (const { key, value } of store.dbs.mutedUsers.getRange({ start: [userId], end: [userId + 1] })) {
    out.push({ id: (key as number[])[1], timestamp: value as number });
  }
  return out;
}

export function isMuted(store: Store, userId: number, mutedId: number): boolean {
  return store.dbs.mutedUsers.get([userId, mutedId]) !== undefined;
}

export function putMuted(store: Store, userId: number, mutedId: number, timestamp: number | null): void {
  if (timestamp === null) store.dbs.mutedUsers.remove([userId, mutedId]);
  else store.dbs.mutedUsers.put([userId, mutedId], timestamp);
}

export interface SavedSnippet {
  id: number;
  title: string;
  content: string;
  date_created: number;
}

export function getSavedSnippets(store: Store, userId: number): SavedSnippet[] {
  const out: SavedSnippet[] = [];
  for (const { value } of store.dbs.savedSnippets.getRange({ start: [userId], end: [userId + 1] })) out.push(value as SavedSnippet);
  return out;
}

export function getSavedSnippet(store: Store, userId: number, id: number): SavedSnippet | undefined {
  return store.dbs.savedSnippets.get([userId, id]) as SavedSnippet | undefined;
}

export function putSavedSnippet(store: Store, userId: number, snippet: SavedSnippet | { id: number; deleted: true }): void {
  if ("deleted" in snippet) store.dbs.savedSnippets.remove([userId, snippet.id]);
  else store.dbs.savedSnippets.put([userId, snippet.id], snippet);
}

export interface UserStatusRecord {
  status_text: string;
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
}

export function getUserStatus(store: Store, userId: number): UserStatusRecord | undefined {
  return store.dbs.userStatus.get(userId) as UserStatusRecord | undefined;
}

export function putUserStatus(store: Store, userId: number, status: UserStatusRecord): void {
  if (status.status_text === "" && status.emoji_name === "") store.dbs.userStatus.remove(userId);
  else store.dbs.userStatus.put(userId, status);
}

export function* allUserStatuses(store: Store): Generator<[number, UserStatusRecord]> {
  for (const { key, value } of store.dbs.userStatus.getRange({})) yield [key as number, value as UserStatusRecord];
}
