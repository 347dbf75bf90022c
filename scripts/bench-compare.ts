#!/usr/bin/env bun
/**
 * One server at a time on a copy of one populated folder, for before/after comparisons
 * of two checkouts run back to back (a shared machine moves rates, not CPU per request):
 *
 *   bun scripts/bench-compare.ts CHECKOUT|bare|bare-durable|BINARY me|me-session|poll-session|send|burst|start|topic|unread|search|search-pending [seconds] [--prof DIR]
 *
 * CHECKOUT is a Hearth source tree (its src/main.ts is run), BINARY a compiled
 * `hearth`, `bare` the bare Bun.serve of scripts/bench.ts (`bare-durable`: its bare server
 * committing one durable lmdb-js transaction per request, for `send`). The populated folder (100
 * users, one channel all subscribe to) is made once under the temp folder and reused.
 * BENCH_CONNECTIONS=N changes the 50 connections of every mode.
 * Prints one JSON line: spawn-to-listening and to the first answered request, idle
 * RSS, and for `me` (GET /users/me; `me-session`: /json/users/me with a session cookie; `poll-session`: GET /json/events with dont_block and the cookie) or `send` (POST /messages, 50 connections) the
 * rate and the server's CPU per request, all threads and per thread, and the bytes it
 * sent to the disk per request (`DiskBytes`). `topic` and
 * `unread` (GET /messages, newest 50 in a topic / `is:unread`, 50 connections) run on a
 * second folder made once from the first: 5,000 channel messages in 20 topics from all
 * users, every 20th request marking 10 of them read for one user (made with this
 * script's own checkout, so both checkouts read the same data). `search` (GET /messages,
 * newest 50 of a `search` narrow, 50 connections) measures a word in one message
 * (`searchRare`) and a word in almost every message (`searchCommon`) on that folder;
 * `search-pending` first sends 500 more messages with the background job held off, so
 * that a checkout which indexes in the background searches with them not indexed yet.
 * `burst` sends [seconds × 1,000] messages as fast as 50 connections go, then waits
 * until the server stops writing (its background job done) and prints the bytes sent
 * to the disk per message during the sends and after them (`burstSendDiskBytes`,
 * `burstAfterDiskBytes`), and the CPU per message after them (`burstAfterCpuUs`, and
 * per thread).
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cpuSeconds, RawHttpClient, readLineMatching, rssMiB, spawnServer, threadCpuSeconds, writtenBytes } from "./bench-lib";

const [root, what = "me", secs = "3"] = process.argv.slice(2);
if (!root) throw new Error("usage: bun scripts/bench-compare.ts CHECKOUT|bare|bare-durable|BINARY me|me-session|poll-session|send|burst|start|topic|unread|search|search-pending [seconds] [--prof DIR]");
const profIndex = process.argv.indexOf("--prof");
const profDir = profIndex > 0 ? process.argv[profIndex + 1] : null;
const BENCH = join(import.meta.dir, "bench.ts");

const populated = join(tmpdir(), "hearth-bench-compare-populated");
if (!existsSync(join(populated, "bench-users.json"))) {
  rmSync(populated, { recursive: true, force: true });
  mkdirSync(populated, { recursive: true });
  const p = Bun.spawn([process.execPath, BENCH, "--populate", populated, "100"], { stdout: "inherit", stderr: "inherit" });
  if ((await p.exited) !== 0) throw new Error("populating failed");
}
const WORDS = "castle ghost king queen poison sword crown denmark player skull madness revenge night watch letter duel rosemary fennel rue daisy violet".split(" ");
const content = (seq: number) => Array.from({ length: 16 + (seq % 17) }, (_, i) => WORDS[(seq * 7 + i * 13 + ((seq >> 3) ^ i)) % WORDS.length]).join(" ") + ` ${seq}`;
const basic = (u: { email: string; key: string }) => "Basic " + Buffer.from(`${u.email}:${u.key}`).toString("base64");
const READ_MODES = ["topic", "unread", "search", "search-pending"];
// The spawned server's background job waits for the whole run (search-pending).
if (what === "search-pending") process.env.HEARTH_UNREAD_ROWS_INTERVAL_MS = String(3600_000);
const withMessages = join(tmpdir(), "hearth-bench-compare-messages");
if (READ_MODES.includes(what) && !existsSync(join(withMessages, "bench-users.json"))) await populateMessages();
const dir = mkdtempSync(join(tmpdir(), "hearth-bench-compare-"));
cpSync(READ_MODES.includes(what) ? withMessages : populated, dir, { recursive: true });
const users = JSON.parse(readFileSync(join(dir, "bench-users.json"), "utf8")) as { email: string; key: string }[];

const { proc, url, startMs } = await spawnServer(root, dir, profDir ? ["--cpu-prof", `--cpu-prof-dir=${profDir}`] : []);
const listening = performance.now();
void proc.stdout.pipeTo(new WritableStream());
await (await fetch(`${url}/api/v1/users/me`, { headers: { authorization: basic(users[1]) } })).text();
const firstMs = startMs + performance.now() - listening;
await Bun.sleep(1000);
const out: Record<string, unknown> = { startMs: Math.round(startMs), firstMs: Math.round(firstMs), idle: rssMiB(proc.pid) };

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const threadCpu = (pid: number) => threadCpuSeconds(pid, (name) => name);

async function measure(label: string, request: (c: RawHttpClient, i: number) => Promise<void>) {
  const run = async (seconds: number) => {
    let done = 0;
    const end = performance.now() + seconds * 1000;
    const clients = Array.from({ length: CONNECTIONS }, () => RawHttpClient.forUrl(url));
    await Promise.all(clients.map(async (c, n) => { for (let i = n; performance.now() < end; i += CONNECTIONS) { await request(c, i); done++; } }));
    clients.forEach((c) => c.close());
    return done;
  };
  await run(1); // the JIT's warm-up, unmeasured
  const threads0 = threadCpu(proc.pid);
  const cpu0 = cpuSeconds(proc.pid);
  const written0 = writtenBytes(proc.pid);
  const w0 = performance.now();
  const done = await run(Number(secs));
  const seconds = (performance.now() - w0) / 1000;
  const perThread = Object.fromEntries([...threadCpu(proc.pid)].map(([k, v]) => [k, Math.round((1e6 * (v - (threads0.get(k) ?? 0))) / done)]).filter(([, v]) => (v as number) > 0));
  Object.assign(out, { [`${label}PerSecond`]: Math.round(done / seconds), [`${label}CpuUs`]: Math.round((1e6 * (cpuSeconds(proc.pid) - cpu0)) / done), [`${label}CpuUsByThread`]: perThread, [`${label}DiskBytes`]: Math.round((writtenBytes(proc.pid).storage - written0.storage) / done) });
}

if (what === "me") {
  await measure("me", async (c) => {
    const r = await c.get("/api/v1/users/me", root === "bare" ? {} : { authorization: basic(users[1]) });
    if (r.status !== 200) throw new Error(r.body);
  });
} else if (what === "me-session" || what === "poll-session") {
  // The web app's form of the calls, with the owner's session cookie: GET /json/users/me,
  // or a GET /json/events poll with dont_block (answered at once: the route's cost, no parking).
  const login = await fetch(`${url}/login`, { method: "POST", redirect: "manual", body: new URLSearchParams({ username: users[0].email, password: "bench-password" }) });
  const cookie = login.headers.getSetCookie().map((line) => line.split(";")[0]).join("; ");
  if (login.status !== 303 || !cookie.includes("hearth_session=")) throw new Error(`login failed: ${login.status}`);
  let path = "/json/users/me";
  if (what === "poll-session") {
    const csrf = /hearth_csrf=([^;]*)/.exec(cookie)![1];
    const registered = await fetch(`${url}/json/register`, { method: "POST", headers: { cookie, "x-csrftoken": csrf, "content-type": "application/x-www-form-urlencoded" }, body: "event_types=%5B%22realm_user%22%5D" });
    const { queue_id } = (await registered.json()) as { queue_id: string };
    path = `/json/events?queue_id=${queue_id}&last_event_id=-1&dont_block=true`;
  }
  await measure(what === "me-session" ? "meSession" : "pollSession", async (c) => {
    const r = await c.get(path, { cookie });
    if (r.status !== 200) throw new Error(r.body);
  });
} else if (what === "send") {
  await measure("send", async (c, i) => {
    const body = `type=stream&to=bench&topic=${encodeURIComponent(`topic ${(i >> 4) % 20}`)}&content=${encodeURIComponent(content(i))}`;
    const r = await c.request("POST", "/api/v1/messages", { authorization: basic(users[i % users.length]), "content-type": "application/x-www-form-urlencoded" }, body);
    if (r.status !== 200) throw new Error(r.body);
  });
} else if (what === "burst") {
  const total = Number(secs) * 1000;
  const written0 = writtenBytes(proc.pid).storage;
  let next = 0;
  const clients = Array.from({ length: CONNECTIONS }, () => RawHttpClient.forUrl(url));
  await Promise.all(clients.map(async (c) => {
    for (let i; (i = next++) < total; ) {
      const body = `type=stream&to=bench&topic=${encodeURIComponent(`topic ${(i >> 4) % 20}`)}&content=${encodeURIComponent(content(i))}`;
      const r = await c.request("POST", "/api/v1/messages", { authorization: basic(users[i % users.length]), "content-type": "application/x-www-form-urlencoded" }, body);
      if (r.status !== 200) throw new Error(r.body);
    }
  }));
  clients.forEach((c) => c.close());
  const written1 = writtenBytes(proc.pid).storage;
  const cpu1 = cpuSeconds(proc.pid);
  const threads1 = threadCpu(proc.pid);
  // Done when nothing was written for five seconds (the job's quiet wait is one).
  let written2 = written1;
  for (let still = 0; still < 5; ) {
    await Bun.sleep(1000);
    const now = writtenBytes(proc.pid).storage;
    still = now === written2 ? still + 1 : 0;
    written2 = now;
  }
  Object.assign(out, {
    burstMessages: total,
    burstSendDiskBytes: Math.round((written1 - written0) / total),
    burstAfterDiskBytes: Math.round((written2 - written1) / total),
    burstAfterCpuUs: Math.round((1e6 * (cpuSeconds(proc.pid) - cpu1)) / total),
    burstAfterCpuUsByThread: Object.fromEntries([...threadCpu(proc.pid)].map(([k, v]) => [k, Math.round((1e6 * (v - (threads1.get(k) ?? 0))) / total)]).filter(([, v]) => (v as number) > 0)),
  });
} else if (what === "search" || what === "search-pending") {
  if (what === "search-pending") {
    const c = RawHttpClient.forUrl(url);
    for (let i = 0; i < 500; i++) {
      const body = `type=stream&to=bench&topic=pending&content=${encodeURIComponent(content(5000 + i))}`;
      const r = await c.request("POST", "/api/v1/messages", { authorization: basic(users[i % users.length]), "content-type": "application/x-www-form-urlencoded" }, body);
      if (r.status !== 200) throw new Error(r.body);
    }
    c.close();
  }
  for (const [label, word] of [["searchRare", "4321"], ["searchCommon", "rosemary"]]) {
    const path = `/api/v1/messages?anchor=newest&num_before=50&num_after=0&narrow=${encodeURIComponent(JSON.stringify([{ operator: "search", operand: word }]))}`;
    await measure(label, async (c) => {
      const r = await c.get(path, { authorization: basic(users[1]) });
      if (r.status !== 200) throw new Error(r.body);
      if (!r.body.includes('"messages":[{')) throw new Error(`no messages: ${r.body.slice(0, 200)}`);
    });
  }
} else if (READ_MODES.includes(what)) {
  const channelId = root === "bare" ? 0 : await fetch(`${url}/api/v1/get_stream_id?stream=bench`, { headers: { authorization: basic(users[1]) } }).then((r) => r.json()).then((b: any) => b.stream_id);
  const narrow = what === "topic" ? [{ operator: "channel", operand: channelId }, { operator: "topic", operand: "topic 7" }] : [{ operator: "is", operand: "unread" }];
  const path = `/api/v1/messages?anchor=newest&num_before=50&num_after=0&narrow=${encodeURIComponent(JSON.stringify(narrow))}`;
  await measure(what, async (c) => {
    const r = await c.get(path, root === "bare" ? {} : { authorization: basic(users[1]) });
    if (r.status !== 200) throw new Error(r.body);
    if (!r.body.includes('"messages":[{')) throw new Error(`no messages: ${r.body.slice(0, 200)}`);
  });
}
proc.kill("SIGTERM");
await proc.exited;
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify(out));

/** The read modes' folder: the populated one plus 5,000 messages, sent through this checkout's server. */
async function populateMessages() {
  rmSync(withMessages, { recursive: true, force: true });
  cpSync(populated, withMessages, { recursive: true });
  const users = JSON.parse(readFileSync(join(populated, "bench-users.json"), "utf8")) as { email: string; key: string }[];
  const ids: number[] = [];
  const server = Bun.spawn([process.execPath, join(import.meta.dir, "..", "src", "main.ts"), "serve", "--data", withMessages, "--port", "0", "--host", "127.0.0.1"], { stdout: "pipe", stderr: "inherit" });
  const base = (await readLineMatching(server.stdout, "hearth", (l) => l.includes(" is listening on "))).split(" is listening on ")[1].trim();
  void server.stdout.pipeTo(new WritableStream());
  const form = { "content-type": "application/x-www-form-urlencoded" };
  const clients = Array.from({ length: 20 }, () => RawHttpClient.forUrl(base));
  await Promise.all(clients.map(async (c, n) => {
    for (let i = n; i < 5000; i += clients.length) {
      const u = users[i % users.length];
      if (i % 20 === 19 && ids.length > 10) {
        const some = ids.slice(-10 - (i % 200), ids.length - (i % 200));
        const r = await c.request("POST", "/api/v1/messages/flags", { authorization: basic(users[(i * 7) % users.length]), ...form }, `messages=${encodeURIComponent(JSON.stringify(some))}&op=add&flag=read`);
        if (r.status !== 200) throw new Error(r.body);
      }
      const body = `type=stream&to=bench&topic=${encodeURIComponent(`topic ${(i >> 4) % 20}`)}&content=${encodeURIComponent(content(i))}`;
      const r = await c.request("POST", "/api/v1/messages", { authorization: basic(u), ...form }, body);
      if (r.status !== 200) throw new Error(r.body);
      ids.push(JSON.parse(r.body).id);
    }
  }));
  clients.forEach((c) => c.close());
  await Bun.sleep(3000); // the unread-rows worker writes the last messages' rows
  server.kill("SIGTERM");
  await server.exited;
}
