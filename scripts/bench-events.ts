#!/usr/bin/env bun
/**
 * Event fan-out benchmark (issue 4): N long-polling clients on loopback, one sender
 * changing something every client must hear about at a fixed rate; reports the
 * latency from the send to each client's receipt (p50/p99), the sends/s sustained,
 * and the server's RSS — for Hearth and, in the same run, for a bare Bun.serve
 * long-poll server (events in memory, no auth, no store) as the baseline.
 *
 * The "send" is POST /messages to a channel every client is subscribed to: a durable
 * write of the message and its recipient list (the subscribers' "unread" rows follow
 * in background batches, see docs/benchmarks.md), then one message event to every queue.
 *
 *   bun scripts/bench-events.ts [--clients 1000] [--rate 50] [--seconds 5] [--rounds 1] [--warmup 3]
 *
 * Diagnostics: BENCH_PROFILE=dir (CPU profile of the Hearth server), BENCH_SMAPS=1
 * (the mappings holding its resident memory), BENCH_DU=1 (size of its data folder),
 * BENCH_BUN_FLAGS="--smol" (flags for the server processes), BENCH_SERVER_ENV="NAME=value …"
 * (environment variables for the server processes alone, e.g. BUN_JSC_logGC=1), BENCH_GC=1 (the Hearth
 * server calls Bun.gc(false) every second, not waiting for the collection; BENCH_GC=full
 * calls Bun.gc(true), which collects synchronously), BENCH_THREADS=1 (CPU per thread of
 * each server), BENCH_HEAP=1 (the Hearth server's JavaScript heap and allocator totals), BENCH_STALLS=1 (how long each server's main thread went without
 * turning to its timers, and for Hearth where the slowest messages' time went: waiting
 * to commit, the commit, the fan-out), BENCH_PUBLISH_ONLY=1 (Hearth's sends skip the
 * request, rendering and store: its queues and polls alone, see servePublishOnly),
 * BENCH_FLOOR=1 (a third server each round, between the two: the bare one that also
 * reads every request's Authorization header and commits each message to LMDB before
 * publishing it, the least any server of the Zulip API does; its p99 ratio to the bare
 * server's is printed too).
 * Hearth's server always reports, each second, how many messages wait past the
 * unread-rows job's watermark: a job that falls behind looks cheaper than it is.
 *
 * Everything is bounded (clients, rate, duration) and binds to 127.0.0.1 only.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { cpuSeconds, percentile, RawHttpClient, readAnnouncement, rssMiB, sampleChannelMessage, threadCpuSeconds } from "./bench-lib";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : NaN;
  return Number.isFinite(v) && v > 0 ? v : fallback;
};
const CLIENTS = Math.min(arg("clients", 1000), 5000);
const RATE = Math.min(arg("rate", 50), 500);
const SECONDS = Math.min(arg("seconds", 5), 60);
const ROUNDS = Math.min(arg("rounds", 1), 10);
// Seconds of the same load before the measured window, not measured: a server runs for
// days, so the figure is its steady state, not its first seconds of JIT compilation.
const WARMUP = process.argv.includes("--warmup") ? Math.min(Math.max(Number(process.argv[process.argv.indexOf("--warmup") + 1]) || 0, 0), 60) : 3;

// Bun's fetch allows 256 concurrent requests unless told otherwise.
if (!process.env.BUN_CONFIG_MAX_HTTP_REQUESTS) {
  const child = Bun.spawnSync([process.execPath, ...process.argv.slice(1)], {
    env: { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: String(CLIENTS + 64) },
    stdout: "inherit",
    stderr: "inherit",
  });
  process.exit(child.exitCode ?? 1);
}

// ---------------------------------------------------------------- server processes

const role = process.argv[2];
if (role === "--setup-hearth") await setupHearth();
else if (role === "--serve-hearth") await serveHearth();
else if (role === "--serve-bare") await serveBare(false);
else if (role === "--serve-floor") await serveBare(true);
else await main();

/**
 * Child process: fills a temp data folder with CLIENTS users in one channel, then
 * exits. A separate process serves it, so the server measured is one that started on
 * an existing folder, as in production, not one still holding the set-up's garbage.
 */
async function setupHearth() {
  const { startServer } = await import("../src/server");
  const { Store } = await import("../src/store/db");
  const { doInitRealm } = await import("../src/actions/realm");
  const { doCreateUser } = await import("../src/actions/create_user");
  const dataDir = process.env.BENCH_DATA!;
  const store = new Store(dataDir);
  const { owner } = await doInitRealm(store, { realmName: "Bench", ownerEmail: "owner@bench.test", ownerPassword: "bench-password" });
  await store.close();
  const server = await startServer({ dataDir, host: "127.0.0.1", port: 0, externalUrl: null });
  const users: { email: string; key: string }[] = [{ email: owner.email, key: owner.api_key }];
  for (let i = 0; i < CLIENTS; i += 100) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(100, CLIENTS - i) }, (_, j) =>
        doCreateUser(server.h, { email: `u${i + j}@bench.test`, full_name: `User ${i + j}`, password: null }),
      ),
    );
    for (const u of batch) users.push({ email: u.email, key: u.api_key });
  }
  // One channel with everyone in it, created and filled through the API as an owner would.
  const ownerAuth = "Basic " + Buffer.from(`${owner.email}:${owner.api_key}`).toString("base64");
  const emails = users.map((u) => u.email);
  for (let i = 0; i < emails.length; i += 500) {
    const res = await fetch(`${server.url}/api/v1/users/me/subscriptions`, {
      method: "POST",
      headers: { authorization: ownerAuth, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ subscriptions: JSON.stringify([{ name: "bench" }]), principals: JSON.stringify(emails.slice(i, i + 500)) }),
    });
    if (res.status !== 200) throw new Error(await res.text());
  }
  // The set-up's messages (welcome and subscription notices) get their rows now: the
  // server measured starts as one that was quiet before the load, not with a backlog
  // its unread-rows job would write during the measurement.
  const { hasDeferredUnreadRows } = await import("../src/store/unread");
  while (hasDeferredUnreadRows(server.h.store)) await server.unreadRows.drain();
  await server.stop();
  writeFileSync(join(dataDir, "bench-users.json"), JSON.stringify(users));
}

/** Child process: a Hearth server on the folder `setupHearth` filled. */
async function serveHearth() {
  const { startServer } = await import("../src/server");
  const dataDir = process.env.BENCH_DATA!;
  const users = JSON.parse(readFileSync(join(dataDir, "bench-users.json"), "utf8"));
  const server = await startServer({ dataDir, host: "127.0.0.1", port: 0, externalUrl: null });
  if (process.env.BENCH_GC) setInterval(() => Bun.gc(process.env.BENCH_GC === "full"), 1000);
  const stalls = process.env.BENCH_STALLS ? watchStalls() : null;
  if (stalls) await recordTimeline(server.h, dataDir);
  const publishUrl = process.env.BENCH_PUBLISH_ONLY ? await servePublishOnly(server.h) : "";
  console.log(JSON.stringify({ url: server.url, users, publishUrl }));
  // Whether the unread-rows job keeps up: how many messages wait past its watermark.
  const { unreadWatermark } = await import("../src/store/unread");
  const behind: number[] = [];
  setInterval(() => behind.push(server.h.store.lastId("message") - unreadWatermark(server.h.store)), 1000).unref();
  process.on("SIGTERM", async () => {
    console.error(`Hearth's unread-rows job, messages past its watermark each second: ${behind.join(" ")}`);
    stalls?.report();
    if (process.env.BENCH_HEAP) {
      // Where the anonymous memory goes: the main thread's JavaScript heap and the allocator's totals.
      const jsc = await import("bun:jsc");
      const heap = jsc.heapStats();
      const mib = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;
      const usage = jsc.memoryUsage();
      console.error(`Hearth main heap: size ${mib(heap.heapSize)}, capacity ${mib(heap.heapCapacity)}, extra ${mib(heap.extraMemorySize)}; allocator: current ${mib(usage.current)}, peak ${mib(usage.peak)}, committed ${mib(usage.currentCommit)}, peak committed ${mib(usage.peakCommit)}`);
      // What the heap holds once garbage is gone: the most numerous object types.
      Bun.gc(true);
      const live = jsc.heapStats();
      const top = Object.entries(live.objectTypeCounts).sort((a, b) => b[1] - a[1]).slice(0, 12);
      console.error(`after a full collection: size ${mib(live.heapSize)}, extra ${mib(live.extraMemorySize)}; most numerous: ${top.map(([type, n]) => `${type} ${n}`).join(", ")}`);
    }
    await server.stop();
    process.exit(0);
  });
}

/**
 * BENCH_PUBLISH_ONLY: a second listener in the Hearth server process whose `/send`
 * publishes a prepared message event straight to every user, skipping the request's
 * authentication, rendering and the store: what Hearth's queues and polls cost alone.
 */
async function servePublishOnly(h: import("../src/context").Hearth): Promise<string> {
  const { activeUserIds } = await import("../src/store/users");
  let nextId = 10_000_000;
  const side = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const seq = Number(new URL(req.url).searchParams.get("seq"));
      const message = { ...sampleMessage(seq), id: nextId++, content: `message ${seq}`, rendered_content: `<p>message ${seq}</p>` };
      h.events.publish({ type: "message", message, flags: [] }, activeUserIds(h));
      return Response.json({ result: "success" });
    },
  });
  return `http://127.0.0.1:${side.port}`;
}

/**
 * BENCH_STALLS: when each message's commit started, when its event was published and
 * when the last parked poll was answered (epoch ms), written to `timeline.json` in the
 * data folder at the end for explainTimeline.
 */
async function recordTimeline(h: import("../src/context").Hearth, dataDir: string) {
  const commitStarts: number[] = [];
  const published = new Map<number, number>();
  const answered = new Map<number, number>();
  const parkedAtPublish: number[] = [];
  const now = () => performance.timeOrigin + performance.now();
  let lastSeq = -1;
  const store = h.store as any;
  const commitInfallible = store.commitInfallible.bind(store);
  store.commitInfallible = (fn: unknown, options: unknown) => {
    commitStarts.push(now());
    return commitInfallible(fn, options);
  };
  // lmdb-js runs a transaction's callback on this thread once its write thread holds the
  // writer lock: the time until then is the first of the commit's two turns on this thread.
  const callbackStarts: number[] = [];
  const turnedAfterPublish = new Map<number, number>();
  const responsesBuilt = new Map<number, number>();
  const responsesHandedOver = new Map<number, number>();
  const transaction = store.root.transaction.bind(store.root);
  store.root.transaction = (fn: () => unknown) =>
    transaction(() => {
      callbackStarts.push(now());
      return fn();
    });
  const publish = h.events.publish.bind(h.events);
  h.events.publish = (event, users, options) => {
    if (event.type === "message") {
      published.set((lastSeq = Number(String((event.message as any).content).split(" ").pop())), now());
      let parked = 0;
      for (const queue of (h.queues as any).queues.values()) if (queue.waiter) parked++;
      parkedAtPublish.push(parked);
    }
    const result = publish(event, users, options);
    if (event.type === "message") {
      const seq = lastSeq;
      setImmediate(() => turnedAfterPublish.set(seq, now()));
      // Microtasks run in order: publishing queued each parked poll's answer; each
      // answer queues the building of its response, which queues Bun's writing of it.
      // So a task queued behind each layer tells when that layer is done.
      queueMicrotask(() =>
        queueMicrotask(() => {
          responsesBuilt.set(seq, now());
          queueMicrotask(() => responsesHandedOver.set(seq, now()));
        }),
      );
    }
    return result;
  };
  const { EventQueue } = await import("../src/events/event_queue");
  const answerWaiter = EventQueue.prototype.answerWaiter;
  EventQueue.prototype.answerWaiter = function (this: InstanceType<typeof EventQueue>, extra) {
    if (this.waiter) answered.set(lastSeq, now());
    return answerWaiter.call(this, extra);
  };
  process.on("SIGTERM", () => {
    const recent = parkedAtPublish.slice(-250).sort((a, b) => a - b);
    console.error(`polls parked when a message was published (last 250 messages): min ${recent[0]}, median ${recent[recent.length >> 1]}`);
    writeFileSync(join(dataDir, "timeline.json"), JSON.stringify({ commitStarts, callbackStarts, turnedAfterPublish: [...turnedAfterPublish], responsesBuilt: [...responsesBuilt], responsesHandedOver: [...responsesHandedOver], published: [...published], answered: [...answered] }));
  });
}

/**
 * BENCH_STALLS=1: how late a 5 ms timer fires on the server's main thread, i.e. how
 * long the thread went without turning to its queue. Printed at the end: the longest
 * stalls (with seconds since start) and how many exceeded 10/20/40 ms.
 */
function watchStalls() {
  const t0 = performance.now();
  const lags: { at: number; ms: number }[] = [];
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    lags.push({ at: (now - t0) / 1000, ms: now - last - 5 });
    last = now;
  }, 5);
  return {
    report() {
      const over = (ms: number) => lags.filter((l) => l.ms > ms).length;
      const worst = [...lags].sort((a, b) => b.ms - a.ms).slice(0, 15);
      console.error(`stalls: >10 ms ${over(10)}, >20 ms ${over(20)}, >40 ms ${over(40)}; worst: ${worst.map((l) => `${l.ms.toFixed(0)}ms@${l.at.toFixed(2)}s`).join(" ")}`);
    },
  };
}

/**
 * Child process: the baseline — per-client in-memory queues, long-poll, no auth, no
 * store. Its events carry a message object of the same shape and size as Hearth's
 * (the payload clients must receive either way), serialized once per send as Hearth
 * does, so the comparison measures server overhead rather than payload size.
 */
async function serveBare(floor: boolean) {
  // BENCH_FLOOR's server: what any server of the Zulip API must do beyond the bare one,
  // and nothing else: read every request's Authorization header (Bun builds the
  // request's whole header map to read one) and commit each sent message to LMDB
  // through Hearth's store (src/store/db.ts: lmdb-js's batched commit, the event
  // published once the write is visible, the answer once it is durable).
  const floorDir = floor ? mkdtempSync(join(tmpdir(), "hearth-bench-floor-")) : "";
  const floorStore = floor ? new (await import("../src/store/db")).Store(floorDir) : null;
  type Waiter = (body: string) => void;
  type Queued = { id: number; json: string };
  const queues = Array.from({ length: CLIENTS + 1 }, () => ({ events: [] as Queued[], next: 0, waiter: null as Waiter | null }));
  const body = (events: Queued[]) => `{"result":"success","msg":"","events":[${events.map((e) => `{"id":${e.id},${e.json}}`).join(",")}]}`;
  const publish = (message: ReturnType<typeof sampleMessage>) => {
    const json = `"type":"message","flags":[],"message":${JSON.stringify(message)}`;
    for (const q of queues) {
      q.events.push({ id: q.next++, json });
      if (q.waiter) {
        const w = q.waiter;
        q.waiter = null;
        queueMicrotask(() => w(body(q.events)));
      }
    }
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 120,
    async fetch(req) {
      const url = new URL(req.url);
      if (floor && !req.headers.get("authorization")) return new Response("", { status: 401 });
      if (url.pathname === "/send") {
        const seq = Number(url.searchParams.get("seq"));
        const message = sampleMessage(seq);
        if (floorStore) await floorStore.commitInfallible(() => floorStore.dbs.messages.put(seq, message), { onCommitted: () => publish(message) });
        else publish(message);
        return Response.json({ result: "success" });
      }
      const q = queues[Number(url.searchParams.get("client"))];
      const last = Number(url.searchParams.get("last"));
      while (q.events.length && q.events[0].id <= last) q.events.shift();
      const headers = { "content-type": "application/json" };
      if (q.events.length) return new Response(body(q.events), { headers });
      return new Response(await new Promise<string>((resolve) => (q.waiter = resolve)), { headers });
    },
  });
  const stalls = process.env.BENCH_STALLS ? watchStalls() : null;
  process.on("SIGTERM", () => {
    stalls?.report();
    if (floor) rmSync(floorDir, { recursive: true, force: true });
    process.exit(0);
  });
  console.log(JSON.stringify({ url: `http://127.0.0.1:${server.port}`, users: [] }));
}

function sampleMessage(seq: number) {
  return { ...sampleChannelMessage(seq), content_type: "text/x-markdown" };
}

// ---------------------------------------------------------------- the load

/** The mappings holding the most resident memory (BENCH_SMAPS=1): where RSS goes. */
function largestMappings(pid: number): string {
  const rows: { name: string; kib: number }[] = [];
  let name = "";
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) name = header[1] || "[anonymous]";
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) rows.push({ name, kib: Number(rss[1]) });
  }
  const byName = new Map<string, number>();
  for (const r of rows) byName.set(r.name, (byName.get(r.name) ?? 0) + r.kib);
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.name, (counts.get(r.name) ?? 0) + 1);
  return [...byName].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([n, kib]) => `${(kib / 1024).toFixed(1)} MiB ${n} (${counts.get(n)} mappings)`).join("\n");
}

/** CPU seconds per thread of the server (the main thread, then each other by name and id), for BENCH_THREADS. */
const serverThreadCpu = (pid: number) => threadCpuSeconds(pid, (name, tid) => (tid === String(pid) ? "main" : `${name}#${tid}`));

interface Target {
  name: string;
  poll(client: number, last: number): Promise<{ id: number; seq: number }[]>;
  /** Closes the clients' connections (ends the parked polls). */
  close(): void;
  send(seq: number): Promise<void>;
  prepare(client: number): Promise<number>;
}

async function startChild(kind: "--serve-hearth" | "--serve-bare" | "--serve-floor") {
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-bench-"));
  if (kind === "--serve-hearth") {
    const setup = Bun.spawn([process.execPath, import.meta.path, "--setup-hearth", "--clients", String(CLIENTS)], {
      env: { ...process.env, BENCH_DATA: dataDir },
      stdout: "inherit",
      stderr: "inherit",
    });
    if ((await setup.exited) !== 0) throw new Error("setting up the Hearth data folder failed");
  }
  // BENCH_PROFILE=dir writes a CPU profile of the server (markdown) into that folder.
  const profile = process.env.BENCH_PROFILE ? ["--cpu-prof-md", `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  const extra = process.env.BENCH_BUN_FLAGS ? process.env.BENCH_BUN_FLAGS.split(" ") : [];
  // BENCH_SERVER_ENV="NAME=value …": environment for the server processes alone (e.g. JSC's BUN_JSC_logGC=1).
  const serverEnv = Object.fromEntries((process.env.BENCH_SERVER_ENV ?? "").split(" ").filter(Boolean).map((pair) => pair.split(/=(.*)/s).slice(0, 2)));
  const proc = Bun.spawn([process.execPath, ...profile, ...extra, import.meta.path, kind, "--clients", String(CLIENTS)], {
    env: { ...process.env, ...serverEnv, BENCH_DATA: dataDir },
    stdout: "pipe",
    stderr: "inherit",
  });
  const info = await readAnnouncement<{ url: string; users: { email: string; key: string }[]; publishUrl?: string }>(proc.stdout, kind);
  return { proc, dataDir, ...info };
}

function hearthTarget(url: string, users: { email: string; key: string }[], publishUrl: string): Target {
  const auth = users.map((u) => "Basic " + Buffer.from(`${u.email}:${u.key}`).toString("base64"));
  const queueIds: string[] = [];
  const clients: RawHttpClient[] = [];
  return {
    name: "Hearth",
    close: () => clients.forEach((c) => c.close()),
    async prepare(client) {
      const res = await fetch(`${url}/api/v1/register`, {
        method: "POST",
        headers: { authorization: auth[client + 1], "content-type": "application/x-www-form-urlencoded" },
        body: `event_types=${encodeURIComponent('["message"]')}&fetch_event_types=%5B%5D`,
      });
      const body = (await res.json()) as any;
      queueIds[client] = body.queue_id;
      return body.last_event_id;
    },
    async poll(client, last) {
      const res = await (clients[client] ??= RawHttpClient.forUrl(url)).get(`/api/v1/events?queue_id=${encodeURIComponent(queueIds[client])}&last_event_id=${last}`, {
        authorization: auth[client + 1],
      });
      const body = JSON.parse(res.body);
      if (body.result !== "success") throw new Error(res.body);
      return body.events
        .filter((e: any) => e.type === "message")
        .map((e: any) => ({ id: e.id, seq: Number(String(e.message.content).split(" ").pop()) }));
    },
    async send(seq) {
      if (publishUrl) {
        await fetch(`${publishUrl}/send?seq=${seq}`, { method: "POST" });
        return;
      }
      const res = await fetch(`${url}/api/v1/messages`, {
        method: "POST",
        headers: { authorization: auth[0], "content-type": "application/x-www-form-urlencoded" },
        body: `type=stream&to=bench&topic=load&content=${encodeURIComponent(`message ${seq}`)}`,
      });
      if (res.status !== 200) throw new Error(await res.text());
    },
  };
}

function bareTarget(url: string, floor = false): Target {
  const clients: RawHttpClient[] = [];
  // As long as Hearth's clients' headers (a Basic header of an e-mail and a 32-character key).
  const headers: Record<string, string> = floor ? { authorization: "Basic " + Buffer.from(`u999@bench.test:${"k".repeat(32)}`).toString("base64") } : {};
  return {
    name: floor ? "floor: bare + auth + LMDB" : "bare Bun.serve",
    close: () => clients.forEach((c) => c.close()),
    async prepare() {
      return -1;
    },
    async poll(client, last) {
      const res = await (clients[client] ??= RawHttpClient.forUrl(url)).get(`/poll?client=${client}&last=${last}`, headers);
      return JSON.parse(res.body).events.map((e: any) => ({ id: e.id, seq: Number(String(e.message.content).split(" ").pop()) }));
    },
    async send(seq) {
      await fetch(`${url}/send?seq=${seq}`, { method: "POST", headers });
    },
  };
}

async function run(target: Target, pid: number) {
  const lastIds = await Promise.all(Array.from({ length: CLIENTS }, (_, c) => target.prepare(c)));
  const sentAt = new Map<number, number>();
  const receipts = new Map<number, number[]>();
  const latencies: number[] = [];
  let stopping = false;
  const pollers = lastIds.map(async (startId, client) => {
    let last = startId;
    while (!stopping) {
      try {
        const events = await target.poll(client, last);
        const now = performance.now();
        for (const e of events) {
          last = Math.max(last, e.id);
          const t = sentAt.get(e.seq);
          if (t !== undefined) latencies.push(now - t);
          if (t !== undefined && process.env.BENCH_STALLS) receipts.get(e.seq)?.push(now) ?? receipts.set(e.seq, [now]);
        }
      } catch (e) {
        if (!stopping) throw e;
      }
    }
  });
  await Bun.sleep(500); // every client parked
  // Warm-up sends carry sequence numbers past the measured ones and no start time, so no
  // latency is recorded for them.
  const warmups: Promise<void>[] = [];
  const w0 = performance.now();
  for (let i = 0; i < RATE * WARMUP; i++) {
    const wait = w0 + (i * 1000) / RATE - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    warmups.push(target.send(1_000_000 + i));
  }
  await Promise.all(warmups);
  await Bun.sleep(500); // the warm-up's last deliveries
  const total = RATE * SECONDS;
  const t0 = performance.now();
  const cpu0 = cpuSeconds(pid);
  const threads0 = process.env.BENCH_THREADS ? serverThreadCpu(pid) : null;
  const clientCpu0 = process.cpuUsage();
  let sent = 0;
  // Open loop: each send starts on schedule whether or not the previous one finished,
  // so a slow server shows up as latency, not as a lower offered rate.
  const sends: Promise<void>[] = [];
  const sendLatencies: number[] = [];
  for (let seq = 1; seq <= total; seq++) {
    const due = t0 + ((seq - 1) * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    sentAt.set(seq, performance.now());
    const started = performance.now();
    sends.push(target.send(seq).then(() => void (sent++, sendLatencies.push(performance.now() - started))));
  }
  await Promise.all(sends);
  const sendSeconds = (performance.now() - t0) / 1000;
  const serverCpu = (cpuSeconds(pid) - cpu0) / sendSeconds;
  if (threads0) {
    const busy = [...serverThreadCpu(pid)].map(([name, s]) => [name, (s - (threads0.get(name) ?? 0)) / sendSeconds] as const).filter(([, share]) => share >= 0.01);
    console.log(`${target.name} threads: ${busy.map(([name, share]) => `${name} ${(share * 100).toFixed(0)}%`).join(", ")}`);
  }
  const clientCpuUsage = process.cpuUsage(clientCpu0);
  // The clients share the machine: together with the server's, this says how close to saturated it was.
  const clientCpu = (clientCpuUsage.user + clientCpuUsage.system) / 1e6 / sendSeconds;
  const rss = rssMiB(pid);
  if (process.env.BENCH_SMAPS) console.log(`${target.name}:\n${largestMappings(pid)}`);
  // Let the last deliveries arrive (bounded wait).
  const deadline = performance.now() + 5000;
  while (latencies.length < sent * CLIENTS && performance.now() < deadline) await Bun.sleep(20);
  stopping = true;
  target.close();
  await Promise.allSettled(pollers);
  latencies.sort((a, b) => a - b);
  const epoch = (t: number) => performance.timeOrigin + t;
  if (process.env.BENCH_STALLS) console.log(`${target.name}: ${describeReceipts(sentAt, receipts)}`);
  lastTimeline = { sentAt: new Map([...sentAt].map(([seq, t]) => [seq, epoch(t)])), receipts: new Map([...receipts].map(([seq, ts]) => [seq, ts.map(epoch)])) };
  return {
    name: target.name,
    deliveries: `${latencies.length}/${sent * CLIENTS}`,
    p50_ms: +percentile(latencies, 50).toFixed(1),
    p99_ms: +percentile(latencies, 99).toFixed(1),
    max_ms: +latencies[latencies.length - 1].toFixed(1),
    sends_per_s: +(sent / sendSeconds).toFixed(1),
    send_p50_ms: +percentile(sendLatencies.sort((a, b) => a - b), 50).toFixed(1),
    server_cpu_pct: +(serverCpu * 100).toFixed(0),
    clients_cpu_pct: +(clientCpu * 100).toFixed(0),
    server_rss_mib: +rss.total.toFixed(0),
    of_which_file_mib: +rss.file.toFixed(0),
  };
}

var lastTimeline: { sentAt: Map<number, number>; receipts: Map<number, number[]> } | null = null;

/**
 * BENCH_STALLS: where the slowest messages' time went, from the client's clock and
 * the server's (both epoch milliseconds on one machine): from the send to the start of
 * its commit (waiting for the main thread, parsing, rendering), the commit (until the
 * events are published), and the fan-out (until the last client read it).
 */
/**
 * BENCH_STALLS, for either server: per message, when its first and its last client
 * got it after the send started, on average and over the slowest 5 % of messages.
 */
function describeReceipts(sentAt: Map<number, number>, receipts: Map<number, number[]>): string {
  const rows = [...receipts].flatMap(([seq, got]) => {
    const sent = sentAt.get(seq);
    return sent === undefined ? [] : [{ first: Math.min(...got) - sent, last: Math.max(...got) - sent }];
  });
  rows.sort((a, b) => b.last - a.last);
  const mean = (xs: typeof rows, k: "first" | "last") => (xs.reduce((sum, r) => sum + r[k], 0) / xs.length).toFixed(1);
  const slowest = rows.slice(0, Math.ceil(rows.length / 20));
  return `first receipt ${mean(rows, "first")} ms, last ${mean(rows, "last")} ms on average; slowest 5%: first ${mean(slowest, "first")}, last ${mean(slowest, "last")}`;
}

function explainTimeline(dataDir: string) {
  const timeline = lastTimeline;
  if (!timeline) return;
  const server = JSON.parse(readFileSync(join(dataDir, "timeline.json"), "utf8")) as { commitStarts: number[]; callbackStarts: number[]; turnedAfterPublish: [number, number][]; responsesBuilt: [number, number][]; responsesHandedOver: [number, number][]; published: [number, number][]; answered: [number, number][] };
  const published = new Map(server.published);
  const answered = new Map(server.answered);
  const turned = new Map(server.turnedAfterPublish);
  const built = new Map(server.responsesBuilt);
  const handedOver = new Map(server.responsesHandedOver);
  // Commits in order: the measured messages are the last ones.
  const measured = [...timeline.sentAt.keys()].sort((a, b) => a - b);
  const starts = server.commitStarts.slice(-measured.length);
  const callbacks = server.callbackStarts.slice(-measured.length);
  const rows = measured.flatMap((seq, i) => {
    const sent = timeline.sentAt.get(seq)!;
    const got = timeline.receipts.get(seq) ?? [];
    // A message no client received (the run's bounded wait ran out) says nothing here.
    if (got.length === 0) return [];
    return {
      seq,
      toCommit: starts[i] - sent,
      commit: published.get(seq)! - starts[i],
      toCallback: callbacks[i] - starts[i],
      toTurn: (turned.get(seq) ?? NaN) - published.get(seq)!,
      toBuilt: (built.get(seq) ?? NaN) - published.get(seq)!,
      toHandedOver: (handedOver.get(seq) ?? NaN) - published.get(seq)!,
      toFirst: Math.min(...got) - published.get(seq)!,
      answering: (answered.get(seq) ?? NaN) - published.get(seq)!,
      fanout: Math.max(...got) - published.get(seq)!,
      total: Math.max(...got) - sent,
    };
  });
  // A message published while clients were still getting the one before queues behind it.
  const overlapping = measured.filter((seq) => {
    const before = timeline.receipts.get(seq - 1);
    return before !== undefined && published.has(seq) && Math.max(...before) > published.get(seq)!;
  }).length;
  console.log(`messages published before the previous one had reached every client: ${overlapping} of ${measured.length}`);
  rows.sort((a, b) => b.total - a.total);
  const mean = (xs: typeof rows, k: "toCommit" | "commit" | "toCallback" | "toTurn" | "toBuilt" | "toHandedOver" | "toFirst" | "answering" | "fanout" | "total") => (xs.reduce((sum, r) => sum + (Number.isNaN(r[k]) ? 0 : r[k]), 0) / xs.filter((r) => !Number.isNaN(r[k])).length).toFixed(1);
  for (const [label, xs] of [["slowest 5%", rows.slice(0, Math.ceil(rows.length / 20))], ["all", rows]] as const) {
    console.log(`${label}: last receipt ${mean(xs, "total")} ms = to commit ${mean(xs, "toCommit")} + commit ${mean(xs, "commit")} (its callback ran after ${mean(xs, "toCallback")}) + fan-out ${mean(xs, "fanout")} (of which the server answering every parked poll: ${mean(xs, "answering")}, their responses built: ${mean(xs, "toBuilt")}, handed to Bun: ${mean(xs, "toHandedOver")}, its next loop turn: ${mean(xs, "toTurn")}, the first receipt: ${mean(xs, "toFirst")})`);
  }
}

async function main() {
  console.log(`${CLIENTS} long-polling clients, ${RATE} sends/s for ${SECONDS} s after ${WARMUP} s of warm-up, loopback, ${ROUNDS} round(s)`);
  // Other work on the machine skews both servers alike; say how busy it was.
  console.log(`${cpus().length} CPUs, load average before: ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  const results: { name: string; p99_ms: number }[] = [];
  const ratios: number[] = [];
  const hearthRss: number[] = [];
  // Rounds alternate the two servers: p99 on a shared 2-core machine varies from run
  // to run, so one pair is an anecdote and the median ratio is the figure.
  const floorRatios: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const pair = [];
    const kinds = process.env.BENCH_FLOOR ? (["--serve-bare", "--serve-floor", "--serve-hearth"] as const) : (["--serve-bare", "--serve-hearth"] as const);
    for (const kind of kinds) {
      const child = await startChild(kind);
      try {
        const target = kind === "--serve-hearth" ? hearthTarget(child.url, child.users, child.publishUrl ?? "") : bareTarget(child.url, kind === "--serve-floor");
        pair.push({ round, ...(await run(target, child.proc.pid)) });
        if (process.env.BENCH_DU) console.log(Bun.spawnSync(["du", "-sh", join(child.dataDir, "db")]).stdout.toString().trim());
      } finally {
        child.proc.kill("SIGTERM");
        await child.proc.exited;
        if (process.env.BENCH_STALLS && kind === "--serve-hearth") explainTimeline(child.dataDir);
        rmSync(child.dataDir, { recursive: true, force: true });
      }
    }
    const bare = pair[0];
    const hearth = pair[pair.length - 1];
    ratios.push(hearth.p99_ms / bare.p99_ms);
    if (pair.length === 3) floorRatios.push(pair[1].p99_ms / bare.p99_ms);
    hearthRss.push(hearth.server_rss_mib);
    results.push(...pair);
  }
  console.table(results);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`Hearth p99 / bare p99 per round: ${ratios.map((r) => r.toFixed(2)).join(", ")}; median ${median(ratios).toFixed(2)} (goal ≤ 1.5)`);
  if (floorRatios.length > 0) console.log(`floor p99 / bare p99 per round: ${floorRatios.map((r) => r.toFixed(2)).join(", ")}; median ${median(floorRatios).toFixed(2)}`);
  console.log(`Hearth RSS per round: ${hearthRss.join(", ")} MiB; largest ${Math.max(...hearthRss)} MiB (goal < 200)`);
  // One machine-readable line for scripts/bench.ts, which runs this as its fan-out figure.
  const p99Of = (name: string) => median(results.filter((r) => r.name === name).map((r) => r.p99_ms));
  console.log(`BENCH_RESULT ${JSON.stringify({ hearth_p99_ms: p99Of("Hearth"), bare_p99_ms: p99Of("bare Bun.serve"), ratio: median(ratios), hearth_rss_mib: Math.max(...hearthRss) })}`);
}
