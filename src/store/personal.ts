import type { Store } from "./db";
import { StoreCache } from "./cache";

/** Per-user state that only its owner sees: alert words, muted users, saved snippets. */

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

export interface SavedSnippet {
  id: number;
  title: string;
  content: string;
  date_created: number;
}

export function getSavedSnippets(store: Store, userId: number): SavedSnippet[] {
  return [...store.dbs.savedSnippets.getRange({ start: [userId], end: [userId, Infinity] })].map((e) => e.value as SavedSnippet);
}

export function getSavedSnippet(store: Store, userId: number, id: number): SavedSnippet | undefined {
  return store.dbs.savedSnippets.get([userId, id]) as SavedSnippet | undefined;
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

export function* allUserStatuses(store: Store): Generator<[number, UserStatus]> {
  for (const { key, value } of store.dbs.userStatus.getRange({})) yield [key as number, value as UserStatus];
}
