/**
 * Inviting teammates from the web client, in headless Chromium against a real server
 * and a real SMTP server on loopback: a member invites by email (the roles offered stop
 * at their own), the invitee follows the emailed link, picks a name and password and
 * lands in the chat signed in; the owner makes a reusable link, which a second
 * newcomer follows into the chat; a guest is offered no invitation at all.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, PASSWORD, startTestServer, type TestServer } from "../kit";
import { click, launchChromium, signInToChat, until, type Browser, type Page } from "../kit/browser";
import { startSmtpServer, type SmtpTestServer } from "../kit/smtp";

let s: TestServer;
let smtp: SmtpTestServer;
let browser: Browser;

const setField = (page: Page, selector: string, value: string) =>
  page.evaluate(`(() => {
    const field = document.querySelector(${JSON.stringify(selector)});
    field.value = ${JSON.stringify(value)};
    field.dispatchEvent(new Event("input", { bubbles: true }));
    field.dispatchEvent(new Event("change", { bubbles: true }));
  })()`);
const roleChoices = (page: Page, form: string) => page.evaluate<string[]>(`[...document.querySelectorAll("${form} select[name=invite_as] option")].map((o) => o.value)`);

async function openInvitePanel(page: Page): Promise<void> {
  await click(page, ".open-invite");
  await until(page, `document.querySelector(".invite-panel")`);
}

/** Fills the join form a link leads to, submits it, and follows "Start chatting" into the chat. */
async function joinAndChat(page: Page, link: string, fields: { email?: string; full_name: string }): Promise<void> {
  await page.goto(link);
  await until(page, `document.getElementById("full_name")`);
  await page.evaluate(`(() => {
    const fields = ${JSON.stringify({ ...fields, password: "arden forest" })};
    for (const [name, value] of Object.entries(fields)) document.getElementById(name).value = value;
    document.querySelector("form").requestSubmit();
  })()`);
  await until(page, `document.querySelector("a.button")?.textContent === "Start chatting"`);
  await click(page, "a.button");
  await until(page, `location.pathname === "/" && document.querySelector(".sidebar .channels")`);
}

beforeAll(async () => {
  smtp = await startSmtpServer();
  s = await startTestServer({ env: { HEARTH_SMTP_URL: smtp.url } });
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await smtp?.close();
}, 30_000);

describe("inviting from the web client", () => {
  test("a member invites by email; the invitee follows the emailed link and is in the chat, signed in", async () => {
    const hamlet = await browser.newPage({ ownCookies: true });
    await signInToChat(hamlet, s.url, s.users.hamlet.email, PASSWORD);
    await openInvitePanel(hamlet);
    // Members may invite by email (the default), not make links (administrators only).
    expect(await hamlet.evaluate(`!!document.querySelector(".invite-email") && !document.querySelector(".invite-link")`)).toBe(true);
    expect(await roleChoices(hamlet, ".invite-email")).toEqual(["400", "600"]);

    await setField(hamlet, "textarea[name=invitee_emails]", "horatio@example.com");
    await hamlet.evaluate(`document.querySelector(".invite-email").requestSubmit()`);
    await until(hamlet, `document.querySelector(".invite-email .result")?.textContent === "Invitation sent to horatio@example.com."`);
    const [mail] = await smtp.waitFor(1);
    expect(mail.envelopeTo).toEqual(["horatio@example.com"]);
    const link = /https?:\/\/\S+\/accept\/[a-z0-9]+\//.exec(mail.parsed.text ?? "")![0];

    const horatio = await browser.newPage({ ownCookies: true });
    await joinAndChat(horatio, link, { full_name: "Horatio" });
    const me = await horatio.evaluate<{ email: string }>(`fetch("/json/users/me").then((r) => r.json())`);
    expect(me.email).toBe("horatio@example.com");
    expect(horatio.errors()).toEqual([]);
    expect(hamlet.errors()).toEqual([]);
    await horatio.close();
    await hamlet.close();
  }, 60_000);

  test("the owner makes a reusable link, with every role; a newcomer joins through it into the chat", async () => {
    const desdemona = await browser.newPage({ ownCookies: true });
    await signInToChat(desdemona, s.url, s.users.desdemona.email, PASSWORD);
    await openInvitePanel(desdemona);
    expect(await roleChoices(desdemona, ".invite-link")).toEqual(["100", "200", "300", "400", "600"]);
    await click(desdemona, ".invite-link .create-link");
    const link = await until<string>(desdemona, `document.querySelector("input[name=invite_link]")?.value`);
    expect(link.startsWith(`${s.url}/join/`)).toBe(true);

    const viola = await browser.newPage({ ownCookies: true });
    await joinAndChat(viola, link, { email: "viola@example.com", full_name: "Viola" });
    const me = await viola.evaluate<{ email: string; role: number }>(`fetch("/json/users/me").then((r) => r.json())`);
    expect(me).toMatchObject({ email: "viola@example.com", role: 400 });
    expect(viola.errors()).toEqual([]);
    await viola.close();
    await desdemona.close();
  }, 60_000);

  test("a guest is offered no invitation", async () => {
    expectSuccess(await s.as("desdemona").patch(`/users/${s.users.hamlet.id}`, { role: 600 }));
    const hamlet = await browser.newPage({ ownCookies: true });
    await signInToChat(hamlet, s.url, s.users.hamlet.email, PASSWORD);
    expect(await hamlet.evaluate(`document.querySelector(".open-settings") !== null && document.querySelector(".open-invite") === null`)).toBe(true);
    await hamlet.close();
  }, 60_000);
});
