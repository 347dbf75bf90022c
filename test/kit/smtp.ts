/**
 * A real SMTP server on loopback for tests (npm smtp-server), collecting what it
 * receives, parsed by mailparser. Plain text, no STARTTLS: Hearth reaches it with
 * `smtp://127.0.0.1:<port>?tls=off`. It can stop and start again on the same port (a
 * mail server going down and coming back), and optionally require a login.
 *
 *   const smtp = await startSmtpServer();
 *   await startTestServer({ env: { HEARTH_SMTP_URL: smtp.url } });
 *   const [mail] = await smtp.waitFor(1);
 *   await smtp.close();
 */
import { expect } from "bun:test";
import { SMTPServer } from "smtp-server";
import { simpleParser, type ParsedMail } from "mailparser";
import type { AddressInfo } from "node:net";

export interface ReceivedEmail {
  /** The envelope's recipients (RCPT TO). */
  envelopeTo: string[];
  envelopeFrom: string;
  /** The message as received, headers included. */
  raw: string;
  parsed: ParsedMail;
  /** One header as a string (lower-case name), e.g. `header("auto-submitted")`. */
  header(name: string): string | undefined;
}

export interface SmtpTestServer {
  port: number;
  /** `smtp://[user:pass@]127.0.0.1:<port>?tls=off` */
  url: string;
  received: ReceivedEmail[];
  /** Resolves once at least `count` emails arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedEmail[]>;
  /** Stops listening (connections refused), keeping what was received. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  /** Makes the server answer each DATA with this permanent or temporary error until set to null. */
  rejectWith(message: string | null, responseCode?: number): void;
  close(): Promise<void>;
  /** What the server received for `address` (the envelope's recipients, case aside). */
  mailsTo(address: string): ReceivedEmail[];
  /** Waits up to 30 s for `count` emails to `address`, then expects exactly that many. */
  mailTo(address: string, count: number): Promise<ReceivedEmail[]>;
  /** Waits up to 30 s for an email to `address` that `match` accepts, then expects exactly one. */
  mailWith(address: string, match: (m: ReceivedEmail) => boolean): Promise<ReceivedEmail>;
}

export async function startSmtpServer(options: { auth?: { user: string; pass: string } } = {}): Promise<SmtpTestServer> {
  const received: ReceivedEmail[] = [];
  const waiters: (() => void)[] = [];
  let rejection: { message: string; responseCode: number } | null = null;
  let port = 0;
  let server: SMTPServer;

  const make = () =>
    new SMTPServer({
      secure: false,
      disabledCommands: options.auth ? ["STARTTLS"] : ["STARTTLS", "AUTH"],
      authOptional: !options.auth,
      allowInsecureAuth: true,
      logger: false,
      onAuth(auth, _session, callback) {
        if (options.auth && auth.username === options.auth.user && auth.password === options.auth.pass) callback(null, { user: auth.username });
        else callback(Object.assign(new Error("Invalid username or password"), { responseCode: 535 }));
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("end", async () => {
          if (rejection) return callback(Object.assign(new Error(rejection.message), { responseCode: rejection.responseCode }));
          const raw = Buffer.concat(chunks).toString("utf8");
          const parsed = await simpleParser(raw);
          received.push({
            envelopeTo: session.envelope.rcptTo.map((r) => r.address),
            envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
            raw,
            parsed,
            header(name) {
              const value = parsed.headers.get(name.toLowerCase());
              if (value === undefined) return undefined;
              return typeof value === "string" ? value : value instanceof Date ? value.toISOString() : JSON.stringify(value);
            },
          });
          callback();
          for (const wake of waiters.splice(0)) wake();
        });
      },
    });

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = make();
      server.on("error", () => {}); // a client hanging up mid-session is not the test's failure
      server.server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        port = (server.server.address() as AddressInfo).port;
        resolve();
      });
    });
  await listen();

  const credentials = options.auth ? `${encodeURIComponent(options.auth.user)}:${encodeURIComponent(options.auth.pass)}@` : "";
  const smtp: SmtpTestServer = {
    port,
    url: `smtp://${credentials}127.0.0.1:${port}?tls=off`,
    received,
    async waitFor(count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`expected ${count} email(s), received ${received.length}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return received;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
    start: listen,
    rejectWith(message, responseCode = 451) {
      rejection = message === null ? null : { message, responseCode };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    mailsTo: (address) => mailsTo(smtp, address),
    mailTo: (address, count) => mailTo(smtp, address, count),
    mailWith: (address, match) => mailWith(smtp, address, match),
  };
  return smtp;
}

const mailsTo = (smtp: SmtpTestServer, address: string) => smtp.received.filter((m) => m.envelopeTo.some((to) => to.toLowerCase() === address.toLowerCase()));

async function mailTo(smtp: SmtpTestServer, address: string, count: number): Promise<ReceivedEmail[]> {
  for (let i = 0; i < 600 && mailsTo(smtp, address).length < count; i++) await Bun.sleep(50);
  const mails = mailsTo(smtp, address);
  expect(mails.length).toBe(count);
  return mails;
}

async function mailWith(smtp: SmtpTestServer, address: string, match: (m: ReceivedEmail) => boolean): Promise<ReceivedEmail> {
  for (let i = 0; i < 600 && !mailsTo(smtp, address).some(match); i++) await Bun.sleep(50);
  const found = mailsTo(smtp, address).filter(match);
  expect(found.length).toBe(1);
  return found[0];
}
