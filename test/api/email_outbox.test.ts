/**
 * Outgoing mail through a real SMTP server on loopback: the outbox (queueEmail inside
 * an action's commit, the worker, retries while the server is down), the admin
 * endpoints GET /hearth/email and POST /hearth/email/test, and what happens without
 * an SMTP server.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { expectError, expectSuccess, startTestServer, type TestServer } from "../kit";
import { startSmtpServer, type SmtpTestServer } from "../kit/smtp";
import { commit } from "../../src/events/commit";
import { queueEmail, type EmailToQueue } from "../../src/actions/email";
import { allOutboxEmails, putOutboxEmail, removeOutboxEmail } from "../../src/store/outbox";
import { retryDelayMs } from "../../src/actions/email_worker";

setDefaultTimeout(30_000);
let smtp: SmtpTestServer;
let s: TestServer;

beforeAll(async () => {
  smtp = await startSmtpServer();
  s = await startTestServer({ env: { HEARTH_SMTP_URL: smtp.url, HEARTH_EMAIL_FIRST_RETRY_MS: "100" } });
});
afterAll(async () => {
  await s.stop();
  await smtp.close();
});

function queue(server: TestServer, email: EmailToQueue): Promise<boolean> {
  const h = server.server.h;
  return commit(h, (tx) => queueEmail(h, tx, email));
}

/** Waits until the outbox is empty (the worker deleted what it sent) or throws. */
async function outboxDrained(server: TestServer, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (allOutboxEmails(server.server.h.store).length > 0) {
    if (Date.now() > deadline) throw new Error("the outbox did not drain");
    await Bun.sleep(20);
  }
}

const arrivedFor = (to: string) => smtp.received.filter((m) => m.envelopeTo.includes(to));

describe("the outbox", () => {
  test("a queued email arrives once, with From, Message-ID, Date, Auto-Submitted, text and HTML, and leaves the outbox", async () => {
    const before = smtp.received.length;
    expect(await queue(s, { to: "first@example.com", subject: "Hello", text: "Plain body", html: "<p>HTML body</p>", kind: "test", autoSubmitted: true })).toBe(true);
    const [mail] = (await smtp.waitFor(before + 1)).slice(before);
    expect(mail.envelopeTo).toEqual(["first@example.com"]);
    expect(mail.parsed.subject).toBe("Hello");
    expect(mail.parsed.text?.trim()).toBe("Plain body");
    expect(mail.parsed.html).toContain("<p>HTML body</p>");
    expect(mail.parsed.from?.value).toEqual([{ name: "Hearth", address: `noreply@${new URL(s.url).hostname}` }]);
    expect(mail.parsed.messageId).toMatch(new RegExp(`^<\\d+\\.[\\w-]+@${new URL(s.url).hostname.replace(/\./g, "\\.")}>$`));
    expect(mail.parsed.date).toBeInstanceOf(Date);
    expect(mail.header("auto-submitted")).toBe("auto-generated");
    await outboxDrained(s);
    expect(arrivedFor("first@example.com")).toHaveLength(1);
  });

  test("an email a person sends has no Auto-Submitted header", async () => {
    await queue(s, { to: "personal@example.com", subject: "From a person", text: "x", kind: "test" });
    await outboxDrained(s);
    const [mail] = arrivedFor("personal@example.com");
    expect(mail.header("auto-submitted")).toBeUndefined();
  });

  test("no header injection: a subject's line breaks become spaces, an address or header value with one is refused", async () => {
    await queue(s, { to: "inject@example.com", subject: "Hi\r\nBcc: victim@example.com", text: "x", kind: "test" });
    await outboxDrained(s);
    const [mail] = arrivedFor("inject@example.com");
    expect(mail.parsed.subject).toBe("Hi Bcc: victim@example.com");
    expect(mail.parsed.bcc).toBeUndefined();
    expect(smtp.received.some((m) => m.envelopeTo.includes("victim@example.com"))).toBe(false);
    for (const to of ["a@example.com\r\nBcc: victim@example.com", "a@example.com, victim@example.com", "Name <a@example.com>", "no-at-sign", "a@b@c.com"]) {
      await expect(queue(s, { to, subject: "x", text: "x", kind: "test" })).rejects.toThrow(/Invalid email address/);
    }
    await expect(queue(s, { to: "a@example.com", subject: "x", text: "x", kind: "test", headers: { "X-Note": "a\r\nBcc: victim@example.com" } })).rejects.toThrow(/line break/);
    await expect(queue(s, { to: "a@example.com", subject: "x", text: "x", kind: "test", headers: { Bcc: "victim@example.com" } })).rejects.toThrow(/header name/);
    expect(allOutboxEmails(s.server.h.store)).toHaveLength(0);
  });

  test("the row is written with the action's commit: a callback that throws queues nothing", async () => {
    const h = s.server.h;
    await expect(
      commit(h, (tx) => {
        queueEmail(h, tx, { to: "rolledback@example.com", subject: "x", text: "x", kind: "test" });
        throw new Error("the action failed after queueing");
      }),
    ).rejects.toThrow(/the action failed/);
    expect(allOutboxEmails(h.store)).toHaveLength(0);
    await queue(s, { to: "after-rollback@example.com", subject: "x", text: "x", kind: "test" });
    await outboxDrained(s);
    expect(arrivedFor("rolledback@example.com")).toHaveLength(0);
  });

  test("with the SMTP server down, the email is retried and delivered once after it comes back; the failure is visible meanwhile", async () => {
    await smtp.stop();
    try {
      await queue(s, { to: "while-down@example.com", subject: "Patience", text: "x", kind: "test" });
      // Wait until at least two attempts failed (the backoff starts at 100 ms here).
      const deadline = Date.now() + 20_000;
      while ((allOutboxEmails(s.server.h.store)[0]?.attempts ?? 0) < 2) {
        if (Date.now() > deadline) throw new Error("no retry happened");
        await Bun.sleep(20);
      }
      const status = expectSuccess(await s.as("iago").get("/hearth/email"));
      expect(status.configured).toBe(true);
      expect(status.queued).toBe(1);
      expect(status.failed).toBe(0);
      expect(status.last_error).toMatch(/ECONNREFUSED|connect/i);
      expect(typeof status.last_error_time).toBe("number");
    } finally {
      await smtp.start();
    }
    await outboxDrained(s);
    expect(arrivedFor("while-down@example.com")).toHaveLength(1);
    expect(expectSuccess(await s.as("iago").get("/hearth/email")).queued).toBe(0);
  });

  test("a temporary refusal by the server (451) is retried too", async () => {
    smtp.rejectWith("Try again later", 451);
    try {
      await queue(s, { to: "refused-once@example.com", subject: "x", text: "x", kind: "test" });
      const deadline = Date.now() + 20_000;
      while ((allOutboxEmails(s.server.h.store)[0]?.attempts ?? 0) < 1) {
        if (Date.now() > deadline) throw new Error("no attempt failed");
        await Bun.sleep(20);
      }
      expect(allOutboxEmails(s.server.h.store)[0].last_error).toContain("Try again later");
    } finally {
      smtp.rejectWith(null);
    }
    await outboxDrained(s);
    expect(arrivedFor("refused-once@example.com")).toHaveLength(1);
  });
});

describe("backoff and giving up", () => {
  test("the wait doubles from the first retry's up to an hour", () => {
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n))).toEqual([30_000, 60_000, 120_000, 240_000]);
    expect(retryDelayMs(50)).toBe(3600_000);
  });

  test("an email still failing two days after it was queued is given up on, counted as failed, and not sent later", async () => {
    const h = s.server.h;
    await smtp.stop();
    try {
      await queue(s, { to: "given-up@example.com", subject: "x", text: "x", kind: "test" });
      const deadline = Date.now() + 20_000;
      while ((allOutboxEmails(h.store)[0]?.attempts ?? 0) < 1) {
        if (Date.now() > deadline) throw new Error("no attempt failed");
        await Bun.sleep(20);
      }
      // Two days pass: the row's creation moves back, and its next attempt is due now.
      const row = allOutboxEmails(h.store)[0];
      await commit(h, () => putOutboxEmail(h.store, { ...row, created: Date.now() - 2 * 24 * 3600_000 - 1000, next_attempt: Date.now() }));
      h.email.wake();
      while (!allOutboxEmails(h.store)[0]?.failed) {
        if (Date.now() > deadline) throw new Error("never given up on");
        await Bun.sleep(20);
      }
      expect(expectSuccess(await s.as("iago").get("/hearth/email"))).toMatchObject({ queued: 0, failed: 1 });
    } finally {
      await smtp.start();
    }
    // The next email goes out; the worker's pass saw the given-up one first and left it.
    await queue(s, { to: "after-given-up@example.com", subject: "x", text: "x", kind: "test" });
    const deadline = Date.now() + 20_000;
    while (arrivedFor("after-given-up@example.com").length === 0) {
      if (Date.now() > deadline) throw new Error("the next email did not arrive");
      await Bun.sleep(20);
    }
    expect(arrivedFor("given-up@example.com")).toHaveLength(0);
    const failed = allOutboxEmails(h.store)[0];
    expect(failed.failed).toBe(true);
    await commit(h, () => removeOutboxEmail(h.store, failed.id));
  });
});

describe("the admin endpoints", () => {
  test("GET /hearth/email: the configuration and queue, administrators only", async () => {
    const status = expectSuccess(await s.as("iago").get("/hearth/email"));
    expect(status).toMatchObject({ configured: true, smtp_server: `127.0.0.1:${smtp.port}`, from: `Hearth <noreply@${new URL(s.url).hostname}>`, queued: 0, failed: 0 });
    for (const who of ["hamlet", "shiva"] as const) expectError(await s.as(who).get("/hearth/email"), 400, "UNAUTHORIZED_PRINCIPAL");
  });

  test("POST /hearth/email/test sends now and answers the server's reply; a failure answers the SMTP error", async () => {
    const body = expectSuccess(await s.as("iago").post("/hearth/email/test", { to: "admin-test@example.com" }));
    expect(body.queued).toBe(false);
    expect(body.response).toMatch(/^250/);
    expect(arrivedFor("admin-test@example.com")).toHaveLength(1);
    expect(arrivedFor("admin-test@example.com")[0].parsed.subject).toBe("Hearth test email");
    // Default recipient: the caller.
    expectSuccess(await s.as("desdemona").post("/hearth/email/test", {}));
    expect(arrivedFor(s.users.desdemona.email)).toHaveLength(1);
    smtp.rejectWith("Mailbox unavailable", 550);
    try {
      expectError(await s.as("iago").post("/hearth/email/test", { to: "x@example.com" }), 400, "BAD_REQUEST", /could not be sent: .*Mailbox unavailable/);
    } finally {
      smtp.rejectWith(null);
    }
    expect(expectSuccess(await s.as("iago").get("/hearth/email")).last_error).toContain("Mailbox unavailable");
    expectError(await s.as("iago").post("/hearth/email/test", { to: "not an address" }), 400, "BAD_REQUEST", /Invalid email address/);
    expectError(await s.as("hamlet").post("/hearth/email/test", { to: "x@example.com" }), 400, "UNAUTHORIZED_PRINCIPAL");
  });

  test("POST /hearth/email/test with queue goes through the outbox", async () => {
    const body = expectSuccess(await s.as("iago").post("/hearth/email/test", { to: "queued-test@example.com", queue: true }));
    expect(body.queued).toBe(true);
    await outboxDrained(s);
    expect(arrivedFor("queued-test@example.com")).toHaveLength(1);
  });
});

describe("an SMTP server that requires a login", () => {
  test("user and password from the URL are used; a wrong password is a clear error", async () => {
    const secured = await startSmtpServer({ auth: { user: "hearth", pass: "p@ss word" } });
    const other = await startTestServer({ env: { HEARTH_SMTP_URL: secured.url } });
    try {
      expectSuccess(await other.as("iago").post("/hearth/email/test", { to: "auth@example.com" }));
      expect(secured.received.map((m) => m.envelopeTo[0])).toEqual(["auth@example.com"]);
    } finally {
      await other.stop();
    }
    const wrong = await startTestServer({ env: { HEARTH_SMTP_URL: secured.url.replace("p%40ss", "wrong") } });
    try {
      expectError(await wrong.as("iago").post("/hearth/email/test", { to: "auth@example.com" }), 400, "BAD_REQUEST", /could not be sent: EAUTH/);
    } finally {
      await wrong.stop();
      await secured.close();
    }
  });
});

describe("without an SMTP server", () => {
  test("nothing is queued, the status says so, and the test endpoint explains what to configure", async () => {
    const bare = await startTestServer();
    try {
      expect(await queue(bare, { to: "nowhere@example.com", subject: "x", text: "x", kind: "test" })).toBe(false);
      expect(allOutboxEmails(bare.server.h.store)).toHaveLength(0);
      const status = expectSuccess(await bare.as("iago").get("/hearth/email"));
      expect(status).toMatchObject({ configured: false, smtp_server: null, queued: 0, failed: 0, last_error: null });
      expectError(await bare.as("iago").post("/hearth/email/test", { to: "x@example.com" }), 400, "BAD_REQUEST", /No SMTP server is configured/);
    } finally {
      await bare.stop();
    }
  });
});
