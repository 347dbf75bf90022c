#!/usr/bin/env bun
/**
 * Every figure of the lean-store issue with one command, each beside its reference
 * measured in the same run (this is a 2-core machine shared with other work: only the
 * ratios compare from run to run).
 *
 *   bun scripts/bench.ts [--quick] [--source] [--no-fanout] [--users 100] [--messages 20000] [--polls 1000]
 *   bun scripts/bench.ts --stats DATA_DIR     (bytes per message by key space of any stopped store)
 *   bun scripts/bench.ts --quick --profile DIR (the sends alone, the server from source with a CPU profile)
 *
 * Runs the compiled binary `dist/hearth` when present (scripts/build.ts builds it) and
 * `bun src/main.ts` otherwise or with `--source`. One temp data folder: USERS users and
 * one channel all of them subscribe to; then, against the server:
 *  1. idle RSS after start, and its cold start (spawn to "listening"); idle RSS once
 *     the background job has written the folder's pending message and its worker
 *     thread retired (the servers here retire it after RETIRE_MS, not the default);
 *  2. a mixed load: durable sends (POST /messages, 50 connections) with a flags update
 *     (mark read) every 20th request, until MESSAGES were sent (--quick: 3 s);
 *     references: raw lmdb-js durable puts of a value the size of a message record,
 *     and raw lmdb-js transactions at the sends' concurrency (50 writers, each awaiting
 *     its own durable commit of such a record with a sender row and a topic row, keys
 *     spread over 100 senders and 20 topics as the load's are), and a bare Bun.serve
 *     that commits that transaction for each POST and answers once it is durable,
 *     under the same load generator (the ceiling of any server built this way);
 *     then the time the background job takes to write the load's search and unread
 *     rows (until its worker retires), before anything else is measured;
 *  3. the reader table (LMDB's readers after the load);
 *  4. authenticated GET /users/me req/s (50 connections) and GET /messages newest 50
 *     in a topic and `is:unread` (p50, one connection) against a bare Bun.serve that
 *     answers the same shapes from memory;
 *  5. RSS with POLLS parked long-polls, against a bare long-poll server;
 *  6. after a restart on the now populated folder: cold start again, bytes per
 *     message by key space (pages × page size), live data vs file size, free pages;
 *  7. fan-out p99 (scripts/bench-events.ts, one round) against its bare server.
 * Everything binds to 127.0.0.1; the data folder is removed at the end.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { cpuSeconds, formatRss, percentile, RawHttpClient, readAnnouncement, readLineMatching, rssMiB, threadCpuSeconds, writtenBytes } from "./bench-lib";
import { keyspaceStats, printKeyspaceStats } from "./bench-store";

const ROOT = resolve(import.meta.dir, "..");
const argValue = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const numberArg = (name: string, fallback: number, max: number) => Math.min(Number(argValue(name) ?? fallback) || fallback, max);
const QUICK = process.argv.includes("--quick");
const USERS = numberArg("users", 100, 1000);
const MESSAGES = numberArg("messages", QUICK ? 0 : 20_000, 500_000);
const POLLS = numberArg("polls", QUICK ? 500 : 1000, 4000);
const CONNECTIONS = 50;
const SECONDS = QUICK ? 2 : 4;
const QUERIES = QUICK ? 100 : 300;
/** The worker's retire delay for the servers here (the default is longer): the row after start waits for it. */
const RETIRE_MS = 2000;

type UserKey = { email: string; key: string; id: number };
type Announcement = { url: string };

const WORDS_TEXT = "castle ghost king queen poison sword crown denmark player skull madness revenge night watch letter duel rosemary fennel rue daisy violet";

const role = process.argv[2];
if (role === "--populate") await populate(process.argv[3], Number(process.argv[4]));
else if (role === "--bare") serveBare();
else if (role === "--raw-puts") await rawPuts(Number(process.argv[3]));
else if (role === "--raw-transactions") await rawTransactions(Number(process.argv[3]));
else if (role === "--bare-durable") await serveBareDurable();
else if (role === "--stats") printKeyspaceStats(keyspaceStats(resolve(process.argv[3])));
else await main();

// ---------------------------------------------------------------- child processes

/** Child: creates the organization, `users` users and the channel "bench" they all subscribe to. */
async function populate(dataDir: string, users: number) {
  const { startServer } = await import("../src/server");
  const { Store } = await import("../src/store/db");
  const { doInitRealm } = await import("../src/actions/realm");
  const { doCreateUser } = await import("../src/actions/create_user");
  const store = new Store(dataDir);
  const { owner } = await doInitRealm(store, { realmName: "Bench", ownerEmail: "owner@bench.test", ownerPassword: "bench-password" });
  await store.close();
  const server = await startServer({ dataDir, host: "127.0.0.1", port: 0, externalUrl: null });
  const keys: UserKey[] = [{ email: owner.email, key: owner.api_key, id: owner.id }];
  for (let i = 0; i < users - 1; i++) {
    const u = await doCreateUser(server.h, { email: `u${i}@bench.test`, full_name: `User ${i}`, password: null });
    keys.push({ email: u.email, key: u.api_key, id: u.id });
  }
  const res = await fetch(`${server.url}/api/v1/users/me/subscriptions`, {
    method: "POST",
    headers: { authorization: basic(keys[0]), "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ subscriptions: JSON.stringify([{ name: "bench" }]), principals: JSON.stringify(keys.map((k) => k.id)) }),
  });
  if (res.status !== 200) throw new Error(await res.text());
  await server.stop();
  writeFileSync(join(dataDir, "bench-users.json"), JSON.stringify(keys));
}

/** Child: the reference server, answering Hearth's shapes from memory, no auth, no store. */
function serveBare() {
  const me = JSON.stringify({ result: "success", msg: "", user_id: 9, email: "user9@bench.test", full_name: "User 9", avatar_url: "http://127.0.0.1/avatar/9.png", is_admin: false, is_owner: false, is_guest: false, role: 400, is_bot: false, is_active: true, timezone: "", date_joined: "2026-11-27T00:00:00Z", delivery_email: "user9@bench.test", max_message_id: 1000, profile_data: {} });
  const messages = Array.from({ length: 50 }, (_, i) => ({ ...sampleMessage(i), flags: ["read"], match_content: undefined }));
  const waiting = new Set<(r: Response) => void>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      const headers = { "content-type": "application/json" };
      if (path === "/api/v1/users/me") return new Response(me, { headers });
      if (path === "/api/v1/messages") return new Response(JSON.stringify({ result: "success", msg: "", found_newest: true, found_oldest: false, found_anchor: false, history_limited: false, anchor: 10049, messages }), { headers });
      if (path === "/api/v1/events") return new Promise<Response>((resolve) => waiting.add(resolve));
      return new Response("{}", { status: 404 });
    },
  });
  console.log(JSON.stringify({ url: `http://127.0.0.1:${server.port}` } satisfies Announcement));
}

/** Child: durable lmdb-js puts (default sync, as Hearth's store) of a message-sized value, 1,000 in flight, for `seconds`. */
async function rawPuts(seconds: number) {
  const { open } = await import("lmdb");
  const dir = mkdtempSync(join(tmpdir(), "hearth-bench-raw-"));
  try {
    const db = open({ path: dir });
    const value = { ...sampleMessage(0), content: "x".repeat(150), rendered_content: `<p>${"x".repeat(150)}</p>` };
    let puts = 0;
    const end = performance.now() + seconds * 1000;
    const t0 = performance.now();
    while (performance.now() < end) {
      const batch: Promise<boolean>[] = [];
      for (let i = 0; i < 1000; i++) batch.push(db.put(puts++, value));
      await Promise.all(batch);
    }
    console.log(JSON.stringify({ putsPerSecond: puts / ((performance.now() - t0) / 1000) }));
    await db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The raw references' store in a temp folder: `commitMessage` commits, in one
 * transaction awaited durably as a send's, a message-sized record, a sender row and a
 * topic row, keys spread like the load's (100 senders, 20 topics); resolves with its ID.
 */
async function openRawMessageStore() {
  const { open } = await import("lmdb");
  const dir = mkdtempSync(join(tmpdir(), "hearth-bench-raw-"));
  const root = open({ path: dir, maxDbs: 4 });
  const records = root.openDB("records", {});
  const bySender = root.openDB("by_sender", {});
  const byTopic = root.openDB("by_topic", {});
  const value = { ...sampleMessage(0), content: "x".repeat(150), rendered_content: `<p>${"x".repeat(150)}</p>` };
  let next = 0;
  const commitMessage = async (): Promise<number> => {
    const id = await root.transaction(() => {
      const id = next++;
      records.put(id, value);
      bySender.put([id % USERS, id], true);
      byTopic.put([`topic ${(id >> 4) % 20}`, id], true);
      return id;
    });
    await root.flushed;
    return id;
  };
  const close = async () => {
    await root.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { commitMessage, close };
}

/**
 * Child: CONNECTIONS writers, each committing one message (openRawMessageStore) at a
 * time. lmdb-js runs the transactions waiting together in one batch, so this is the
 * durable commit cycle at this concurrency, with no HTTP and no checks: the ceiling
 * the sends meet at 50 connections.
 */
async function rawTransactions(seconds: number) {
  const raw = await openRawMessageStore();
  try {
    let done = 0;
    const end = performance.now() + seconds * 1000;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < end) {
        await raw.commitMessage();
        done++;
      }
    }));
    console.log(JSON.stringify({ transactionsPerSecond: done / ((performance.now() - t0) / 1000) }));
  } finally {
    await raw.close();
  }
}

/**
 * Child: a bare Bun.serve whose POSTs each commit one message (openRawMessageStore) and
 * answer once it is durable. BENCH_BARE_WORK_US=N adds N µs of synchronous work per
 * request before the commit (a stand-in for a real server's checks, to see what the
 * main thread's time per request does to this ceiling).
 */
async function serveBareDurable() {
  const workUs = Number(process.env.BENCH_BARE_WORK_US ?? 0);
  const raw = await openRawMessageStore();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      await req.text();
      for (const until = performance.now() + workUs / 1000; performance.now() < until; );
      const id = await raw.commitMessage();
      return new Response(`{"result":"success","msg":"","id":${id}}`, { headers: { "content-type": "application/json" } });
    },
  });
  process.on("SIGTERM", async () => {
    server.stop(true);
    await raw.close();
    process.exit(0);
  });
  console.log(JSON.stringify({ url: `http://127.0.0.1:${server.port}` } satisfies Announcement));
}

function sampleMessage(i: number) {
  return {
    id: 10_000 + i, sender_id: 9, content: `Message ${i}: the castle ghost king **now**`, rendered_content: `<p>Message ${i}: the castle ghost king <strong>now</strong></p>`,
    recipient_id: 12, timestamp: 1_790_000_000 + i, client: "bench", subject: "topic 1", topic_links: [], is_me_message: false, reactions: [], submessages: [],
    sender_full_name: "User 9", sender_email: "user9@bench.test", sender_realm_str: "", display_recipient: "bench", type: "stream", stream_id: 7,
    avatar_url: "http://127.0.0.1:9991/user_avatars/9/0123456789abcdef0123456789abcdef.png", content_type: "text/html",
  };
}

// ---------------------------------------------------------------- the run

function basic(u: { email: string; key: string }): string {
  return "Basic " + Buffer.from(`${u.email}:${u.key}`).toString("base64");
}

interface Server {
  proc: import("bun").Subprocess<"ignore", "pipe", "inherit">;
  url: string;
  startMs: number;
}

function hearthCommand(dataDir: string): string[] {
  const binary = join(ROOT, "dist", "hearth");
  const args = ["serve", "--data", dataDir, "--port", "0", "--host", "127.0.0.1"];
  const profile = argValue("profile");
  if (profile) return [process.execPath, "--cpu-prof-md", `--cpu-prof-dir=${resolve(profile)}`, join(ROOT, "src", "main.ts"), ...args];
  if (existsSync(binary) && !process.argv.includes("--source")) return [binary, ...args];
  return [process.execPath, join(ROOT, "src", "main.ts"), ...args];
}

async function startHearth(dataDir: string): Promise<Server> {
  const t0 = performance.now();
  const env = { ...process.env, HEARTH_UNREAD_ROWS_WORKER_RETIRE_MS: String(RETIRE_MS) };
  const proc = Bun.spawn(hearthCommand(dataDir), { stdout: "pipe", stderr: "inherit", stdin: "ignore", env });
  const line = await readLineMatching(proc.stdout, "hearth", (l) => l.includes(" is listening on "));
  const startMs = performance.now() - t0;
  // Keep reading (and dropping) its output so that the pipe never fills.
  void proc.stdout.pipeTo(new WritableStream());
  return { proc, url: line.slice(line.indexOf(" is listening on ") + 17).trim(), startMs };
}

async function startChild(...args: string[]): Promise<Server> {
  const t0 = performance.now();
  const proc = Bun.spawn([process.execPath, import.meta.path, ...args], { stdout: "pipe", stderr: "inherit", stdin: "ignore" });
  const { url } = await readAnnouncement<Announcement>(proc.stdout, args[0]);
  return { proc, url, startMs: performance.now() - t0 };
}

async function stop(server: Server) {
  server.proc.kill("SIGTERM");
  await server.proc.exited;
}

/** Runs a throughput measure and adds the server's CPU time (all its threads, /proc) per request. */
async function cpuPerRequest(server: Server, measure: () => Promise<number>): Promise<{ rate: number; cpuUs: number }> {
  const cpu0 = cpuSeconds(server.proc.pid);
  const t0 = performance.now();
  const rate = await measure();
  const requests = (rate * (performance.now() - t0)) / 1000;
  return { rate, cpuUs: ((cpuSeconds(server.proc.pid) - cpu0) * 1e6) / requests };
}

/** Requests per second of `connections` keep-alive connections each repeating `request` for `seconds`. */
async function throughput(url: string, connections: number, seconds: number, request: (c: RawHttpClient, i: number) => Promise<void>): Promise<number> {
  let done = 0;
  const end = performance.now() + seconds * 1000;
  const t0 = performance.now();
  const clients = Array.from({ length: connections }, () => RawHttpClient.forUrl(url));
  await Promise.all(
    clients.map(async (c, n) => {
      for (let i = n; performance.now() < end; i += connections) {
        await request(c, i);
        done++;
      }
    }),
  );
  clients.forEach((c) => c.close());
  return done / ((performance.now() - t0) / 1000);
}

async function latencyP50(url: string, path: string, headers: Record<string, string>): Promise<{ p50: number; count: number }> {
  const client = RawHttpClient.forUrl(url);
  const times: number[] = [];
  let count = 0;
  for (let q = 0; q < QUERIES; q++) {
    const t0 = performance.now();
    const res = await client.get(path, headers);
    times.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.body.slice(0, 200)}`);
    if (q === 0) count = JSON.parse(res.body).messages.length;
  }
  client.close();
  return { p50: percentile(times.sort((a, b) => a - b), 50), count };
}

/** Parks `count` long-polls (Hearth: one queue each, spread over the users) and returns the server's RSS with them parked. */
async function parkedPollsRss(server: Server, count: number, users: UserKey[] | null) {
  const paths: { path: string; headers: Record<string, string> }[] = [];
  for (let i = 0; i < count; i++) {
    if (!users) {
      paths.push({ path: `/api/v1/events?queue_id=q${i}&last_event_id=-1`, headers: {} });
      continue;
    }
    const u = users[i % users.length];
    const res = await fetch(`${server.url}/api/v1/register`, {
      method: "POST",
      headers: { authorization: basic(u), "content-type": "application/x-www-form-urlencoded" },
      body: `event_types=${encodeURIComponent('["message"]')}&fetch_event_types=%5B%5D`,
    });
    const body = (await res.json()) as { queue_id: string; last_event_id: number };
    paths.push({ path: `/api/v1/events?queue_id=${encodeURIComponent(body.queue_id)}&last_event_id=${body.last_event_id}`, headers: { authorization: basic(u) } });
  }
  const clients = paths.map(() => RawHttpClient.forUrl(server.url));
  const polls = clients.map((c, i) => c.get(paths[i].path, paths[i].headers).catch(() => null));
  await Bun.sleep(2000);
  const rss = rssMiB(server.proc.pid);
  clients.forEach((c) => c.close());
  await Promise.allSettled(polls);
  return rss;
}


/** A chat-sized message (~100–200 characters) of varying words. */
function content(seq: number): string {
  const WORDS = WORDS_TEXT.split(" ");
  const words: string[] = [];
  const length = 16 + (seq % 17);
  for (let i = 0; i < length; i++) words.push(WORDS[(seq * 7 + i * 13 + ((seq >> 3) ^ i)) % WORDS.length]);
  return `${words.join(" ")} ${seq}`;
}

async function main() {
  const rows: [string, string, string][] = [];
  const row = (figure: string, hearth: string, reference: string) => {
    rows.push([figure, hearth, reference]);
    console.error(`  ${figure}: ${hearth} | ${reference}`);
  };
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}×`;
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-bench-"));
  const cmd = hearthCommand(dataDir);
  console.log(`Hearth: ${cmd[0].endsWith("hearth") ? "compiled binary dist/hearth" : "bun src/main.ts"}; ${USERS} users in one channel; ${QUICK ? "quick" : "full"} run`);
  try {
    const populate = Bun.spawn([process.execPath, import.meta.path, "--populate", dataDir, String(USERS)], { stdout: "inherit", stderr: "inherit" });
    if ((await populate.exited) !== 0) throw new Error("populating the data folder failed");
    const users = JSON.parse(readFileSync(join(dataDir, "bench-users.json"), "utf8")) as UserKey[];

    // 1. Idle memory after start.
    let hearth = await startHearth(dataDir);
    const bare = await startChild("--bare");
    await Bun.sleep(1000);
    const idleHearth = rssMiB(hearth.proc.pid);
    const idleBare = rssMiB(bare.proc.pid);
    row("RSS idle after start", formatRss(idleHearth), `bare Bun ${formatRss(idleBare)}; ratio ${ratio(idleHearth.total, idleBare.total)}`);
    // The folder's pending message is written by the job's worker thread once the server
    // is quiet; the worker then retires after RETIRE_MS idle (HEARTH_UNREAD_ROWS_WORKER_RETIRE_MS).
    await Bun.sleep(RETIRE_MS + 3000);
    const retiredHearth = rssMiB(hearth.proc.pid);
    row("RSS idle after its background work (worker retired)", formatRss(retiredHearth), `bare Bun ${formatRss(idleBare)}; ratio ${ratio(retiredHearth.total, idleBare.total)}`);

    // 2. The mixed load: sends, and every 20th request a flags update.
    const raw = await startRawPuts(SECONDS);
    const rawTx = await startRawTransactions(SECONDS);
    const sent: number[] = [];
    const channelMessage = (i: number) =>
      `type=stream&to=bench&topic=${encodeURIComponent(`topic ${(i >> 4) % 20}`)}&content=${encodeURIComponent(content(i))}`;
    const form = { "content-type": "application/x-www-form-urlencoded" };
    const bareDurable = await startChild("--bare-durable");
    let bareDurableRequests = 0;
    const bareDurableWritten = writtenBytes(bareDurable.proc.pid).storage;
    const bareDurableRate = await throughput(bareDurable.url, CONNECTIONS, SECONDS, async (c, i) => {
      const res = await c.request("POST", "/api/v1/messages", form, channelMessage(i));
      if (res.status !== 200) throw new Error(res.body);
      bareDurableRequests++;
    });
    const bareDurableBytes = (writtenBytes(bareDurable.proc.pid).storage - bareDurableWritten) / bareDurableRequests;
    await stop(bareDurable);
    // What the disk is sent for the load's messages, sends and the background work after them.
    const writtenBeforeLoad = writtenBytes(hearth.proc.pid).storage;
    const messagesBeforeLoad = sent.length;
    const sendOne = async (c: RawHttpClient, i: number) => {
      const u = users[i % users.length];
      if (i % 20 === 19 && sent.length > 10) {
        const ids = sent.slice(-10);
        const res = await c.request("POST", "/api/v1/messages/flags", { authorization: basic(users[(i * 7) % users.length]), ...form }, `messages=${encodeURIComponent(JSON.stringify(ids))}&op=add&flag=read`);
        if (res.status !== 200) throw new Error(res.body);
        return;
      }
      const res = await c.request("POST", "/api/v1/messages", { authorization: basic(u), ...form }, channelMessage(i));
      if (res.status !== 200) throw new Error(res.body);
      sent.push(JSON.parse(res.body).id);
    };
    // Unmeasured first: the figure is the server's steady state, not its JIT compiling the send path.
    await throughput(hearth.url, CONNECTIONS, 1, (c, i) => sendOne(c, 2_000_000 + i));
    const sends = await cpuPerRequest(hearth, () => throughput(hearth.url, CONNECTIONS, SECONDS, sendOne));
    const sendsPerSecond = sends.rate * (19 / 20);
    row("durable sends/s (POST /messages, 50 connections)", sendsPerSecond.toFixed(0), `raw lmdb-js durable puts ${raw.toFixed(0)}/s; ratio ${(sendsPerSecond / raw).toFixed(3)}`);
    row("  the same beside raw lmdb-js transactions, 50 writers each awaiting its durable commit", sendsPerSecond.toFixed(0), `${rawTx.toFixed(0)} transactions/s; ratio ${(sendsPerSecond / rawTx).toFixed(3)}`);
    row("  the same beside a bare Bun.serve committing that transaction per POST, 50 connections", sendsPerSecond.toFixed(0), `${bareDurableRate.toFixed(0)} requests/s; ratio ${(sendsPerSecond / bareDurableRate).toFixed(3)}`);
    row("server CPU per request of that load (all threads)", `${sends.cpuUs.toFixed(0)} µs`, `(${(1e6 / sends.cpuUs).toFixed(0)} requests/s of one core)`);
    // The rest of the messages, to the size asked for (not timed: bytes per message below).
    if (sent.length < MESSAGES) {
      const t0 = performance.now();
      let next = 1_000_000;
      const clients = Array.from({ length: CONNECTIONS }, () => RawHttpClient.forUrl(hearth.url));
      await Promise.all(clients.map(async (c) => { while (sent.length < MESSAGES) await sendOne(c, next++); }));
      clients.forEach((c) => c.close());
      console.error(`  (grew the store to ${sent.length} messages at ${(sent.length / ((performance.now() - t0) / 1000)).toFixed(0)}/s)`);
    }

    if (argValue("profile")) {
      // --profile DIR: the sends alone, from source, with Bun's CPU profile (Markdown) written into DIR as the server stops.
      await stop(hearth);
      await stop(bare);
      console.log(`CPU profile of the server written into ${argValue("profile")}`);
      return;
    }

    // 2b. The background work the load left: the unread and search rows of the last
    // messages, written by the job's worker thread, which retires RETIRE_MS after its
    // last run. Its time is reported, and the reads below run once it is done: they
    // measure a server at rest, not one sharing two cores with its own catch-up.
    const settleStarted = performance.now();
    const workerAlive = () => [...threadCpuSeconds(hearth.proc.pid, (name) => name).keys()].includes("Worker");
    while (workerAlive() && performance.now() - settleStarted < 120_000) await Bun.sleep(100);
    const settledSeconds = (performance.now() - settleStarted - (workerAlive() ? 0 : RETIRE_MS)) / 1000;
    row("background work after the load (search and unread rows)", workerAlive() ? "not done after 120 s" : `${Math.max(0, settledSeconds).toFixed(1)} s`, "(until the job's worker went idle, to the job's tick)");
    const loadBytes = (writtenBytes(hearth.proc.pid).storage - writtenBeforeLoad) / (sent.length - messagesBeforeLoad);
    row("bytes sent to the disk per message of the load (its sends, flags updates and background work)", `${(loadBytes / 1024).toFixed(1)} KB`, `bare Bun.serve committing one durable transaction per POST: ${(bareDurableBytes / 1024).toFixed(1)} KB per request`);

    // 3. The reader table after the load.
    const readers = readerTable(dataDir);
    row("LMDB reader slots in use after the load", `${readers.used} of ${readers.max}`, "(slots of live processes' open read transactions)");

    // 4. Reads against the bare server.
    const reader = users[1];
    const me = (url: string, auth: boolean) => (c: RawHttpClient) => c.get("/api/v1/users/me", auth ? { authorization: basic(reader) } : {}).then((r) => void (r.status !== 200 && Promise.reject(new Error(r.body))));
    // Unmeasured first (JIT), as for the sends; then each server's CPU per request beside
    // its rate: on a shared machine the rate follows the client's share of the CPU,
    // the CPU per request does not.
    await throughput(hearth.url, CONNECTIONS, 1, me(hearth.url, true));
    const meHearth = await cpuPerRequest(hearth, () => throughput(hearth.url, CONNECTIONS, SECONDS, me(hearth.url, true)));
    await throughput(bare.url, CONNECTIONS, 1, me(bare.url, false));
    const meBare = await cpuPerRequest(bare, () => throughput(bare.url, CONNECTIONS, SECONDS, me(bare.url, false)));
    row("authenticated GET /users/me req/s", meHearth.rate.toFixed(0), `bare Bun.serve ${meBare.rate.toFixed(0)}/s; ratio ${(meHearth.rate / meBare.rate).toFixed(2)}`);
    row("GET /users/me server CPU per request", `${meHearth.cpuUs.toFixed(0)} µs`, `bare Bun.serve ${meBare.cpuUs.toFixed(0)} µs; ratio (bare / Hearth) ${(meBare.cpuUs / meHearth.cpuUs).toFixed(2)}`);
    const narrowPath = (narrow: unknown) => `/api/v1/messages?anchor=newest&num_before=50&num_after=0&narrow=${encodeURIComponent(JSON.stringify(narrow))}`;
    const channelId = await fetch(`${hearth.url}/api/v1/get_stream_id?stream=bench`, { headers: { authorization: basic(reader) } }).then((r) => r.json()).then((b: any) => b.stream_id);
    const bareRead = await latencyP50(bare.url, narrowPath([]), {});
    for (const [label, narrow] of [
      ["newest 50 in a topic", [{ operator: "channel", operand: channelId }, { operator: "topic", operand: "topic 7" }]],
      ["is:unread", [{ operator: "is", operand: "unread" }]],
    ] as const) {
      const got = await latencyP50(hearth.url, narrowPath(narrow), { authorization: basic(reader) });
      row(`GET /messages ${label}, p50 (${got.count} messages)`, `${got.p50.toFixed(2)} ms`, `bare Bun, 50 messages from memory ${bareRead.p50.toFixed(2)} ms; ratio ${ratio(got.p50, bareRead.p50)}`);
    }

    // 5. Parked long-polls.
    const pollsHearth = await parkedPollsRss(hearth, POLLS, users);
    const pollsBare = await parkedPollsRss(bare, POLLS, null);
    row(`RSS with ${POLLS} parked long-polls`, formatRss(pollsHearth), `bare Bun long-poll ${formatRss(pollsBare)}; ratio ${ratio(pollsHearth.total, pollsBare.total)}`);

    // 6. Cold start on the populated folder, then its bytes.
    await stop(hearth);
    await stop(bare);
    hearth = await startHearth(dataDir);
    const bareAgain = await startChild("--bare");
    row(`cold start on the folder (${sent.length} messages)`, `${hearth.startMs.toFixed(0)} ms`, `bare Bun ${bareAgain.startMs.toFixed(0)} ms; ratio ${ratio(hearth.startMs, bareAgain.startMs)}`);
    await stop(hearth);
    await stop(bareAgain);
    const stats = keyspaceStats(dataDir);
    row("data file per stored message", `${(stats.fileBytes / stats.messages).toFixed(0)} B`, `live data ${(stats.liveBytes / stats.messages).toFixed(0)} B/message; free pages ${stats.freePages} (${((stats.freePages * stats.pageSize * 100) / stats.fileBytes).toFixed(0)} % of the file)`);

    // 7. Fan-out (its own servers, from source).
    const fanOut = process.argv.includes("--no-fanout") ? null : runFanOut();
    if (fanOut) row(`fan-out p99, ${QUICK ? 300 : 1000} long-polls × 50 msg/s`, `${fanOut.hearth_p99_ms} ms (RSS ${fanOut.hearth_rss_mib} MiB)`, `bare Bun ${fanOut.bare_p99_ms} ms; ratio ${fanOut.ratio.toFixed(2)}×`);

    console.log("\n| figure | Hearth | reference in the same run |\n|---|---|---|");
    for (const [figure, h, reference] of rows) console.log(`| ${figure} | ${h} | ${reference} |`);
    console.log("");
    printKeyspaceStats(stats);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The raw-transactions reference, run to its end before the sends. */
async function startRawTransactions(seconds: number): Promise<number> {
  const proc = Bun.spawn([process.execPath, import.meta.path, "--raw-transactions", String(seconds)], { stdout: "pipe", stderr: "inherit" });
  const { transactionsPerSecond } = await readAnnouncement<{ transactionsPerSecond: number }>(proc.stdout, "raw transactions");
  await proc.exited;
  return transactionsPerSecond;
}

/** Starts the raw-puts reference (it runs while nothing else does: called right before the sends, awaited first). */
async function startRawPuts(seconds: number): Promise<number> {
  const proc = Bun.spawn([process.execPath, import.meta.path, "--raw-puts", String(seconds)], { stdout: "pipe", stderr: "inherit" });
  return (await readAnnouncement<{ putsPerSecond: number }>(proc.stdout, "raw puts")).putsPerSecond;
}

/** LMDB's reader table of the store, read by a short-lived process (its own slot not counted). */
function readerTable(dataDir: string): { used: number; max: number } {
  const script = `import { open } from "lmdb"; const r = open({ path: ${JSON.stringify(join(dataDir, "db"))}, maxDbs: 64 }); const used = r.readerList().split("\\n").filter((l) => /^\\s*\\d+\\s/.test(l) && Number(l.trim().split(/\\s+/)[0]) !== process.pid).length; console.log(JSON.stringify({ used, max: r.getStats().maxReaders })); r.close();`;
  const out = Bun.spawnSync([process.execPath, "-e", script], { cwd: ROOT, stderr: "inherit" });
  return JSON.parse(out.stdout.toString());
}

function runFanOut(): { hearth_p99_ms: number; bare_p99_ms: number; ratio: number; hearth_rss_mib: number } | null {
  const args = ["--clients", String(QUICK ? 300 : 1000), "--rate", "50", "--seconds", QUICK ? "2" : "4", "--rounds", "1", "--warmup", QUICK ? "1" : "2"];
  const out = Bun.spawnSync([process.execPath, join(import.meta.dir, "bench-events.ts"), ...args], { stderr: "ignore" });
  const line = out.stdout.toString().split("\n").find((l) => l.startsWith("BENCH_RESULT "));
  return line ? JSON.parse(line.slice(13)) : null;
}

