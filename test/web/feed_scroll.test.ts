/**
 * Scrolling back through a long history: the window of rows moves up a step at a time,
 * the step's rows are added empty and fill in a few a frame over the following frames, and
 * the row being read never moves by itself while that happens (every message here opens a
 * new conversation, so every row has a recipient bar, whose margin must not shift the rows
 * below while the rows above it are still empty).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { expectSuccess, startTestServer, PASSWORD, type TestServer } from "../kit";
import { launchChromium, signInToChat, until, type Browser, type Page } from "../kit/browser";

let s: TestServer;
let browser: Browser;
let page: Page;
let archive: number;
const MESSAGES = 400;

beforeAll(async () => {
  s = await startTestServer();
  archive = await s.createChannel("desdemona", "Archive", ["hamlet", "desdemona"]);
  // Each message in a topic of its own.
  for (let i = 1; i <= MESSAGES; i++) expectSuccess(await s.as("desdemona").post("/messages", { type: "stream", to: archive, topic: `entry ${i}`, content: `record ${i}.` }));
  expectSuccess(await s.as("hamlet").post("/mark_all_as_read"));
  browser = await launchChromium();
  page = await browser.newPage({ ownCookies: true });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

/**
 * Scrolls the feed up `step` px a frame until the view's beginning is shown (or `frames` frames);
 * counts the frames in which the row in the middle of the feed was not where the scroll put it,
 * and the frames in which some row wrapper was still empty.
 */
const scrollBack = (step: number, frames: number) =>
  page.evaluate<{ frames: number; moved: number; withEmpty: number; most: number }>(`new Promise((resolve) => {
    const feed = document.querySelector(".feed");
    let seen = null, n = 0, moved = 0, withEmpty = 0, most = 0;
    const tick = () => {
      if (seen && seen.row.isConnected && Math.abs(seen.row.getBoundingClientRect().top - seen.top) > 2) moved++;
      const wraps = [...feed.querySelectorAll(".msg-wrap")];
      if (wraps.some((w) => !w.firstElementChild)) withEmpty++;
      most = Math.max(most, feed.querySelectorAll("article.msg").length);
      if (feed.querySelector(".feed-start") && !feed.scrollTop) return resolve({ frames: n, moved, withEmpty, most });
      feed.scrollTop = Math.max(0, feed.scrollTop - ${step});
      const box = feed.getBoundingClientRect();
      const row = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2)?.closest(".msg-wrap");
      seen = row ? { row, top: row.getBoundingClientRect().top } : null;
      if (++n < ${frames}) requestAnimationFrame(tick); else resolve({ frames: n, moved, withEmpty, most });
    };
    requestAnimationFrame(tick);
  })`);

test("scrolling back fills each step's rows over the next frames, and the row being read never moves by itself", async () => {
  await signInToChat(page, s.url, s.users.hamlet.email, PASSWORD);
  await page.emulate({ width: 1280, height: 800 });
  await page.evaluate(`location.hash = "#narrow/channel/${archive}-Archive"`);
  await until(page, `[...document.querySelectorAll("article.msg .rendered")].some((r) => r.textContent === "record ${MESSAGES}.")`);

  // Steady scrolling, then again until the view's beginning (older pages come meanwhile).
  let total = { frames: 0, moved: 0, withEmpty: 0, most: 0 };
  for (let round = 0; round < 40 && !(await page.evaluate<boolean>(`!!document.querySelector(".feed-start") && !document.querySelector(".feed").scrollTop`)); round++) {
    const r = await scrollBack(300, 60);
    total = { frames: total.frames + r.frames, moved: total.moved + r.moved, withEmpty: total.withEmpty + r.withEmpty, most: Math.max(total.most, r.most) };
  }
  expect(await page.evaluate<boolean>(`!!document.querySelector(".feed-start")`)).toBe(true);
  // Steps happened, and their rows were empty for a while (filled in over later frames, not all at once).
  expect(total.withEmpty).toBeGreaterThan(0);
  expect(total.moved).toBe(0);
  expect(total.most).toBeLessThanOrEqual(150);

  // Once the scrolling stops every row fills in: the first message, with its bar, and no empty wrapper.
  await until(page, `[...document.querySelectorAll(".msg-wrap")].every((w) => w.firstElementChild)`);
  expect(await page.evaluate<boolean>(`[...document.querySelectorAll("article.msg .rendered")].some((r) => r.textContent === "record 1.")`)).toBe(true);
  expect(await page.evaluate<string>(`document.querySelector(".msg-wrap .recipient-bar").textContent`)).toContain("entry 1");
  expect(page.errors()).toEqual([]);
}, 120_000);
