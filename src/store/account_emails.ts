import type { Store } from "./db";

/**
 * The state behind the emails a server sends on its own: missed-message
 * notifications waiting for their batch, the clients each account has logged in
 * from (for the new-login notice), address changes waiting for confirmation, and the
 * secret that signs the links in those emails.
 */

/** Why a message is worth an email (Zulip's notification triggers). */
export type MissedMessageTrigger =
  | "private_message"
  | "mentioned"
  | "topic_wildcard_mentioned_in_followed_topic"
  | "stream_wildcard_mentioned_in_followed_topic"
  | "topic_wildcard_mentioned"
  | "stream_wildcard_mentioned"
  | "followed_topic_email_notify";

export interface PendingMissedMessage {
  trigger: MissedMessageTrigger;
  /** Unix ms when the user's batch is due (the same for all of one user's rows). */
  due: number;
}

/** When `userId`'s pending batch is due, or undefined when nothing is pending. */
export function missedMessagesDueAt(store: Store, userId: number): number | undefined {
  for (const { value } of store.dbs.missedMessageEmails.getRange({ start: [userId], end: [userId + 1], limit: 1 })) {
    return (value as PendingMissedMessage).due;
  }
  return undefined;
}

/** Call only inside `commit`: adds a message to the user's batch (opening one, due at `due`, when none is pending). */
export function putMissedMessage(store: Store, userId: number, messageId: number, row: PendingMissedMessage): void {
  store.dbs.missedMessageEmails.put([userId, messageId], row);
  store.dbs.missedMessageEmailsDue.put([row.due, userId], true);
}

/** The users whose batch is due by `now` (unix ms), with its due time, oldest first. */
export function dueMissedMessageBatches(store: Store, now: number, limit = 100): { due: number; userId: number }[] {
  const out: { due: number; userId: number }[] = [];
  for (const key of store.dbs.missedMessageEmailsDue.getKeys({ start: [0], end: [now, Infinity], limit })) {
    const [due, userId] = key as [number, number];
    out.push({ due, userId });
  }
  return out;
}

/** Call only inside `commit`: takes the user's whole batch (its rows and its due row go). */
export function takeMissedMessages(store: Store, userId: number): Map<number, PendingMissedMessage> {
  const rows = new Map<number, PendingMissedMessage>();
  for (const { key, value } of store.dbs.missedMessageEmails.getRange({ start: [userId], end: [userId + 1] })) {
    rows.set((key as number[])[1], value as PendingMissedMessage);
  }
  const dues = new Set<number>();
  for (const [messageId, row] of rows) {
    store.dbs.missedMessageEmails.remove([userId, messageId]);
    dues.add(row.due);
  }
  for (const due of dues) store.dbs.missedMessageEmailsDue.remove([due, userId]);
  return rows;
}

/** How many messages wait for a missed-message email, all users together (the admin page, tests). */
export function pendingMissedMessageCount(store: Store): number {
  return store.dbs.missedMessageEmails.getKeysCount({});
}

export function loginClientSeen(store: Store, userId: number, clientKey: string): boolean {
  return store.dbs.loginClients.get([userId, clientKey]) !== undefined;
}

/** Call only inside `commit`. */
export function putLoginClient(store: Store, userId: number, clientKey: string, seconds: number): void {
  store.dbs.loginClients.put([userId, clientKey], seconds);
}

export interface PendingEmailChange {
  old_email: string;
  new_email: string;
  /** Names this request in its link: a newer request replaces it, and the older link stops working. */
  nonce: string;
  /** Unix seconds. */
  expires: number;
}

export function getEmailChange(store: Store, userId: number): PendingEmailChange | undefined {
  return store.dbs.emailChanges.get(userId) as PendingEmailChange | undefined;
}

/** Call only inside `commit`; null removes it. */
export function putEmailChange(store: Store, userId: number, change: PendingEmailChange | null): void {
  if (change === null) store.dbs.emailChanges.remove(userId);
  else store.dbs.emailChanges.put(userId, change);
}

/** The meta key of the secret that signs the links of account emails (made once per data folder). */
const TOKEN_SECRET_KEY = "account_token_secret";

export function getAccountTokenSecret(store: Store): string | undefined {
  return store.dbs.meta.get(TOKEN_SECRET_KEY) as string | undefined;
}

/** Call only inside `commit`. */
export function putAccountTokenSecret(store: Store, secret: string): void {
  store.dbs.meta.put(TOKEN_SECRET_KEY, secret);
}
