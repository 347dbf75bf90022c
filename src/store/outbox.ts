import { valuesOf, type Store } from "./db";

/**
 * An email waiting to be handed to the SMTP server (src/actions/email.ts). Written in
 * the transaction of the action that causes it, removed once the server accepted it;
 * one that kept failing for too long stays, marked failed, for the admin page.
 */
export interface OutboxEmail {
  id: number;
  to: string;
  subject: string;
  text: string;
  html: string | null;
  /** Extra headers (Auto-Submitted, List-Unsubscribe, …), already checked for line breaks. */
  headers: Record<string, string>;
  /** What caused it ("invitation", "password_reset", "test", …): logs and the admin page. */
  kind: string;
  /** The Message-ID, fixed when queued so that every attempt carries the same one. */
  message_id: string;
  /** Unix milliseconds. */
  created: number;
  attempts: number;
  /** Unix milliseconds of the next attempt. */
  next_attempt: number;
  last_error: string | null;
  /** Unix milliseconds of the last failed attempt. */
  last_error_at: number | null;
  /** Given up on: no further attempt. */
  failed: boolean;
}

/** The last failure of any email (kept after its email went out or was given up on), for the admin page. */
export interface LastEmailError {
  error: string;
  /** Unix milliseconds. */
  at: number;
  kind: string;
}

const LAST_ERROR_KEY = "email_last_error";

export function getOutboxEmail(store: Store, id: number): OutboxEmail | undefined {
  return store.dbs.outbox.get(id) as OutboxEmail | undefined;
}

/** Call inside `commit`. */
export function putOutboxEmail(store: Store, email: OutboxEmail): void {
  store.dbs.outbox.put(email.id, email);
}

/** Call inside `commit`. */
export function removeOutboxEmail(store: Store, id: number): void {
  store.dbs.outbox.remove(id);
}

/** Every queued email, oldest first (IDs only grow). */
export function allOutboxEmails(store: Store): OutboxEmail[] {
  return valuesOf<OutboxEmail>(store.dbs.outbox);
}

export function getLastEmailError(store: Store): LastEmailError | null {
  return (store.dbs.meta.get(LAST_ERROR_KEY) as LastEmailError | undefined) ?? null;
}

/** Call inside `commit`. */
export function putLastEmailError(store: Store, error: LastEmailError): void {
  store.dbs.meta.put(LAST_ERROR_KEY, error);
}
