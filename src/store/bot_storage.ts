import type { Store } from "./db";

/** One user's key-value storage (Zulip's BotStorageData), in key order. */
export function getBotStorageEntries(store: Store, userId: number): Map<string, string> {
  const out = new Map<string, string>();
  for (const { key, value } of store.dbs.botStorage.getRange({ start: [userId], end: [userId + 1] })) {
    out.set((key as [number, string])[1], value as string);
  }
  return out;
}

/** Call inside `commit`. */
export function putBotStorageEntry(store: Store, userId: number, key: string, value: string): void {
  store.dbs.botStorage.put([userId, key], value);
}

/** Call inside `commit`. */
export function removeBotStorageEntry(store: Store, userId: number, key: string): void {
  store.dbs.botStorage.remove([userId, key]);
}
