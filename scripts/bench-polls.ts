#!/usr/bin/env bun
/**
 * What one GET /events poll costs the server: 50 clients poll with `dont_block=true`
 * as fast as they can for a few seconds; the figure is the server process's CPU time
 * per poll (from /proc), for Hearth and, in the same run, for a bare Bun.serve server
 * that answers the same JSON without authentication or queues, with and without
 * reading the Authorization header (which Bun builds every header of the request to
 * read). Under a message flood every client polls again after every event, so this is
 * the per-request cost that scripts/bench-events.ts multiplies by 1,000 per message.
 *
 *   bun scripts/bench-polls.ts [--seconds 3] [--rounds 3]
 *
 * `--parked` measures instead, in one process and without HTTP, what answering a
 * parked poll costs: N queues (one per user, registered as scripts/bench-events.ts
 * registers them) each hold a parked poll; one channel message is delivered as a send
 * publishes it (shared per-user flags, the sender's per-queue fields, all_public_streams)
 * and the figure is the main thread's CPU from the publish until every poll's
 * Response is built, per queue, against the bare long-poll server's queue code of
 * scripts/bench-events.ts in the same process, rounds alternating. Then the JavaScript
 * heap each parked queue holds (after a full collection), against the bare server's.
 * `--tree DIR` takes Hearth's code from another checkout (main's, for a before/after).
 *
 *   bun scripts/bench-polls.ts --parked [--queues 1000] [--rounds 5] [--tree DIR]
 *
 * `--parked-rss` starts a Hearth server from source (scripts/bench-events.ts's set-up
 * and server: N users in one channel) and prints its RSS, split into anonymous and
 * file-backed pages, idle, with one queue registered per user, and with a long-poll
 * parked on each (raw keep-alive sockets).
 *
 *   bun scripts/bench-polls.ts --parked-rss [--queues 1000] [--tree DIR]
 *
 * Binds to 127.0.0.1 only.
 */
import { cpuSeconds, readAnnouncement } from "./bench-lib";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : NaN;
  return Number.isFinite(v) && v > 0 ? Math.min(v, 30) : fallback;
};
const SECONDS = arg("seconds", 3);
const ROUNDS = arg("rounds", 3);
const CLIENTS = 50;

type ServerInfo = { url: string; queues: string[]; auth: string };

const role = process.argv[2];
if (role === "--parked") await (await import("./bench-parked")).benchParked(process.argv);
else if (role === "--parked-rss") await (await import("./bench-parked")).parkedRss(process.argv);
else if (role === "--serve-hearth") await serveHearth();
else if (role === "--serve-bare") serveBare(false);
else if (role === "--serve-bare-headers") serveBare(true);
else await main();

/** Child process: a Hearth test server, one user with CLIENTS queues. */
async function serveHearth() {
  const { startTestServer } = await import("../test/kit");
  const { register } = await import("../test/kit/events");
  const s = await startTestServer();
  const queues: string[] = [];
  for (let i = 0; i < CLIENTS; i++) queues.push((await register(s.as("hamlet"), { event_types: ["realm_user"] })).queue_id);
  const auth = "Basic " + Buffer.from(`${s.users.hamlet.email}:${s.users.hamlet.apiKey}`).toString("base64");
  process.on("SIGTERM", async () => {
    await s.stop();
    process.exit(0);
  });
  console.log(JSON.stringify({ url: s.url, queues, auth } satisfies ServerInfo));
}

/** Child process: the baseline, answering what Hearth answers to an empty poll. */
function serveBare(readAuthorization: boolean) {
  const headers = { "content-type": "application/json" };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      const url = request.url;
      const queueId = url.slice(url.indexOf("queue_id=") + 9, url.indexOf("&"));
      if (readAuthorization && !request.headers.get("authorization")) return new Response("", { status: 401 });
      return new Response(`{"result":"success","msg":"","events":[],"queue_id":${JSON.stringify(queueId)}}`, { headers });
    },
  });
  process.on("SIGTERM", () => process.exit(0));
  const queues = Array.from({ length: CLIENTS }, () => crypto.randomUUID());
  console.log(JSON.stringify({ url: `http://127.0.0.1:${server.port}`, queues, auth: "Basic eDp5" } satisfies ServerInfo));
}

async function measure(kind: string): Promise<number[]> {
  // BENCH_PROFILE=dir writes a CPU profile of each server (markdown) into that folder.
  const profile = process.env.BENCH_PROFILE ? ["--cpu-prof-md", `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  const proc = Bun.spawn([process.execPath, ...profile, import.meta.path, kind], { stdout: "pipe", stderr: "inherit" });
  try {
    const info = await readAnnouncement<ServerInfo>(proc.stdout, kind);
    const perPoll: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      let polls = 0;
      const end = performance.now() + SECONDS * 1000;
      const before = cpuSeconds(proc.pid) * 1000;
      await Promise.all(
        info.queues.map(async (queueId) => {
          const url = `${info.url}/api/v1/events?queue_id=${queueId}&last_event_id=-1&dont_block=true`;
          while (performance.now() < end) {
            const res = await fetch(url, { headers: { authorization: info.auth } });
            if (res.status !== 200) throw new Error(`${kind}: ${res.status} ${await res.text()}`);
            await res.text();
            polls++;
          }
        }),
      );
      perPoll.push(((cpuSeconds(proc.pid) * 1000 - before) * 1000) / polls);
    }
    return perPoll;
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}

async function main() {
  console.log(`${CLIENTS} clients polling with dont_block for ${SECONDS} s, ${ROUNDS} rounds per server; server CPU µs per poll`);
  for (const [name, kind] of [
    ["bare Bun.serve", "--serve-bare"],
    ["bare Bun.serve reading Authorization", "--serve-bare-headers"],
    ["Hearth", "--serve-hearth"],
  ]) {
    const rounds = await measure(kind);
    console.log(`${name.padEnd(38)} ${rounds.map((us) => us.toFixed(1)).join("  ")}`);
  }
}
