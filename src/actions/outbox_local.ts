import type { Hearth } from "../context";
import type { Transaction } from "../events/commit";

/** Stand-in for src/actions/email.ts (the outbox) until that branch is merged. */
export interface EmailToQueue {
  to: string;
  subject: string;
  text: string;
  html?: string;
  kind: string;
  autoSubmitted?: boolean;
  headers?: Record<string, string>;
}

export function queueEmail(_h: Hearth, tx: Transaction, email: EmailToQueue): boolean {
  tx.afterCommit(() => console.log(`(outbox not merged) ${email.kind} to ${email.to}: ${email.subject}\n${email.text}`));
  return false;
}

export function mailConfigured(_h: Hearth): boolean {
  return true;
}
