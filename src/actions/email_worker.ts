/**
 * The outbox worker: hands each queued email (src/store/outbox.ts) to the SMTP server,
 * one at a time, oldest first.
 *
 * Exactly once, as far as SMTP allows: a row is deleted, in a committed write, as soon
 * as the server accepted the message (its reply to DATA) and before anything else. A
 * row still present after a crash or kill -9 is therefore one the server may not have
 * accepted, and is sent again. The one window left: the server accepted it and the
 * process died before the deletion reached the disk (one commit, milliseconds); that
 * email goes out twice, with the same Message-ID, which lets receiving servers and
 * clients drop the copy. The opposite order (delete, then send) would lose emails
 * instead, which is worse for invitations and password resets.
 *
 * A failure (server down, refused, timed out) keeps the row and retries it with an
 * exponential backoff, from 30 seconds up to an hour; after two days it is given up on
 * and stays, marked failed, where the admin page counts it. Every failure is logged
 * and kept as the last error.
 */
import type { Hearth } from "../context";
import { commit } from "../events/commit";
import { describeSmtpError } from "../lib/mailer";
import { envNumber } from "../lib/env";
import { allOutboxEmails, getOutboxEmail, putOutboxEmail, removeOutboxEmail, type OutboxEmail } from "../store/outbox";
import { emailFrom, recordEmailError } from "./email";

/** The first retry's wait; each next one doubles. */
const FIRST_RETRY_MS = 30_000;
const MAX_RETRY_MS = 3600_000;
export const GIVE_UP_AFTER_MS = 2 * 24 * 3600_000;

/** The wait before attempt `attempts + 1`, after `attempts` failures. */
export function retryDelayMs(attempts: number, firstRetryMs = FIRST_RETRY_MS): number {
  return Math.min(MAX_RETRY_MS, firstRetryMs * 2 ** Math.max(0, attempts - 1));
}

async function sendOne(h: Hearth, row: OutboxEmail, firstRetryMs: number): Promise<void> {
  const mailer = h.email.mailer!;
  try {
    await mailer.send({
      from: emailFrom(h),
      to: row.to,
      subject: row.subject,
      text: row.text,
      html: row.html ?? undefined,
      messageId: row.message_id,
      date: row.created,
      headers: row.headers,
    });
  } catch (error) {
    const described = describeSmtpError(error);
    const now = Date.now();
    // Built from the row as stored now, not as read before the attempt.
    const updated = await commit(h, () => {
      const current = getOutboxEmail(h.store, row.id);
      if (!current) return null;
      const attempts = current.attempts + 1;
      const next: OutboxEmail = {
        ...current,
        attempts,
        next_attempt: now + retryDelayMs(attempts, firstRetryMs),
        last_error: described,
        last_error_at: now,
        failed: now - current.created >= GIVE_UP_AFTER_MS,
      };
      putOutboxEmail(h.store, next);
      recordEmailError(h, described, current.kind);
      return next;
    });
    if (updated) {
      const outcome = updated.failed ? "given up on" : `retrying in ${((updated.next_attempt - now) / 1000).toFixed(1)} s`;
      console.error(`Email ${row.id} (${row.kind}) to ${row.to} failed (attempt ${updated.attempts}): ${described}; ${outcome}`);
    }
    return;
  }
  // Accepted: the row goes first, before any logging that could throw.
  await commit(h, () => removeOutboxEmail(h.store, row.id));
  console.log(`Email ${row.id} (${row.kind}) sent to ${row.to}`);
}

export interface EmailWorker {
  /** Resolves once the pass under way (if any) finished; no further pass starts. */
  stop(): Promise<void>;
}

/**
 * Starts sending what is due, then sleeps until the next retry is due or a commit
 * that queued an email wakes it (`h.email.wake`). Without an SMTP server configured it
 * does nothing: rows left by a run that had one wait for a run that has one again.
 */
export function startEmailWorker(h: Hearth): EmailWorker {
  // HEARTH_EMAIL_FIRST_RETRY_MS shortens the backoff (tests); read once, at start.
  const firstRetryMs = envNumber("HEARTH_EMAIL_FIRST_RETRY_MS", FIRST_RETRY_MS);
  let stopped = false;
  let current: Promise<void> | null = null;
  let again = false;
  let timer: ReturnType<typeof setTimeout> | null = null;

  const pass = async () => {
    for (const row of allOutboxEmails(h.store)) {
      if (stopped) return;
      if (row.failed || row.next_attempt > Date.now()) continue;
      await sendOne(h, row, firstRetryMs);
    }
  };
  const scheduleNext = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (stopped) return;
    let next = Infinity;
    for (const row of allOutboxEmails(h.store)) if (!row.failed) next = Math.min(next, row.next_attempt);
    if (next === Infinity) return;
    timer = setTimeout(run, Math.min(MAX_RETRY_MS, Math.max(0, next - Date.now())));
    timer.unref?.();
  };
  const run = () => {
    if (stopped || !h.email.mailer) return;
    if (current) {
      // A pass is under way: the new row may be behind its cursor; one more pass after it.
      again = true;
      return;
    }
    current = pass()
      .catch((error) => console.error("The email worker failed (it retries at its next wake):", error))
      .finally(() => {
        current = null;
        if (again && !stopped) {
          again = false;
          run();
        } else scheduleNext();
      });
  };
  h.email.wake = run;
  run();
  return {
    async stop() {
      stopped = true;
      h.email.wake = () => {};
      if (timer) clearTimeout(timer);
      while (current) await current;
      h.email.mailer?.close();
    },
  };
}
