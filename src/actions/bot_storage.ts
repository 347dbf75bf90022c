import type { Hearth } from "../context";
import { badRequest } from "../errors";
import type { UserRecord } from "../store/users";
import { getBotStorageEntries, putBotStorageEntry, removeBotStorageEntry } from "../store/bot_storage";
import { commit } from "../events/commit";
import { botStorageKeyMissing } from "../views/personal";

/** Zulip's USER_STATE_SIZE_LIMIT: keys and values of one user's storage, in characters. */
export const BOT_STORAGE_LIMIT = 10_000_000;
/** Keys are index keys, which LMDB caps at 1978 bytes: 400 characters of up to 4 bytes fit. */
export const MAX_BOT_STORAGE_KEY_LENGTH = 400;

export async function doPutBotStorage(h: Hearth, user: UserRecord, storage: Record<string, string>): Promise<void> {
  for (const key of Object.keys(storage)) {
    if (key.length > MAX_BOT_STORAGE_KEY_LENGTH) throw badRequest(`Key is too long (limit: ${MAX_BOT_STORAGE_KEY_LENGTH} characters)`);
  }
  await commit(h, () => {
    const next = getBotStorageEntries(h.store, user.id);
    for (const [k, v] of Object.entries(storage)) next.set(k, v);
    let size = 0;
    for (const [k, v] of next) size += k.length + v.length;
    if (size > BOT_STORAGE_LIMIT) {
      throw badRequest(`Request exceeds storage limit by ${size - BOT_STORAGE_LIMIT} characters. The limit is ${BOT_STORAGE_LIMIT} characters.`);
    }
    for (const [k, v] of Object.entries(storage)) putBotStorageEntry(h.store, user.id, k, v);
  });
}

/** `DELETE /bot_storage`: the keys given (each must exist), or everything. */
export async function doRemoveBotStorage(h: Hearth, user: UserRecord, keys?: string[]): Promise<void> {
  await commit(h, () => {
    const all = getBotStorageEntries(h.store, user.id);
    const doomed = keys ?? [...all.keys()];
    for (const key of doomed) if (!all.has(key)) throw botStorageKeyMissing();
    for (const key of doomed) removeBotStorageEntry(h.store, user.id, key);
  });
}
