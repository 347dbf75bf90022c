import type { Hearth } from "../context";
import { badRequest } from "../errors";
import { getBotStorageEntries } from "../store/bot_storage";
import { getAlertWords, getSavedSnippets, type SavedSnippet } from "../store/personal";
import type { UserRecord } from "../store/users";

/** Reads of state only its owner sees, for its routes (register reads the same records in personal_state.ts). */

export function getUserAlertWords(h: Hearth, userId: number): string[] {
  return getAlertWords(h.store, userId);
}

export function getUserSavedSnippets(h: Hearth, userId: number): SavedSnippet[] {
  return getSavedSnippets(h.store, userId);
}

/** `GET /bot_storage`: everything, or the keys asked for (each must exist). */
export function getBotStorage(h: Hearth, user: UserRecord, keys?: string[]): Record<string, string> {
  const all = getBotStorageEntries(h.store, user.id);
  if (keys === undefined) return Object.fromEntries(all);
  const out: Record<string, string> = {};
  for (const key of keys) {
    const value = all.get(key);
    if (value === undefined) throw botStorageKeyMissing();
    out[key] = value;
  }
  return out;
}

export const botStorageKeyMissing = () => badRequest("Key does not exist.");
