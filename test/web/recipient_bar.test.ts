/**
 * The recipient bar of the conversation being read stays at the top of the feed, as in
 * Zulip's web app: not only while the group's first message is on screen but while any
 * message of its group is under the top of the feed, and it names the next conversation
 * once that one is scrolled up to the top.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { expectSuccess, startTestServer, PASSWORD, type TestServer } from "../kit";
import { launchChromium, signInToChat, until, type Browser, type Page } from "../kit/browser";

let s: TestServer;
let browser: Browser;
let page: Page;
let denmark: number;

beforeAll(async () => {
  s = await startTestServer();
  denmark = await s.createChannel("desdemona", "Denmark", ["hamlet", "desdemona"]);
  // Two conversations one after the other, each taller than the feed, all in the first page the view fetches.
  for (const topic of ["first act", "second act"]) {
    for (let i = 1; i <= 24; i++) expectSuccess(await s.as("desdemona").post("/messages", { type: "stream", to: denmark, topic, content: `${topic}, line ${i}.\n\nAn aside.\n\nAnother aside.` }));
  }
  expectSuccess(await s.as("hamlet").post("/mark_all_as_read"));
  browser = await launchChromium();
  page = await browser.newPage({ ownCookies: true });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

const rowOf = (text: string) => `[...document.querySelectorAll("article.msg")].find((row) => row.querySelector(".rendered p")?.textContent === ${JSON.stringify(text)})`;

/** Scrolls the feed so that the row with `text` starts at the feed's top. */
const scrollToRow = (text: string) =>
  page.evaluate(`(() => {
    const feed = document.querySelector(".feed");
    feed.scrollTop += ${rowOf(text)}.getBoundingClientRect().top - feed.getBoundingClientRect().top;
  })()`);

/** The bar shown at the top of the feed, if any: its text, where it is against the feed, and whether it is the topmost thing at its middle. */
const barAtTop = () =>
  page.evaluate<{ text: string; top: number; bottom: number; feedTop: number; onTop: boolean; tabbable: boolean } | null>(`(() => {
    const feed = document.querySelector(".feed").getBoundingClientRect();
    const bar = document.querySelector(".feed-top-bar .recipient-bar");
    if (!bar) return null;
    const box = bar.getBoundingClientRect();
    const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
    return { text: bar.textContent, top: box.top, bottom: box.bottom, feedTop: feed.top, onTop: bar.contains(hit), tabbable: [...bar.querySelectorAll("a")].some((a) => a.tabIndex >= 0) };
  })()`);

test("the bar of the group under the top of the feed stays shown there, and follows into the next group", async () => {
  await signInToChat(page, s.url, s.users.hamlet.email, PASSWORD);
  await page.evaluate(`location.hash = "#narrow/channel/${denmark}-Denmark"`);
  await until(page, `${rowOf("first act, line 1.")} && ${rowOf("second act, line 24.")}`);

  // Reading the middle of the first act: its first message (and its in-flow bar) is above the top.
  await scrollToRow("first act, line 12.");
  await until(page, `document.querySelector(".feed-top-bar .recipient-bar")?.textContent.includes("first act")`);
  expect(await page.evaluate<boolean>(`${rowOf("first act, line 1.")}.getBoundingClientRect().bottom < document.querySelector(".feed").getBoundingClientRect().top`)).toBe(true);
  let bar = (await barAtTop())!;
  expect(bar.text).toContain("#Denmark");
  expect(bar.text).toContain("first act");
  expect(Math.abs(bar.top - bar.feedTop)).toBeLessThan(2);
  expect(bar.bottom).toBeGreaterThan(bar.feedTop + 10);
  expect(bar.onTop).toBe(true);
  // A copy of an in-flow bar: the keyboard reaches the in-flow one, not this one.
  expect(bar.tabbable).toBe(false);

  // Into the second act: the bar names it.
  await scrollToRow("second act, line 12.");
  await until(page, `document.querySelector(".feed-top-bar .recipient-bar")?.textContent.includes("second act")`);
  bar = (await barAtTop())!;
  expect(bar.text).toContain("#Denmark");
  expect(bar.text).not.toContain("first act");
  expect(Math.abs(bar.top - bar.feedTop)).toBeLessThan(2);
  expect(bar.onTop).toBe(true);

  // Back in the first act's last lines, the second act's in-flow bar still below: the first act's bar again.
  await scrollToRow("first act, line 23.");
  await until(page, `document.querySelector(".feed-top-bar .recipient-bar")?.textContent.includes("first act")`);

  // At the very top of the view the group's own bar is wholly in view: no copy over it.
  await page.evaluate(`document.querySelector(".feed").scrollTop = 0`);
  await until(page, `!document.querySelector(".feed-top-bar .recipient-bar")`);
  expect(await page.evaluate<string>(`document.querySelector(".msg-wrap .recipient-bar").textContent`)).toContain("first act");
  expect(page.errors()).toEqual([]);
}, 120_000);
