/**
 * The web client's speed in headless Chromium, on a store of many messages (issue
 * figures: first feed painted, a narrow switch, scrolling back through thousands of
 * loaded messages), each beside a reference measured in the same run: the same
 * measurement on a bare page served by a bare `Bun.serve` (nothing to fetch, nothing
 * to render but one line), so the machine's own speed and load show.
 *
 * Usage: bun scripts/bench-web.ts [--messages 100000] [--switches 20] [--scroll 5000] [--store DIR] [--why]
 * With `--why` the first 20 long scroll frames are listed with the scripts they ran (invoker, ms).
 * With `--store DIR` the store is built once into DIR (kept) and reused by later runs
 * with the same DIR, so variants of the client can be compared on the same data.
 * Figures go to docs/benchmarks.md.
 */
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PASSWORD, startTestServer, type TestServer, type TestUser } from "../test/kit";
import { launchChromium, signInToChat, until } from "../test/kit/browser";
import { percentile } from "./bench-lib";

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}
const MESSAGES = option("messages", 100_000);
const storeAt = process.argv.indexOf("--store");
const STORE_DIR = storeAt >= 0 ? process.argv[storeAt + 1] : null;
const SWITCHES = option("switches", 20);
const SCROLL_MESSAGES = option("scroll", 5_000);
const CHANNELS = 5;
const TOPICS_PER_CHANNEL = 40;


/** Milliseconds from navigation start until `ready` holds, checked on every frame in the page. */
const timeUntilReady = (ready: string) =>
  `new Promise((resolve) => { const check = () => (${ready}) ? resolve(performance.now()) : requestAnimationFrame(check); check(); })`;

/**
 * Sets the hash and resolves with the milliseconds until `ready` holds (checked every
 * frame), and where they went: the GET /messages requests of the switch (Resource
 * Timing: until the first byte, then the body) and the long animation frames (over
 * 50 ms: script, then style and layout).
 */
const timeHashSwitch = (hash: string, ready: string) =>
  `new Promise((resolve) => { performance.clearResourceTimings(); const frames = [];
     const observer = new PerformanceObserver((list) => { for (const f of list.getEntries()) frames.push({ at: f.startTime, duration: f.duration,
       script: f.scripts.reduce((sum, s) => sum + s.duration, 0), layout: f.renderStart ? f.startTime + f.duration - (f.styleAndLayoutStart || f.renderStart) : 0 }); });
     observer.observe({ type: "long-animation-frame" });
     const t0 = performance.now(); location.hash = ${JSON.stringify(hash)};
     const check = () => { if (!(${ready})) return requestAnimationFrame(check); const t1 = performance.now();
       setTimeout(() => { observer.disconnect();
         const fetches = performance.getEntriesByType("resource").filter((r) => r.name.includes("/messages?")).map((r) => ({ start: r.startTime - t0, firstByte: r.responseStart - r.requestStart, body: r.responseEnd - r.responseStart, bytes: r.encodedBodySize }));
         resolve({ total: t1 - t0, fetches, frames: frames.filter((f) => f.at >= t0 && f.at <= t1) }); }, 100); };
     requestAnimationFrame(check); })`;

interface SwitchTiming {
  total: number;
  fetches: { start: number; firstByte: number; body: number; bytes: number }[];
  frames: { duration: number; script: number; layout: number }[];
}

/**
 * Scrolls `selector` up by `step` px a frame for `frames` frames; resolves with each
 * frame's duration and the long animation frames among them (script, style and layout).
 */
const scrollFrames = (selector: string, step: number, frames: number) =>
  `new Promise((resolve) => { const el = document.querySelector(${JSON.stringify(selector)}); const times = []; const long = []; let last = performance.now(); let n = 0;
     const observer = new PerformanceObserver((list) => { for (const f of list.getEntries()) long.push({ duration: f.duration,
       script: f.scripts.reduce((sum, s) => sum + s.duration, 0), forced: f.scripts.reduce((sum, s) => sum + (s.forcedStyleAndLayoutDuration || 0), 0),
       invokers: f.scripts.map((s) => s.invoker + " " + Math.round(s.duration)).join(", "), layout: f.renderStart ? f.startTime + f.duration - (f.styleAndLayoutStart || f.renderStart) : 0 }); });
     observer.observe({ type: "long-animation-frame" });
     let seen = null; let jumps = 0;
     const tick = (now) => { times.push(now - last); last = now;
       if (seen && seen.row.isConnected && Math.abs(seen.row.getBoundingClientRect().top - seen.top) > 2) jumps++;
       el.scrollTop = Math.max(0, el.scrollTop - ${step});
       const box = el.getBoundingClientRect(); const row = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2)?.closest(".msg-wrap");
       seen = row ? { row, top: row.getBoundingClientRect().top } : null;
       if (++n < ${frames}) requestAnimationFrame(tick); else setTimeout(() => { observer.disconnect(); resolve({ times: times.slice(1), long, jumps }); }, 50); };
     requestAnimationFrame(tick); })`;

interface ScrollTiming {
  times: number[];
  /** Frames in which the row in the middle of the feed moved other than by the scroll (rows added above must not move it). */
  jumps: number;
  long: { duration: number; script: number; forced: number; invokers: string; layout: number }[];
}

/**
 * CPU time (ms) used so far by this process's descendants (Chromium's browser, renderer and
 * GPU processes; the server runs in this process and is not counted), and by the renderers'
 * main threads alone (script, style, layout, paint). Unlike frame times it hardly grows
 * when other jobs share the machine, so two versions of the client can be compared on a
 * busy machine. Linux only (/proc); zeros elsewhere.
 */
function chromiumCpuMs(): { all: number; rendererMain: number } {
  if (!existsSync("/proc/self/stat")) return { all: 0, rendererMain: 0 };
  // A stat line: pid (comm) state ppid … utime stime (fields 14 and 15, counted from pid).
  const read = (path: string) => {
    const stat = readFileSync(path, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { parent: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
  };
  const procs = new Map<number, { parent: number; ticks: number }>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      procs.set(Number(name), read(`/proc/${name}/stat`));
    } catch {
      // The process ended meanwhile.
    }
  }
  const mine = (pid: number): boolean => {
    for (let at = procs.get(pid)?.parent, hops = 0; at !== undefined && hops < 20; at = procs.get(at)?.parent, hops++) if (at === process.pid) return true;
    return false;
  };
  let all = 0;
  let rendererMain = 0;
  for (const [pid, { ticks }] of procs) {
    if (!mine(pid)) continue;
    all += ticks;
    try {
      // A process's main thread is the task with its own id.
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("--type=renderer")) rendererMain += read(`/proc/${pid}/task/${pid}/stat`).ticks;
    } catch {
      // Ended meanwhile.
    }
  }
  return { all: all * 10, rendererMain: rendererMain * 10 }; // USER_HZ is 100 on Linux
}

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

/** What a kept store needs to be reused: who signs in, and the channels' ids. */
interface StoreMeta {
  messages: number;
  users: Record<string, TestUser>;
  channels: number[];
}

async function buildStore(s: TestServer): Promise<number[]> {
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
  // Hamlet has read it all (views open at the newest message, as after a day's work).
  const marked = await s.as("hamlet").post("/mark_all_as_read", {});
  if (marked.status !== 200) throw new Error(`mark_all_as_read failed: ${marked.status}`);
  return channels;
}

/** A fresh store, or the one kept in STORE_DIR (built there first when missing). */
async function openStore(): Promise<{ s: TestServer; hamlet: TestUser; channels: number[] }> {
  const metaPath = STORE_DIR && join(STORE_DIR, "bench-web.json");
  if (metaPath && existsSync(metaPath)) {
    const meta = JSON.parse(readFileSync(metaPath, "utf8")) as StoreMeta;
    console.log(`store: ${meta.messages} messages kept in ${STORE_DIR}`);
    return { s: await startTestServer({ dataDir: STORE_DIR! }), hamlet: meta.users.hamlet, channels: meta.channels };
  }
  const built = await startTestServer();
  const channels = await buildStore(built);
  if (!STORE_DIR) return { s: built, hamlet: built.users.hamlet, channels };
  await built.server.stop();
  renameSync(built.dataDir, STORE_DIR);
  writeFileSync(join(STORE_DIR, "bench-web.json"), JSON.stringify({ messages: MESSAGES, users: built.users, channels } satisfies StoreMeta));
  return { s: await startTestServer({ dataDir: STORE_DIR }), hamlet: built.users.hamlet, channels };
}

const { s, hamlet, channels } = await openStore();
const browser = await launchChromium();
try {
  const page = await browser.newPage({ ownCookies: true });
  await page.emulate({ width: 1280, height: 800 });
  await signInToChat(page, s.url, hamlet.email, PASSWORD);

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
  const switchCpuFrom = chromiumCpuMs();
  const switches: number[] = [];
  const switchTimings: SwitchTiming[] = [];
  for (let i = 0; i < SWITCHES; i++) {
    const channel = channels[i % CHANNELS];
    const topic = `topic ${(i * 7) % TOPICS_PER_CHANNEL}`;
    const hash = `#narrow/channel/${channel}-bench-${i % CHANNELS}/topic/${encodeURIComponent(topic).replace(/%/g, ".")}`;
    const timing = await page.evaluate<SwitchTiming>(timeHashSwitch(hash, `document.querySelector(".view-title")?.textContent.endsWith(${JSON.stringify(topic)}) && document.querySelector(".feed article.msg") && !document.querySelector(".feed .loading")`));
    switches.push(timing.total);
    switchTimings.push(timing);
  }

  const switchCpu = chromiumCpuMs().all - switchCpuFrom.all;

  // 3. Scrolling: back through SCROLL_MESSAGES messages of one channel, then frame times of a steady scroll.
  await page.evaluate(`location.hash = "#narrow/channel/${channels[0]}-bench-0"`);
  await until(page, `document.querySelector(".feed article.msg") && !document.querySelector(".feed .loading")`);
  const loadedTarget = Math.min(SCROLL_MESSAGES, Math.floor(MESSAGES / CHANNELS));
  const scrollStarted = performance.now();
  const scrollCpuFrom = chromiumCpuMs();
  const frames: number[] = [];
  const longFrames: ScrollTiming["long"] = [];
  let jumps = 0;
  const passed = new Set<string>();
  for (let rounds = 0; passed.size < loadedTarget && rounds < 2_000; rounds++) {
    const round = await page.evaluate<ScrollTiming>(scrollFrames(".feed", 400, 30));
    frames.push(...round.times);
    longFrames.push(...round.long);
    jumps += round.jumps;
    for (const id of await page.evaluate<string[]>(`[...document.querySelectorAll(".feed article.msg")].map((a) => a.dataset.id)`)) passed.add(id);
    if (await page.evaluate<boolean>(`Boolean(document.querySelector(".feed-start"))`)) break;
  }
  const scrollSeconds = (performance.now() - scrollStarted) / 1000;
  // What each filled row costs the browser in boxes: elements inside the rows at the scroll's end (bars included).
  const rowElements = await page.evaluate<{ rows: number; elements: number; first: number; others: number }>(`(() => {
    const rows = [...document.querySelectorAll(".feed article.msg")];
    const inside = (a) => a.getElementsByTagName("*").length + 1;
    const median = (xs) => xs.sort((x, y) => x - y)[xs.length >> 1] ?? 0;
    return { rows: rows.length, elements: document.querySelectorAll(".feed .msg-wrap *").length,
      first: median(rows.filter((a) => a.classList.contains("first")).map(inside)), others: median(rows.filter((a) => !a.classList.contains("first")).map(inside)) };
  })()`);
  const scrollCpuTo = chromiumCpuMs();
  const scrollCpu = { all: scrollCpuTo.all - scrollCpuFrom.all, rendererMain: scrollCpuTo.rendererMain - scrollCpuFrom.rendererMain };
  await page.goto(`http://127.0.0.1:${bare.port}/?load=scroll`);
  await page.evaluate(`document.querySelector(".feed").scrollTop = 1e6`);
  const bareFrames = (await page.evaluate<ScrollTiming>(scrollFrames(".feed", 400, 60))).times;

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
  console.log(`| frames in which the row under the reader's eyes moved by itself (a layout shift) | ${jumps} of ${frames.length} | — |`);
  console.log(`| frames over 50 ms while scrolling | ${frames.filter((f) => f > 50).length} of ${frames.length} | ${bareFrames.filter((f) => f > 50).length} of ${bareFrames.length} |`);
  // Where the time went (medians): the switches' fetches and long frames, the scroll's long frames.
  const median = (values: number[]) => (values.length ? summary(values).p50 : 0);
  const firstFetch = switchTimings.map((t) => t.fetches[0]).filter(Boolean);
  console.log("");
  console.log(`switch, medians: GET /messages started at ${ms(median(firstFetch.map((f) => f.start)))}, first byte after ${ms(median(firstFetch.map((f) => f.firstByte)))}, body ${ms(median(firstFetch.map((f) => f.body)))} (${Math.round(median(firstFetch.map((f) => f.bytes)))} B); ` +
    `${median(switchTimings.map((t) => t.fetches.length))} request(s); long frames per switch ${median(switchTimings.map((t) => t.frames.length))}, their script ${ms(median(switchTimings.map((t) => t.frames.reduce((x, f) => x + f.script, 0))))}, style+layout ${ms(median(switchTimings.map((t) => t.frames.reduce((x, f) => x + f.layout, 0))))}`);
  // The slowest switches, one by one: is their time in the request or in the page?
  const slowest = switchTimings.map((t, i) => ({ t, i })).sort((x, y) => y.t.total - x.t.total).slice(0, 3);
  for (const { t, i } of slowest) {
    const f = t.fetches[0];
    console.log(`  slow switch #${i + 1}: ${ms(t.total)}; ` + (f ? `GET /messages started at ${ms(f.start)}, first byte after ${ms(f.firstByte)}, body ${ms(f.body)}` : "no request") +
      `; long frames: ${t.frames.map((x) => `${ms(x.duration)} (script ${ms(x.script)}, style+layout ${ms(x.layout)})`).join(", ") || "none"}`);
  }
  console.log(`scroll: ${longFrames.length} long animation frames, medians: ${ms(median(longFrames.map((f) => f.duration)))} long, script ${ms(median(longFrames.map((f) => f.script)))} (of which style and layout forced by script ${ms(median(longFrames.map((f) => f.forced)))}), style+layout ${ms(median(longFrames.map((f) => f.layout)))}`);
  console.log(`Chromium's CPU time (all its processes, not the server): ${ms(switchCpu / SWITCHES)} a switch; scrolling ${ms(scrollCpu.all)}, ` +
    `of which the page's main thread ${ms(scrollCpu.rendererMain)} (${ms(scrollCpu.rendererMain / Math.max(1, frames.length))} a frame)`);
  console.log(`rows at the scroll's end: ${rowElements.rows}, ${rowElements.elements} elements in their wrappers (${(rowElements.elements / Math.max(1, rowElements.rows)).toFixed(1)} a row); a row's own elements, median: ${rowElements.first} with its sender shown, ${rowElements.others} without`);
  if (process.argv.includes("--why")) for (const f of longFrames.slice(0, 20)) console.log(`  ${ms(f.duration)}: ${f.invokers}`);
  const errors = page.errors();
  if (errors.length) console.log(`page errors: ${errors.slice(0, 5).join(" | ")}`);
} finally {
  await browser.close();
  await s.stop();
  bare.stop(true);
}
process.exit(0);
