/**
 * The web client's panels, in headless Chromium against a real server, two members
 * signed in through the real /login form: browsing and creating channels (the other
 * member sees a new channel live and subscribes), a subscription's mute, pin and
 * colour from the sidebar, and personal settings. Neither page may log an error.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, PASSWORD, startTestServer, type TestServer } from "../kit";
import { launchChromium, type Browser, type Page } from "../kit/browser";

let s: TestServer;
let browser: Browser;
let hamlet: Page;
let desdemona: Page;
let denmark: number;

async function until<T>(page: Page, expression: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await page.evaluate<T>(expression).catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for: ${expression}`);
    await Bun.sleep(50);
  }
}

/** Sets a field as a user would: the value, then the event the app listens to. */
const setField = (page: Page, selector: string, value: string | boolean, eventName = "input") =>
  page.evaluate(`(() => {
    const field = document.querySelector(${JSON.stringify(selector)});
    field.focus();
    if (typeof ${JSON.stringify(value)} === "boolean") field.checked = ${JSON.stringify(value)}; else field.value = ${JSON.stringify(value)};
    field.dispatchEvent(new Event(${JSON.stringify(eventName)}, { bubbles: true }));
  })()`);
const click = (page: Page, selector: string) => page.evaluate(`document.querySelector(${JSON.stringify(selector)}).click()`);
const channelRow = (name: string) => `[...document.querySelectorAll(".all-channels li")].find((li) => li.querySelector("a").textContent.endsWith(" " + ${JSON.stringify(name)}))`;
const sidebarRow = (id: number) => `document.querySelector('.sidebar .channels li[data-stream-id="${id}"]')`;

async function signIn(page: Page, email: string, password = PASSWORD): Promise<void> {
  await page.goto(`${s.url}/`);
  await until(page, `location.pathname === "/login"`);
  await page.evaluate(`(() => {
    document.getElementById("username").value = ${JSON.stringify(email)};
    document.getElementById("password").value = ${JSON.stringify(password)};
    document.querySelector("form").requestSubmit();
  })()`);
  await until(page, `location.pathname === "/" && document.querySelector(".sidebar .channels")`);
}

beforeAll(async () => {
  s = await startTestServer();
  denmark = await s.createChannel("desdemona", "Denmark", ["hamlet", "desdemona"]);
  browser = await launchChromium();
  hamlet = await browser.newPage({ ownCookies: true });
  desdemona = await browser.newPage({ ownCookies: true });
  await signIn(hamlet, s.users.hamlet.email);
  await signIn(desdemona, s.users.desdemona.email);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

describe("web client panels", () => {
  test("a channel created in the panel appears live in the other member's panel, who subscribes", async () => {
    await click(desdemona, ".open-channels");
    await until(desdemona, `${channelRow("Denmark")}?.querySelector(".subscribers").textContent === "2 subscribers"`);
    await click(hamlet, ".open-channels");
    await until(hamlet, channelRow("Denmark"));

    await setField(desdemona, "input[name=channel-name]", "Elsinore");
    await setField(desdemona, "input[name=channel-description]", "The castle & its <ghosts>");
    await desdemona.evaluate(`document.querySelector(".create-channel").requestSubmit()`);
    // The creator is subscribed: the channel is in her sidebar and marked so in the panel.
    await until(desdemona, `[...document.querySelectorAll(".sidebar .channels .label")].some((l) => l.textContent === "Elsinore")`);
    await until(desdemona, `${channelRow("Elsinore")}?.querySelector("button.unsubscribe")`);

    // Hamlet's open panel gains the channel from the events, description as text.
    await until(hamlet, `${channelRow("Elsinore")}?.querySelector(".description")?.textContent === "The castle & its <ghosts>"`);
    expect(await hamlet.evaluate(`${channelRow("Elsinore")}.querySelector(".description ghosts")`)).toBeNull();
    await hamlet.evaluate(`${channelRow("Elsinore")}.querySelector("button.subscribe").click()`);
    await until(hamlet, `[...document.querySelectorAll(".sidebar .channels .label")].some((l) => l.textContent === "Elsinore")`);
    await until(hamlet, `${channelRow("Elsinore")}?.querySelector("button.unsubscribe")`);
    // Desdemona's count follows Hamlet's subscription.
    await until(desdemona, `${channelRow("Elsinore")}.querySelector(".subscribers").textContent === "2 subscribers"`);
    const { subscriptions } = expectSuccess(await s.as("hamlet").get("/users/me/subscriptions"));
    expect(subscriptions.map((sub: any) => sub.name)).toContain("Elsinore");

    // A blank name is refused by the server, and its words appear beside the form.
    await setField(desdemona, "input[name=channel-name]", "   ");
    await desdemona.evaluate(`document.querySelector(".create-channel").requestSubmit()`);
    const said = await until<string>(desdemona, `document.querySelector(".create-channel .error")?.textContent`);
    expect(said).toContain("empty");

    // Unsubscribing from the panel takes the channel out of the sidebar.
    await hamlet.evaluate(`${channelRow("Elsinore")}.querySelector("button.unsubscribe").click()`);
    await until(hamlet, `![...document.querySelectorAll(".sidebar .channels .label")].some((l) => l.textContent === "Elsinore")`);
    await click(hamlet, ".panel .close");
    await click(desdemona, ".panel .close");
    await until(hamlet, `!document.querySelector(".panel")`);
  });

  test("mute, pin and colour from the sidebar apply live", async () => {
    const elsewhere = await s.createChannel("hamlet", "Aardvarks", ["hamlet"]);
    await until(hamlet, sidebarRow(elsewhere));
    await hamlet.evaluate(`${sidebarRow(denmark)}.querySelector(".sub-settings-toggle").click()`);
    await until(hamlet, `${sidebarRow(denmark)}.querySelector(".sub-settings")`);

    await setField(hamlet, `.sidebar .channels li[data-stream-id="${denmark}"] input[name=is_muted]`, true, "change");
    await until(hamlet, `${sidebarRow(denmark)}.classList.contains("muted")`);
    await setField(hamlet, `.sidebar .channels li[data-stream-id="${denmark}"] input[type=color]`, "#aa3300", "change");
    await until(hamlet, `getComputedStyle(${sidebarRow(denmark)}.querySelector(".swatch")).backgroundColor === "rgb(170, 51, 0)"`);
    // Aardvarks sorts first until Denmark is pinned.
    expect(await hamlet.evaluate(`document.querySelector(".sidebar .channels li").dataset.streamId`)).toBe(String(elsewhere));
    await setField(hamlet, `.sidebar .channels li[data-stream-id="${denmark}"] input[name=pin_to_top]`, true, "change");
    await until(hamlet, `document.querySelector(".sidebar .channels li").dataset.streamId === "${denmark}"`);

    const { subscriptions } = expectSuccess(await s.as("hamlet").get("/users/me/subscriptions"));
    const sub = subscriptions.find((x: any) => x.stream_id === denmark);
    expect([sub.is_muted, sub.pin_to_top, sub.color]).toEqual([true, true, "#aa3300"]);
    // Desdemona's subscription is her own.
    expect(await desdemona.evaluate(`${sidebarRow(denmark)}.classList.contains("muted")`)).toBe(false);

    // A muted channel's messages do not count in the title's total.
    expectSuccess(await s.as("hamlet").post("/mark_all_as_read"));
    await until(hamlet, `!document.title.startsWith("(")`);
    expectSuccess(await s.as("desdemona").post("/messages", { type: "stream", to: denmark, topic: "quiet", content: "Hush." }));
    await until(hamlet, `${sidebarRow(denmark)}.querySelector(".count")?.textContent === "1"`);
    expect(await hamlet.evaluate(`document.title.startsWith("(")`)).toBe(false);
  });

  test("neither page logged an error", () => {
    expect(hamlet.errors()).toEqual([]);
    // Except the refusal of the blank channel name, which the browser reports itself.
    const refused = /status of 400 .*\/json\/users\/me\/subscriptions$/;
    expect(desdemona.errors().filter((e) => !refused.test(e))).toEqual([]);
    expect(desdemona.errors().filter((e) => refused.test(e)).length).toBe(1);
  });
});
