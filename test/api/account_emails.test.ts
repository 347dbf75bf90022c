import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiClient, expectError, expectSuccess, PASSWORD, startTestServer, type TestServer } from "../kit";
import { verifyAction } from "../kit/events";
import { startSmtpServer, type ReceivedEmail, type SmtpTestServer } from "../kit/smtp";
import { allOutboxEmails } from "../../src/store/outbox";
import { getAccountTokenSecret } from "../../src/store/account_emails";
import { signToken } from "../../src/lib/signed_tokens";
import { getUser, putUser } from "../../src/store/users";

/**
 * Account emails end to end with a real SMTP server on loopback: password reset,
 * email-address change, and the notice of a login from a new client.
 */

let s: TestServer;
let smtp: SmtpTestServer;

beforeAll(async () => {
  smtp = await startSmtpServer();
  s = await startTestServer({ env: { HEARTH_SMTP_URL: smtp.url } });
});
afterAll(async () => {
  await s.stop();
  await smtp.close();
});

/** Once the outbox is empty, nothing more received than before: the request sent no email (one it queued would have arrived). */
async function expectNoMailSince(before: number) {
  for (let i = 0; i < 600 && allOutboxEmails(s.server.h.store).length > 0; i++) await Bun.sleep(50);
  expect(allOutboxEmails(s.server.h.store)).toEqual([]);
  expect(smtp.received.length).toBe(before);
}
const linkIn = (mail: ReceivedEmail, path: string) => [...mail.parsed.text!.matchAll(/https?:\/\/\S+/g)].map((m) => m[0]).find((l) => l.includes(path))!;
const form = (fields: Record<string, string>) => ({ method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });
const login = (username: string, password: string, agent = "test-client/1.0") =>
  fetch(`${s.url}/api/v1/fetch_api_key`, { ...form({ username, password }), headers: { "content-type": "application/x-www-form-urlencoded", "user-agent": agent } });

describe("password reset", () => {
  test("request, email, link, new password; the old one and the used link stop working", async () => {
    const hamlet = s.users.hamlet;
    // The sign-in page leads here when the server can send email.
    expect(await (await fetch(`${s.url}/login`)).text()).toContain('<a href="/accounts/password/reset/">Forgot your password?</a>');
    const page = await fetch(`${s.url}/accounts/password/reset/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    const html = await page.text();
    expect(html).toContain('name="email"');
    expect(html).not.toContain("<script");

    const answer = await fetch(`${s.url}/accounts/password/reset/`, form({ email: hamlet.email }));
    expect(answer.status).toBe(200);
    const known = await answer.text();
    const [mail] = await smtp.mailTo(hamlet.email, 1);
    const link = linkIn(mail, "/accounts/password/reset/");
    expect(link).toStartWith(`${s.url}/accounts/password/reset/`);
    const resetPage = await fetch(link);
    expect(resetPage.status).toBe(200);
    expect(await resetPage.text()).toContain('name="new_password1"');
    // The server's password rules apply.
    const short = await fetch(link, form({ new_password1: "short", new_password2: "short" }));
    expect(short.status).toBe(400);
    const differ = await fetch(link, form({ new_password1: "a brand new password", new_password2: "another one entirely" }));
    expect(differ.status).toBe(400);
    const done = await fetch(link, form({ new_password1: "a brand new password", new_password2: "a brand new password" }));
    expect(done.status).toBe(200);
    expect((await login(hamlet.email, "a brand new password")).status).toBe(200);
    expect((await login(hamlet.email, PASSWORD)).status).toBe(401);
    // Single use: the password changed, so the link is dead.
    expect((await fetch(link)).status).toBe(404);
    expect((await fetch(link, form({ new_password1: "a third password", new_password2: "a third password" }))).status).toBe(404);

    // An unknown address: the same answer (but for the address itself), and no email.
    const before = smtp.received.length;
    const unknown = await fetch(`${s.url}/accounts/password/reset/`, form({ email: "nobody@zulip.test" }));
    expect(unknown.status).toBe(200);
    expect((await unknown.text()).replace("nobody@zulip.test", "X")).toBe(known.replace(hamlet.email, "X"));
    await expectNoMailSince(before);
  });

  test("expired and forged links are refused", async () => {
    const hamlet = s.users.hamlet;
    const secret = getAccountTokenSecret(s.server.h.store)!;
    const expired = signToken(secret, "password_reset", { u: hamlet.id, f: "x", exp: Math.floor(Date.now() / 1000) - 10 });
    expect((await fetch(`${s.url}/accounts/password/reset/${expired}/`)).status).toBe(404);
    const otherPurpose = signToken(secret, "unsubscribe", { u: hamlet.id, exp: Math.floor(Date.now() / 1000) + 100 });
    expect((await fetch(`${s.url}/accounts/password/reset/${otherPurpose}/`)).status).toBe(404);
    expect((await fetch(`${s.url}/accounts/password/reset/not-a-token/`)).status).toBe(404);
  });

  test("a form over the pages' size limit is refused with a page (413), not a server error", async () => {
    const answer = await fetch(`${s.url}/accounts/password/reset/not-a-token/`, form({ new_password1: "x".repeat(20_000), new_password2: "x" }));
    expect(answer.status).toBe(413);
    expect(answer.headers.get("content-type")).toStartWith("text/html");
    expect(await answer.text()).toContain('class="error"');
  });

  test("requests are limited per address (silently) and per client", async () => {
    const othello = s.users.othello;
    const answers: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${s.url}/accounts/password/reset/`, form({ email: othello.email }));
      expect(res.status).toBe(200);
      answers.push(await res.text());
    }
    expect(new Set(answers).size).toBe(1);
    // Two an hour per address: the third asked for nothing more.
    await smtp.mailTo(othello.email, 2);
    await expectNoMailSince(smtp.received.length);
    expect(smtp.mailsTo(othello.email).length).toBe(2);
    let refused = 0;
    for (let i = 0; i < 40; i++) {
      const res = await fetch(`${s.url}/accounts/password/reset/`, form({ email: `nobody${i}@zulip.test` }));
      if (res.status === 429) refused++;
    }
    expect(refused).toBeGreaterThan(0);
  });
});

describe("email address change", () => {
  test("PATCH /settings email: a confirmation to the new address; its link changes the address, with events; the old address is told", async () => {
    const cordelia = s.users.cordelia;
    const newAddress = "cordelia.lear@zulip.test";
    expectSuccess(await s.as("cordelia").patch("/settings", { email: newAddress }));
    // Nothing changed yet.
    expect(expectSuccess(await s.as("cordelia").get("/users/me")).delivery_email).toBe(cordelia.email);
    const [mail] = await smtp.mailTo(newAddress, 1);
    const link = linkIn(mail, "/accounts/confirm_new_email/");
    const shown = await fetch(link);
    expect(shown.status).toBe(200);
    expect(await shown.text()).toContain(newAddress);
    const oldAddress = cordelia.email;
    const r = await verifyAction(
      s,
      async () => {
        expect((await fetch(link, { method: "POST" })).status).toBe(200);
        // The old address no longer signs in: the test's client uses the new one from here on.
        expect((await s.as("cordelia").get("/users/me")).status).toBe(401);
        s.users.cordelia.email = newAddress;
      },
      { viewers: ["cordelia", "iago", "hamlet"] },
    );
    for (const who of ["cordelia", "iago", "hamlet"]) expect(r.types[who]).toEqual(["realm_user/update", "realm_user/update"]);
    expect(r.events.hamlet.map((e) => e.person)).toEqual([
      { user_id: cordelia.id, delivery_email: newAddress },
      { user_id: cordelia.id, new_email: newAddress },
    ]);
    const [notice] = await smtp.mailTo(oldAddress, 1);
    expect(notice.parsed.text).toContain(newAddress);
    expect(getUser(s.server.h.store, cordelia.id)!.email).toBe(newAddress);
    // The link is single-use.
    expect((await fetch(link, { method: "POST" })).status).toBe(404);
    // The API key still works, with the new address.
    expect(expectSuccess(await new ApiClient(s.url, newAddress, cordelia.apiKey).get("/users/me")).delivery_email).toBe(newAddress);
  });

  test("an address only administrators may see: only they (and the user) hear of the change, and the API email stays the placeholder", async () => {
    expectSuccess(await s.as("shiva").patch("/settings", { email_address_visibility: 3 }));
    const newAddress = "shiva.new@zulip.test";
    expectSuccess(await s.as("shiva").patch("/settings", { email: newAddress }));
    const [mail] = await smtp.mailTo(newAddress, 1);
    const link = linkIn(mail, "/accounts/confirm_new_email/");
    const r = await verifyAction(
      s,
      async () => {
        expect((await fetch(link, { method: "POST" })).status).toBe(200);
        s.users.shiva.email = newAddress;
      },
      { viewers: ["shiva", "iago", "hamlet"] },
    );
    expect(r.events.iago.map((e) => e.person)).toEqual([{ user_id: s.users.shiva.id, delivery_email: newAddress }]);
    expect(r.events.shiva.map((e) => e.person)).toEqual([{ user_id: s.users.shiva.id, delivery_email: newAddress }]);
    expect(r.events.hamlet).toEqual([]);
  });

  test("refused when the organization disables changes (administrators excepted), for an address in use, and past the rate limit", async () => {
    expectSuccess(await s.as("desdemona").patch("/realm", { email_changes_disabled: true }));
    expectError(await s.as("othello").patch("/settings", { email: "moor@zulip.test" }), 400, "BAD_REQUEST", "Email address changes are disabled in this organization.");
    expectSuccess(await s.as("iago").patch("/settings", { email: "iago2@zulip.test" }));
    await smtp.mailTo("iago2@zulip.test", 1);
    expectSuccess(await s.as("desdemona").patch("/realm", { email_changes_disabled: false }));
    expectError(await s.as("othello").patch("/settings", { email: s.users.hamlet.email }), 400, "BAD_REQUEST", `Email '${s.users.hamlet.email}' already in use`);
    expectError(await s.as("othello").patch("/settings", { email: "not an address" }), 400, "BAD_REQUEST");
    expectSuccess(await s.as("othello").patch("/settings", { email: "moor1@zulip.test" }));
    expectSuccess(await s.as("othello").patch("/settings", { email: "moor2@zulip.test" }));
    expectError(await s.as("othello").patch("/settings", { email: "moor3@zulip.test" }), 429, "RATE_LIMIT_HIT");
    // The newer request replaced the older: the first link no longer works.
    const [first] = await smtp.mailTo("moor1@zulip.test", 1);
    expect((await fetch(linkIn(first, "/accounts/confirm_new_email/"))).status).toBe(404);
    const [second] = await smtp.mailTo("moor2@zulip.test", 1);
    expect((await fetch(linkIn(second, "/accounts/confirm_new_email/"))).status).toBe(200);
    // The current address, as written: no change, no email.
    const before = smtp.received.length;
    expectSuccess(await s.as("shiva").patch("/settings", { email: s.users.shiva.email }));
    await expectNoMailSince(before);
  });
});

describe("new-login notice", () => {
  test("a password login from a new client emails a notice; a known client, the first login of a new account and enable_login_emails off do not", async () => {
    const hamlet = s.users.hamlet;
    const password = "a brand new password";
    const before = smtp.received.length;
    // The account is brand new (the test server just made it): its first clients are only recorded.
    expect((await login(hamlet.email, password, "Client A")).status).toBe(200);
    await expectNoMailSince(before);
    // A minute later, as far as the server can tell.
    await s.server.h.store.commit(() => {
      const user = getUser(s.server.h.store, hamlet.id)!;
      putUser(s.server.h.store, { ...user, date_joined: user.date_joined - 3600 });
    });
    expect((await login(hamlet.email, password, "Client A")).status).toBe(200);
    await expectNoMailSince(before);
    expect((await login(hamlet.email, password, "Client B")).status).toBe(200);
    const notice = await smtp.mailWith(hamlet.email, (m) => m.parsed.subject === "New login to Zulip Dev");
    expect(notice.parsed.text).toContain("Client B");
    expect(notice.header("auto-submitted")).toBe("auto-generated");
    const count = smtp.received.length;
    expect((await login(hamlet.email, password, "Client B")).status).toBe(200);
    await expectNoMailSince(count);
    // A failed login tells nothing.
    expect((await login(hamlet.email, "wrong password", "Client C")).status).toBe(401);
    await expectNoMailSince(count);
    expectSuccess(await s.as("hamlet").patch("/settings", { enable_login_emails: false }));
    expect((await login(hamlet.email, password, "Client D")).status).toBe(200);
    await expectNoMailSince(count);
  });
});
