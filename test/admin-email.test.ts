/**
 * The administration page's email parts, in headless Chromium against real servers:
 * without an SMTP server, an invitation made on the page shows its link ("Copy link"),
 * and the link, opened in the browser, creates the account; with a loopback SMTP
 * server, the Email section shows the configuration and "Send test email" delivers.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, PASSWORD, startTestServer, type TestServer } from "./kit";
import { launchChromium, until, type Browser, type Page } from "./kit/browser";
import { startSmtpServer } from "./kit/smtp";

let browser: Browser;
let page: Page;
beforeAll(async () => {
  browser = await launchChromium();
  page = await browser.newPage();
}, 120_000);
afterAll(async () => {
  await browser?.close();
});

/** Like page.waitFor, across navigations. */
const settle = <T>(expression: string, timeoutMs = 20_000) => until<T>(page, expression, timeoutMs);

/** /admin sends a browser without a session to /login, and back once signed in. */
async function logInAsOwner(s: TestServer) {
  await page.goto(`${s.url}/admin`);
  await settle(`location.pathname === "/login" && document.querySelector('form[action="/login"]') !== null && document.readyState === "complete"`);
  await page.evaluate(`(() => {
    const form = document.querySelector('form[action="/login"]');
    form.elements.username.value = ${JSON.stringify(s.users.desdemona.email)};
    form.elements.password.value = ${JSON.stringify(PASSWORD)};
    form.requestSubmit();
  })()`);
  await settle(`!document.getElementById("admin").hidden && document.getElementById("email-config").textContent !== ""`);
}

describe("administration page, email", () => {
  test("without SMTP: the Email section says so; an email invitation's link is shown, copied and works", async () => {
    const s = await startTestServer();
    try {
      await logInAsOwner(s);
      expect(await page.evaluate(`document.getElementById("email-config").textContent`)).toContain("No SMTP server is configured");
      expect(await page.evaluate(`document.querySelector("#email-test button").disabled`)).toBe(true);
      await page.evaluate(`(() => {
        const form = document.getElementById("invite-email");
        form.elements.emails.value = "browser-invitee@example.com";
        form.requestSubmit();
      })()`);
      await page.waitFor(`document.querySelector("#email-invites input.invite-link")`, 20_000);
      const row = await page.evaluate<string[]>(`[...document.querySelectorAll("#email-invites tr td")].map((td) => td.textContent)`);
      expect(row[0]).toBe("browser-invitee@example.com");
      expect(row[3]).toBe("not emailed (no SMTP server)");
      const link = await page.evaluate<string>(`document.querySelector("#email-invites input.invite-link").value`);
      expect(link).toMatch(/\/accept\/[a-z0-9]{24}\/$/);
      await page.evaluate(`document.querySelector("#email-invites button.copy-link").click()`);
      await page.waitFor(`document.getElementById("status").textContent === "Link for browser-invitee@example.com copied."`);

      // The invitee opens it, picks a name and a password.
      await page.goto(link);
      expect(await page.evaluate(`document.getElementById("email").textContent`)).toBe("browser-invitee@example.com");
      await page.evaluate(`(() => {
        const form = document.querySelector("form");
        form.elements.full_name.value = "Browser Invitee";
        form.elements.password.value = "a long password";
        form.submit();
      })()`);
      await page.waitFor(`document.querySelector("h1") && document.querySelector("h1").textContent === "Welcome!"`, 20_000);
      const users = expectSuccess(await s.as("iago").get("/users")).members as any[];
      expect(users.find((u) => u.full_name === "Browser Invitee")).toBeDefined();
    } finally {
      await s.stop();
    }
  }, 60_000);

  test("with SMTP: the configuration is shown and Send test email delivers", async () => {
    const smtp = await startSmtpServer();
    const s = await startTestServer({ env: { HEARTH_SMTP_URL: smtp.url } });
    try {
      await logInAsOwner(s);
      expect(await page.evaluate(`document.getElementById("email-config").textContent`)).toBe(`Sending through 127.0.0.1:${smtp.port}, from Hearth <noreply@127.0.0.1>.`);
      expect(await page.evaluate(`document.getElementById("email-test").elements.to.value`)).toBe(s.users.desdemona.email);
      await page.evaluate(`document.getElementById("email-test").requestSubmit()`);
      await page.waitFor(`document.getElementById("status").textContent.startsWith("Test email sent to")`, 20_000);
      expect(smtp.received.map((m) => m.envelopeTo[0])).toEqual([s.users.desdemona.email]);
    } finally {
      await s.stop();
      await smtp.close();
    }
  }, 60_000);
});
