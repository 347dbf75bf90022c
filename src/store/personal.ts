import { valuesOf, type Store } from "./db";
import { StoreCache } from "./cache";

/** Per-user state: alert words, muted users and saved snippets (which only their owner sees), and user statuses. */

/** Every message checks each recipient's alert words. */
const alertWordCache = new StoreCache<number, readonly string[]>();

export function getAlertWords(store: Store, userId: number): string[] {
  return [...alertWordCache.get(store, userId, () => (store.dbs.alertWords.get(userId) as string[] | undefined) ?? [])];
}

/** Users who have alert words, with their words: a message checks only these recipients. */
const alertWordsByUserCache = new StoreCache<"all", ReadonlyMap<number, readonly string[]>>();

export function alertWordsByUser(store: Store): ReadonlyMap<number, readonly string[]> {
  // Recomputed only after alert words change (every message send reads it).
  return alertWordsByUserCache.get(store, "all", () => {
    const out = new Map<number, readonly string[]>();
    for (const { key, value } of store.dbs.alertWords.getRange({})) out.set(key as number, value as string[]);
    return out;
  });
}

export function putAlertWords(store: Store, userId: number, words: string[]): void {
  alertWordCache.invalidate(store);
  alertWordsByUserCache.invalidate(store);
  if (words.length === 0) store.dbs.alertWords.remove(userId);
  else store.dbs.alertWords.put(userId, words);
}

export interface MutedUser {
  id: number;
  timestamp: number;
}

export function getMutedUsers(store: Store, userId: number): MutedUser[] {
  const out: MutedUser[] = [];
  for (const { key, value } of store.dbs.mutedUsers.getRange({ start: [userId], end: [userId, Infinity] })) {
    out.push({ id: (key as number[])[1], timestamp: value as number });
  }
  return out;
}

export function isMuted(store: Store, userId: number, mutedUserId: number): boolean {
  return store.dbs.mutedUsers.get([userId, mutedUserId]) !== undefined;
}

/** Call inside `commit`. */
export function putMutedUser(store: Store, userId: number, mutedUserId: number, seconds: number): void {
  store.dbs.mutedUsers.put([userId, mutedUserId], seconds);
}

/** Call inside `commit`. */
export function removeMutedUser(store: Store, userId: number, mutedUserId: number): void {
  store.dbs.mutedUsers.remove([userId, mutedUserId]);
}

export interface SavedSnippet {
  id: number;
  title: string;
  content: string;
  date_created: number;
}

export function getSavedSnippets(store: Store, userId: number): SavedSnippet[] {
  return valuesOf<SavedSnippet>(store.dbs.savedSnippets, userId);
}

export function getSavedSnippet(store: Store, userId: number, id: number): SavedSnippet | undefined {
  return store.dbs.savedSnippets.get([userId, id]) as SavedSnippet | undefined;
}

/** Call inside `commit`. */
export function putSavedSnippet(store: Store, userId: number, snippet: SavedSnippet): void {
  store.dbs.savedSnippets.put([userId, snippet.id], snippet);
}

/** Call inside `commit`. */
export function removeSavedSnippet(store: Store, userId: number, id: number): void {
  store.dbs.savedSnippets.remove([userId, id]);
}

export interface UserStatus {
  status_text: string;
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
}

export function getUserStatus(store: Store, userId: number): UserStatus | undefined {
  return store.dbs.userStatus.get(userId) as UserStatus | undefined;
}

/** An empty status is no row at all; call inside `commit`. */
export function putUserStatus(store: Store, userId: number, status: UserStatus): void {
  if (status.status_text === "" && status.emoji_name === "") store.dbs.userStatus.remove(userId);
  else store.dbs.userStatus.put(userId, status);
}

export function* allUserStatuses(store: Store): Generator<[number, UserStatus]> {
  for (const { key, value } of store.dbs.userStatus.getRange({})) yield [key as number, value as UserStatus];
}
