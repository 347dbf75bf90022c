/**
 * Outgoing email: queued in the durable outbox (src/store/outbox.ts) inside the
 * transaction of the action that causes it, so an email exists exactly when its cause
 * committed; src/actions/email_worker.ts hands it to the SMTP server.
 */
import { randomBytes } from "node:crypto";
import type { Hearth } from "../context";
import type { Transaction } from "../events/commit";
import { commit } from "../events/commit";
import { badRequest, mustBeAdmin } from "../errors";
import { describeSmtpError, type Mailer } from "../lib/mailer";
import { allOutboxEmails, getLastEmailError, putLastEmailError, putOutboxEmail, type OutboxEmail } from "../store/outbox";
import { isAdmin, type UserRecord } from "../store/users";

export interface EmailToQueue {
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** What causes it ("invitation", "password_reset", …): logs and the admin page. */
  kind: string;
  /** An email no person sent (a notification): `Auto-Submitted: auto-generated` (RFC 3834), so auto-responders stay quiet. */
  autoSubmitted?: boolean;
  /** Extra headers (e.g. List-Unsubscribe); names of letters, digits and dashes, values on one line. */
  headers?: Record<string, string>;
}

/** An address with one @, nothing that could end a header or hide a second address. */
const ADDRESS = /^[^\s@<>(),;:"\[\]\\]+@[^\s@<>(),;:"\[\]\\.]+(\.[^\s@<>(),;:"\[\]\\.]+)*$/;

export function isValidEmailAddress(address: string): boolean {
  return address.length <= 254 && ADDRESS.test(address);
}

/**
 * The From of every email: HEARTH_EMAIL_FROM, else `Hearth <noreply@<realm host>>`.
 * Checked when the server starts (checkEmailFrom), so a bad one fails then, not per send.
 */
export function emailFrom(h: Hearth): string {
  return h.config.emailFrom ?? `Hearth <noreply@${h.realmHost()}>`;
}

/** Throws a readable error unless `from` is `Name <address>` or a bare address, on one line. */
export function checkEmailFrom(from: string): void {
  const match = /^(?:([^<>\r\n]*?)\s*<([^<>\s]+)>|([^<>\s]+))$/.exec(from.trim());
  const address = match?.[2] ?? match?.[3];
  if (!match || /[\r\n]/.test(from) || !address || !isValidEmailAddress(address)) {
    throw new Error(`invalid From address '${from}' (use e.g. "Hearth <noreply@example.com>")`);
  }
}

const HEADER_NAME = /^[A-Za-z0-9][A-Za-z0-9-]{0,75}$/;
/** Headers nodemailer sets from the message itself: an extra one must not replace them. */
const RESERVED_HEADERS = new Set(["from", "to", "cc", "bcc", "subject", "date", "message-id", "sender", "reply-to", "content-type", "content-transfer-encoding", "mime-version"]);

/** One line per value: a subject taken from a topic or a name must not start a header of its own. */
function singleLine(text: string): string {
  return text.replace(/[\r\n\u2028\u2029]+/g, " ").trim();
}

function checkEmail(email: EmailToQueue): void {
  if (!isValidEmailAddress(email.to)) throw badRequest(`Invalid email address '${email.to}'`);
  if (!/^[a-z0-9_.-]{1,64}$/.test(email.kind)) throw new Error(`invalid email kind '${email.kind}'`);
  for (const [name, value] of Object.entries(email.headers ?? {})) {
    if (!HEADER_NAME.test(name) || RESERVED_HEADERS.has(name.toLowerCase())) throw new Error(`invalid email header name '${name}'`);
    if (/[\r\n]/.test(value)) throw new Error(`email header ${name} has a line break`);
  }
}

/**
 * Queues `email` inside the caller's commit: written with the action's other writes
 * (both or neither), and the worker is woken once the transaction is visible. With no
 * SMTP server configured nothing is written and it answers false: no email pretends to
 * be on its way (callers record what they would have sent, e.g. an invitation's link).
 */
export function queueEmail(h: Hearth, tx: Transaction, email: EmailToQueue): boolean {
  checkEmail(email);
  if (!h.email.mailer) {
    tx.afterCommit(() => console.log(`Email not sent (no SMTP server configured): ${email.kind} to ${email.to}, "${singleLine(email.subject)}"`));
    return false;
  }
  const id = h.store.nextId("email");
  const now = Date.now();
  const headers: Record<string, string> = { ...(email.headers ?? {}) };
  if (email.autoSubmitted) headers["Auto-Submitted"] = "auto-generated";
  const row: OutboxEmail = {
    id,
    to: email.to,
    subject: singleLine(email.subject),
    text: email.text,
    html: email.html ?? null,
    headers,
    kind: email.kind,
    message_id: `<${id}.${randomBytes(9).toString("base64url")}@${h.realmHost()}>`,
    created: now,
    attempts: 0,
    next_attempt: now,
    last_error: null,
    last_error_at: null,
    failed: false,
  };
  putOutboxEmail(h.store, row);
  tx.afterCommit(() => h.email.wake());
  return true;
}

/** Outgoing mail is the administrators' business (bots with the role included, as for every admin endpoint). */
function checkEmailAdmin(actor: UserRecord): void {
  if (!isAdmin(actor)) throw mustBeAdmin();
}

/** What the admin page shows of outgoing mail (GET /hearth/email). */
export function emailStatus(h: Hearth, actor: UserRecord) {
  checkEmailAdmin(actor);
  const rows = allOutboxEmails(h.store);
  const failed = rows.filter((row) => row.failed);
  const last = getLastEmailError(h.store);
  return {
    configured: h.email.mailer !== null,
    smtp_server: h.email.mailer ? `${h.email.mailer.settings.host}:${h.email.mailer.settings.port}` : null,
    from: emailFrom(h),
    queued: rows.length - failed.length,
    failed: failed.length,
    last_error: last?.error ?? null,
    last_error_time: last ? Math.floor(last.at / 1000) : null,
  };
}

/** Records a failure for the admin page; call inside `commit`. */
export function recordEmailError(h: Hearth, error: string, kind: string): void {
  putLastEmailError(h.store, { error, at: Date.now(), kind });
}

/**
 * Sends one email now, past the outbox (the CLI's and the admin page's test): the
 * answer is the SMTP server's, or its error thrown with the server's words.
 */
export async function sendEmailNow(mailer: Mailer, from: string, to: string, subject: string, text: string, host: string): Promise<string> {
  if (!isValidEmailAddress(to)) throw badRequest(`Invalid email address '${to}'`);
  const { response } = await mailer.send({
    from,
    to,
    subject,
    text,
    messageId: `<test.${randomBytes(9).toString("base64url")}@${host}>`,
    date: Date.now(),
    headers: { "Auto-Submitted": "auto-generated" },
  });
  return response;
}

const TEST_SUBJECT = "Hearth test email";
const testText = (h: Hearth) => `This is a test email from the Hearth server at ${h.realmUrl()}.\n\nIf you received it, outgoing email works.\n`;

/**
 * `POST /hearth/email/test` (administrators): sends a test email now and answers the
 * SMTP server's reply, or with `queue`, queues it like any other email (the worker's
 * path, for checking it end to end).
 */
export async function doSendTestEmail(h: Hearth, actor: UserRecord, to: string, queue: boolean): Promise<{ queued: boolean; response: string | null }> {
  checkEmailAdmin(actor);
  const mailer = h.email.mailer;
  if (!mailer) throw badRequest("No SMTP server is configured: start Hearth with --smtp-url or HEARTH_SMTP_URL.");
  if (!isValidEmailAddress(to)) throw badRequest(`Invalid email address '${to}'`);
  if (queue) {
    await commit(h, (tx) => queueEmail(h, tx, { to, subject: TEST_SUBJECT, text: testText(h), kind: "test", autoSubmitted: true }));
    return { queued: true, response: null };
  }
  try {
    return { queued: false, response: await sendEmailNow(mailer, emailFrom(h), to, TEST_SUBJECT, testText(h), h.realmHost()) };
  } catch (error) {
    const described = describeSmtpError(error);
    await commit(h, () => recordEmailError(h, described, "test"));
    throw badRequest(`The test email could not be sent: ${described}`);
  }
}
