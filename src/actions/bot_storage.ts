import type { Hearth } from "../context";
import { badRequest } from "../errors";
import type { UserRecord } from "../store/users";

/** Zulip's USER_STATE_SIZE_LIMIT: keys and values of one user's storage, in characters. */
export const BOT_STORAGE_LIMIT = 10_000_000;
/** Keys are index keys, which LMDB caps at 1978 bytes: 400 characters of up to 4 bytes fit. */
export const MAX_BOT_STORAGE_KEY_LENGTH = 400;

const keyMissing = () => badRequest("Key does not exist.");

function entries(h: Hearth, userId: number): Map<string, string> {
  const out = new Map<string, string>();
  for (const { key, value } of h.store.dbs.botStorage.getRange({ start: [userId], end: [userId + 1] })) {
    out.set((key as [number, string])[1], value as string);
  }
  return out;
}

/** `GET /bot_storage`: everything, or the keys asked for (each must exist). */
export function getBotStorage(h: Hearth, user: UserRecord, keys?: string[]): Record<string, string> {
  const all = entries(h, user.id);
  if (keys === undefined) return Object.fromEntries(all);
  const out: Record<string, string> = {};
  for (const key of keys) {
    const value = all.get(key);
    if (value === undefined) throw keyMissing();
    out[key] = value;
  }
  return out;
}

export async function doPutBotStorage(h: Hearth, user: UserRecord, storage: Record<string, string>): Promise<void> {
  for (const key of Object.keys(storage)) {
    if (key.length > MAX_BOT_STORAGE_KEY_LENGTH) throw badRequest(`Key is too long (limit: ${MAX_BOT_STORAGE_KEY_LENGTH} characters)`);
  }
  await h.store.commit(() => {
    const next = entries(h, user.id);
    for (const [k, v] of Object.entries(storage)) next.set(k, v);
    let size = 0;
    for (const [k, v] of next) size += k.length + v.length;
    if (size > BOT_STORAGE_LIMIT) {
      throw badRequest(`Request exceeds storage limit by ${size - BOT_STORAGE_LIMIT} characters. The limit is ${BOT_STORAGE_LIMIT} characters.`);
    }
    for (const [k, v] of Object.entries(storage)) h.store.dbs.botStorage.put([user.id, k], v);
  });
}

/** `DELETE /bot_storage`: the keys given (each must exist), or everything. */
export async function doRemoveBotStorage(h: Hearth, user: UserRecord, keys?: string[]): Promise<void> {
  await h.store.commit(() => {
    const all = entries(h, user.id);
    const doomed = keys ?? [...all.keys()];
    for (const key of doomed) if (!all.has(key)) throw keyMissing();
    for (const key of doomed) h.store.dbs.botStorage.remove([user.id, key]);
  });
}
