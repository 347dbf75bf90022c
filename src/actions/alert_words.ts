import type { Hearth } from "../context";
import { badRequest } from "../errors";
import { getAlertWords, putAlertWords } from "../store/personal";
import type { UserRecord } from "../store/users";
import { commit, type Transaction } from "../events/commit";

export const MAX_ALERT_WORD_LENGTH = 100;

function cleanWords(words: string[]): string[] {
  const cleaned: string[] = [];
  words.forEach((word, i) => {
    const w = word.trim();
    if (w.length === 0) throw badRequest(`alert_words[${i}] cannot be blank`);
    if (w.length > MAX_ALERT_WORD_LENGTH) throw badRequest(`alert_words[${i}] is too long (limit: ${MAX_ALERT_WORD_LENGTH} characters)`);
    cleaned.push(w);
  });
  return cleaned;
}

function notifyAlertWords(tx: Transaction, user: UserRecord, words: string[]): void {
  tx.notify({ type: "alert_words", alert_words: words }, [user.id]);
}

/** Adds words not already present; alert words match case-insensitively, as in Zulip. */
export async function doAddAlertWords(h: Hearth, user: UserRecord, words: string[]): Promise<string[]> {
  const toAdd = cleanWords(words);
  return commit(h, (tx) => {
    const current = getAlertWords(h.store, user.id);
    const seen = new Set(current.map((w) => w.toLowerCase()));
    const next = [...current];
    for (const w of toAdd) {
      if (seen.has(w.toLowerCase())) continue;
      seen.add(w.toLowerCase());
      next.push(w);
    }
    putAlertWords(h.store, user.id, next);
    notifyAlertWords(tx, user, next);
    return next;
  });
}

export async function doRemoveAlertWords(h: Hearth, user: UserRecord, words: string[]): Promise<string[]> {
  const toRemove = new Set(words.map((w) => w.trim().toLowerCase()));
  return commit(h, (tx) => {
    const next = getAlertWords(h.store, user.id).filter((w) => !toRemove.has(w.toLowerCase()));
    putAlertWords(h.store, user.id, next);
    notifyAlertWords(tx, user, next);
    return next;
  });
}
