/**
 * Outgoing mail over SMTP (nodemailer), configured by one URL:
 *
 *   smtp://user:pass@host:587    STARTTLS required (credentials never go in clear)
 *   smtps://user:pass@host:465   TLS from the first byte
 *   smtp://host:25               no authentication; STARTTLS used when offered
 *   …?tls=off                    plain text, no STARTTLS: only for a loopback test server
 *   …?tls_verify=off             accept a self-signed certificate (an internal relay)
 *
 * User name and password are percent-decoded (an `@` in a password is `%40`).
 */
import type { Transporter } from "nodemailer";
import type * as Nodemailer from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport";

export interface SmtpSettings {
  host: string;
  port: number;
  secure: boolean;
  user: string | null;
  password: string | null;
  tls: "required" | "opportunistic" | "off";
  verifyCertificate: boolean;
}

/** Why an SMTP URL was refused, in words for the person who typed it. */
export class SmtpUrlError extends Error {}

export function parseSmtpUrl(text: string): SmtpSettings {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new SmtpUrlError(`invalid SMTP URL '${redactSmtpUrl(text)}' (expected smtp://user:pass@host:587 or smtps://user:pass@host:465)`);
  }
  if (url.protocol !== "smtp:" && url.protocol !== "smtps:") throw new SmtpUrlError(`invalid SMTP URL scheme '${url.protocol}' (use smtp: or smtps:)`);
  if (!url.hostname) throw new SmtpUrlError("the SMTP URL names no host");
  const secure = url.protocol === "smtps:";
  const user = url.username ? decodeURIComponent(url.username) : null;
  const password = url.password ? decodeURIComponent(url.password) : null;
  for (const key of url.searchParams.keys()) {
    if (key !== "tls" && key !== "tls_verify") throw new SmtpUrlError(`unknown SMTP URL option '${key}' (known: tls=off, tls_verify=off)`);
  }
  const tlsOption = url.searchParams.get("tls");
  if (tlsOption !== null && tlsOption !== "off") throw new SmtpUrlError(`invalid tls='${tlsOption}' (only tls=off, for a loopback test server)`);
  const verifyOption = url.searchParams.get("tls_verify");
  if (verifyOption !== null && verifyOption !== "off") throw new SmtpUrlError(`invalid tls_verify='${verifyOption}' (only tls_verify=off)`);
  if (secure && tlsOption === "off") throw new SmtpUrlError("smtps: is TLS from the start; tls=off contradicts it");
  return {
    // URL keeps IPv6 hosts in brackets; sockets want them bare.
    host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    user,
    password,
    tls: secure ? "required" : tlsOption === "off" ? "off" : user ? "required" : "opportunistic",
    verifyCertificate: verifyOption !== "off",
  };
}

/** The URL with its password hidden, for logs and the admin page. */
export function redactSmtpUrl(text: string): string {
  return text.replace(/^(smtps?:\/\/[^:@/]*):[^@/]*@/i, "$1:***@");
}

/** One message to hand to the SMTP server; nodemailer builds (and encodes) every header. */
export interface OutgoingMessage {
  from: string;
  to: string;
  subject: string;
  text: string;
  html?: string;
  messageId: string;
  /** Unix milliseconds; the Date header. */
  date: number;
  headers: Record<string, string>;
}

export class Mailer {
  private readonly transport: Transporter<SMTPTransport.SentMessageInfo>;

  constructor(readonly settings: SmtpSettings) {
    const options: SMTPTransport.Options = {
      host: settings.host,
      port: settings.port,
      secure: settings.secure,
      requireTLS: settings.tls === "required" && !settings.secure,
      ignoreTLS: settings.tls === "off",
      auth: settings.user ? { user: settings.user, pass: settings.password ?? "" } : undefined,
      tls: settings.verifyCertificate ? undefined : { rejectUnauthorized: false },
      // A server that accepts the connection and then hangs must not hold the worker forever.
      connectionTimeout: 15_000,
      greetingTimeout: 15_000,
      socketTimeout: 60_000,
      // Each send opens its own connection: nothing to keep alive between rare emails.
      pool: false,
    };
    // Loaded with the first mailer, not at start: a server without SMTP never needs it,
    // and evaluating it cost start time and memory (docs/benchmarks.md).
    const { createTransport } = require("nodemailer") as typeof Nodemailer;
    this.transport = createTransport(options);
  }

  /** Hands the message to the SMTP server; resolves once it accepted it (the reply to DATA), rejects with its error otherwise. */
  async send(message: OutgoingMessage): Promise<{ response: string }> {
    const info = await this.transport.sendMail({
      from: message.from,
      to: message.to,
      subject: message.subject,
      text: message.text,
      html: message.html,
      messageId: message.messageId,
      date: new Date(message.date),
      headers: message.headers,
      // Refuse rather than guess: every address was validated before it was queued.
      disableFileAccess: true,
      disableUrlAccess: true,
    });
    if (info.rejected.length > 0) throw new Error(`the SMTP server refused ${info.rejected.join(", ")}: ${info.response}`);
    return { response: info.response };
  }

  close(): void {
    this.transport.close();
  }
}

/** A short readable form of an SMTP failure (nodemailer's errors carry the server's reply). */
export function describeSmtpError(error: unknown): string {
  const e = error as { message?: string; code?: string; response?: string; responseCode?: number };
  const parts = [e?.code, e?.response ?? e?.message ?? String(error)].filter(Boolean);
  return parts.join(": ").slice(0, 1000);
}
