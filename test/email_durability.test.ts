/**
 * The outbox across a kill -9 of a real Hearth process, and `hearth send-test-email`.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { auth, freePort, hearth, startServe, tempDir } from "./kit/process";
import { startSmtpServer, type SmtpTestServer } from "./kit/smtp";

setDefaultTimeout(60_000);
let smtp: SmtpTestServer;
beforeAll(async () => {
  smtp = await startSmtpServer();
});
afterAll(() => smtp.close());

const form = (email: string, key: string, params: Record<string, string>) => ({
  method: "POST",
  headers: { ...auth(email, key), "content-type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(params),
});

test("an invitation made while the SMTP server is down survives kill -9 and is emailed exactly once after the restart, with a working link", async () => {
  const data = tempDir();
  const init = await hearth(["init", "--data", data, "--realm-name", "D", "--owner-email", "o@d.test", "--owner-password", "secret1", "--json"]);
  const owner = JSON.parse(init.stdout) as { email: string; api_key: string };
  const env = { HEARTH_SMTP_URL: smtp.url, HEARTH_EMAIL_FIRST_RETRY_MS: "50" };
  const invites = async (url: string) => (await (await fetch(`${url}/api/v1/invites`, { headers: auth(owner.email, owner.api_key) })).json()).invites as any[];
  await smtp.stop();
  const first = await startServe(["--data", data, "--port", String(freePort())], env);
  try {
    const sent = await (await fetch(`${first.url}/api/v1/invites`, form(owner.email, owner.api_key, { invitee_emails: "survivor@example.com", stream_ids: "[]" }))).json();
    expect(sent).toMatchObject({ result: "success" });
    // It failed at least once against the stopped server before the kill.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const status = await (await fetch(`${first.url}/api/v1/hearth/email`, { headers: auth(owner.email, owner.api_key) })).json();
      expect(status.queued).toBe(1);
      if (status.last_error) break;
      if (Date.now() > deadline) throw new Error("no attempt failed");
      await Bun.sleep(20);
    }
    expect((await invites(first.url))[0]).toMatchObject({ email: "survivor@example.com", emailed: false, email_status: "queued" });
  } finally {
    first.proc.kill("SIGKILL");
    await first.proc.exited;
  }
  await smtp.start();
  const second = await startServe(["--data", data, "--port", String(freePort())], env);
  let key = "";
  try {
    const [mail] = await smtp.waitFor(1);
    key = /\/accept\/([a-z0-9]{24})\//.exec(mail.parsed.text!)![1];
    // Sent, then deleted: the queue empties and GET /invites says it was emailed.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const status = await (await fetch(`${second.url}/api/v1/hearth/email`, { headers: auth(owner.email, owner.api_key) })).json();
      if (status.queued === 0) break;
      if (Date.now() > deadline) throw new Error("the outbox did not drain");
      await Bun.sleep(20);
    }
    expect((await invites(second.url))[0]).toMatchObject({ email: "survivor@example.com", emailed: true, email_status: "sent" });
  } finally {
    second.proc.kill("SIGTERM");
    await second.proc.exited;
  }
  // A clean restart finds nothing left to send; the link (on this server's address) works.
  const third = await startServe(["--data", data, "--port", String(freePort())], env);
  try {
    const accepted = await fetch(`${third.url}/accept/${key}/`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ full_name: "Survivor", password: "a long password" }),
    });
    expect(accepted.status).toBe(200);
  } finally {
    third.proc.kill("SIGTERM");
    await third.proc.exited;
  }
  const survivors = smtp.received.filter((m) => m.envelopeTo.includes("survivor@example.com"));
  expect(survivors).toHaveLength(1);
});

test("hearth send-test-email reports the server's answer, or its error with a non-zero exit", async () => {
  const ok = await hearth(["send-test-email", "--to", "cli@example.com", "--smtp-url", smtp.url], { HEARTH_EXTERNAL_URL: "https://chat.example.org" });
  expect(ok.code).toBe(0);
  expect(ok.stdout).toContain("Sent a test email to cli@example.com");
  expect(ok.stdout).toMatch(/The SMTP server answered: 250/);
  const mail = smtp.received.find((m) => m.envelopeTo.includes("cli@example.com"))!;
  expect(mail.parsed.from?.value[0].address).toBe("noreply@chat.example.org");
  expect(mail.header("auto-submitted")).toBe("auto-generated");

  const closed = `smtp://user:secret@127.0.0.1:${freePort()}?tls=off`;
  const down = await hearth(["send-test-email", "--to", "cli@example.com", "--smtp-url", closed]);
  expect(down.code).toBe(1);
  expect(down.stderr).toMatch(/could not send through smtp:\/\/user:\*\*\*@127\.0\.0\.1:\d+\?tls=off: .*ECONNREFUSED/);
  expect(down.stderr).not.toContain("secret");

  const bad = await hearth(["send-test-email", "--to", "cli@example.com", "--smtp-url", "http://example.com"]);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain("invalid SMTP URL scheme");
  const none = await hearth(["send-test-email", "--to", "cli@example.com"], { HEARTH_SMTP_URL: "" });
  expect(none.code).toBe(2);
  expect(none.stderr).toContain("no SMTP server");
});
