/**
 * The web client's speed in headless Chromium, on a store of many messages (issue
 * figures: first feed painted, a narrow switch, scrolling back through thousands of
 * loaded messages), each beside a reference measured in the same run: the same
 * measurement on a bare page served by a bare `Bun.serve` (nothing to fetch, nothing
 * to render but one line), so the machine's own speed and load show.
 *
 * Usage: bun scripts/bench-web.ts [--messages 100000] [--switches 20] [--scroll 5000]
 * Figures go to docs/benchmarks.md.
 */
import { PASSWORD, startTestServer } from "../test/kit";
import { launchChromium, signInToChat, until, type Page } from "../test/kit/browser";
import { percentile } from "./bench-lib";

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}
const MESSAGES = option("messages", 100_000);
const SWITCHES = option("switches", 20);
const SCROLL_MESSAGES = option("scroll", 5_000);
const CHANNELS = 5;
const TOPICS_PER_CHANNEL = 40;


/** Milliseconds from navigation start until `ready` holds, checked on every frame in the page. */
const timeUntilReady = (ready: string) =>
  `new Promise((resolve) => { const check = () => (${ready}) ? resolve(performance.now()) : requestAnimationFrame(check); check(); })`;

/** Sets the hash and resolves with the milliseconds until `ready` holds (checked every frame). */
const timeHashSwitch = (hash: string, ready: string) =>
  `new Promise((resolve) => { const t0 = performance.now(); location.hash = ${JSON.stringify(hash)};
     const check = () => (${ready}) ? resolve(performance.now() - t0) : requestAnimationFrame(check); requestAnimationFrame(check); })`;

/** Scrolls `selector` up by `step` px a frame for `frames` frames; resolves with each frame's duration. */
const scrollFrames = (selector: string, step: number, frames: number) =>
  `new Promise((resolve) => { const el = document.querySelector(${JSON.stringify(selector)}); const times = []; let last = performance.now(); let n = 0;
     const tick = (now) => { times.push(now - last); last = now; el.scrollTop = Math.max(0, el.scrollTop - ${step}); if (++n < ${frames}) requestAnimationFrame(tick); else resolve(times.slice(1)); };
     requestAnimationFrame(tick); })`;

const summary = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), max: sorted[sorted.length - 1] };
};
const ms = (n: number) => `${n.toFixed(1)} ms`;

// The reference: a bare Bun.serve page with one scrollable list and one line of text.
const bareRows = Array.from({ length: 150 }, (_, i) => `<p>row ${i}</p>`).join("");
const bare = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: () => new Response(`<!doctype html><html><body><div class="feed" style="height:600px;overflow:auto"><article class="msg">${bareRows}</article></div></body></html>`, { headers: { "content-type": "text/html" } }),
});

const s = await startTestServer();
const browser = await launchChromium();
try {
  // The store: channels with topics, messages spread over them, written over HTTP.
  const members = ["hamlet", "desdemona", "othello", "cordelia", "iago"] as const;
  const channels: number[] = [];
  for (let c = 0; c < CHANNELS; c++) channels.push(await s.createChannel("desdemona", `bench ${c}`, [...members]));
  const started = performance.now();
  let next = 0;
  const writer = async () => {
    for (let i = next++; i < MESSAGES; i = next++) {
      const channel = channels[i % CHANNELS];
      const topic = `topic ${Math.floor(i / CHANNELS) % TOPICS_PER_CHANNEL}`;
      const res = await s.as(members[i % members.length]).post("/messages", { type: "stream", to: channel, topic, content: `Message ${i}: some **bold** words and a [link](https://example.com/${i}).` });
      if (res.status !== 200) throw new Error(`send failed: ${res.status} ${JSON.stringify(res.body)}`);
    }
  };
  await Promise.all(Array.from({ length: 32 }, writer));
  console.log(`store: ${MESSAGES} messages in ${CHANNELS} channels × ${TOPICS_PER_CHANNEL} topics, written in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  // Hamlet has read it all (views open at the newest message, as after a day's work), then signs in.
  const marked = await s.as("hamlet").post("/mark_all_as_read", {});
  if (marked.status !== 200) throw new Error(`mark_all_as_read failed: ${marked.status}`);
  const page = await browser.newPage({ ownCookies: true });
  await page.emulate({ width: 1280, height: 800 });
  await signInToChat(page, s.url, s.users.hamlet.email, PASSWORD);

  // 1. First feed painted: a fresh load of the All messages view, five times.
  const firstFeed: number[] = [];
  const firstFeedBare: number[] = [];
  for (let i = 0; i < 5; i++) {
    await page.goto(`${s.url}/?load=${i}#feed`);
    firstFeed.push(await page.evaluate<number>(timeUntilReady(`document.querySelector(".feed article.msg") && !document.querySelector(".feed .loading")`)));
    await page.goto(`http://127.0.0.1:${bare.port}/?load=${i}`);
    firstFeedBare.push(await page.evaluate<number>(timeUntilReady(`document.querySelector(".feed article.msg")`)));
  }

  // 2. Narrow switches: topic after topic, each a view not seen before.
  await page.goto(`${s.url}/?load=switches#feed`);
  await until(page, `document.querySelector(".feed article.msg")`);
  const switches: number[] = [];
  for (let i = 0; i < SWITCHES; i++) {
    const channel = channels[i % CHANNELS];
    const topic = `topic ${(i * 7) % TOPICS_PER_CHANNEL}`;
    const hash = `#narrow/channel/${channel}-bench-${i % CHANNELS}/topic/${encodeURIComponent(topic).replace(/%/g, ".")}`;
    switches.push(await page.evaluate<number>(timeHashSwitch(hash, `document.querySelector(".view-title")?.textContent.endsWith(${JSON.stringify(topic)}) && document.querySelector(".feed article.msg") && !document.querySelector(".feed .loading")`)));
  }

  // 3. Scrolling: back through SCROLL_MESSAGES messages of one channel, then frame times of a steady scroll.
  await page.evaluate(`location.hash = "#narrow/channel/${channels[0]}-bench-0"`);
  await until(page, `document.querySelector(".feed article.msg") && !document.querySelector(".feed .loading")`);
  const loadedTarget = Math.min(SCROLL_MESSAGES, Math.floor(MESSAGES / CHANNELS));
  const scrollStarted = performance.now();
  const frames: number[] = [];
  const passed = new Set<string>();
  for (let round = 0; passed.size < loadedTarget && round < 2_000; round++) {
    frames.push(...(await page.evaluate<number[]>(scrollFrames(".feed", 400, 30))));
    for (const id of await page.evaluate<string[]>(`[...document.querySelectorAll(".feed article.msg")].map((a) => a.dataset.id)`)) passed.add(id);
    if (await page.evaluate<boolean>(`Boolean(document.querySelector(".feed-start"))`)) break;
  }
  const scrollSeconds = (performance.now() - scrollStarted) / 1000;
  await page.goto(`http://127.0.0.1:${bare.port}/?load=scroll`);
  await page.evaluate(`document.querySelector(".feed").scrollTop = 1e6`);
  const bareFrames = await page.evaluate<number[]>(scrollFrames(".feed", 400, 60));

  const a = summary(firstFeed);
  const aBare = summary(firstFeedBare);
  const b = summary(switches);
  const c = summary(frames);
  const cBare = summary(bareFrames);
  console.log("");
  console.log(`| figure | Hearth web client | bare Bun.serve page, same run |`);
  console.log(`|---|---|---|`);
  console.log(`| first feed painted (navigation → messages shown), p50 / max of 5 | ${ms(a.p50)} / ${ms(a.max)} | ${ms(aBare.p50)} / ${ms(aBare.max)} |`);
  console.log(`| narrow switch to an unseen topic (hash → messages shown), p50 / p95 of ${SWITCHES} | ${ms(b.p50)} / ${ms(b.p95)} | — |`);
  console.log(`| frame time scrolling back through ${passed.size} messages (${frames.length} frames, ${scrollSeconds.toFixed(1)} s), p50 / p95 / max | ${ms(c.p50)} / ${ms(c.p95)} / ${ms(c.max)} | ${ms(cBare.p50)} / ${ms(cBare.p95)} / ${ms(cBare.max)} |`);
  console.log(`| frames over 50 ms while scrolling | ${frames.filter((f) => f > 50).length} of ${frames.length} | ${bareFrames.filter((f) => f > 50).length} of ${bareFrames.length} |`);
  const errors = page.errors();
  if (errors.length) console.log(`page errors: ${errors.slice(0, 5).join(" | ")}`);
} finally {
  await browser.close();
  await s.stop();
  bare.stop(true);
}
process.exit(0);
