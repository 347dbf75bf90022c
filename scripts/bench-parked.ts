/**
 * `bun scripts/bench-polls.ts --parked`: what answering a parked poll costs, in one
 * process, Hearth's queue manager and poll route against the bare long-poll server's
 * queue code (see the usage in scripts/bench-polls.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { formatRss, RawHttpClient, readAnnouncement, rssMiB, sampleChannelMessage } from "./bench-lib";

type Answer = Response;
interface Side {
  name: string;
  /** Parks one poll per queue; resolves when every poll has its Response. */
  park(): Promise<Answer[]>;
  /** Delivers message `seq` as a send does. */
  publish(seq: number): void;
}

const number = (argv: string[], name: string, fallback: number) => {
  const i = argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(argv[i + 1]) : NaN;
  return Number.isFinite(v) && v > 0 ? v : fallback;
};

/** The message object a send publishes (both content forms, as src/actions/message_send.ts does). */
function message(seq: number) {
  return { ...sampleChannelMessage(seq), rendered_content: `<p>message ${seq}</p>` };
}

/** Hearth's QueueManager and GET /events answer, from `tree` (this checkout or another). */
async function hearthSide(tree: string, queues: number): Promise<Side> {
  const { QueueManager } = await import(`${tree}/src/events/queues.ts`);
  const { parseCapabilities } = await import(`${tree}/src/events/capabilities.ts`);
  const api = await import(`${tree}/src/api/events.ts`);
  // This checkout's poll route answers with `pollResponse(events, queue)`; an older one
  // built the fields, then the Response, in a closure per poll.
  let finish: (events: any[], queue: any) => Response;
  let perPollClosure = false;
  if (typeof api.pollResponse === "function") finish = api.pollResponse;
  else {
    const { eventsResponseFields } = await import(`${tree}/src/events/serialize.ts`);
    const { serializedResponse } = await import(`${tree}/src/http/route.ts`);
    finish = (events, queue) => serializedResponse(eventsResponseFields(events, queue.idJson));
    perPollClosure = true;
  }
  const manager = new QueueManager();
  const all: any[] = [];
  const { heapStats } = await import("bun:jsc");
  Bun.gc(true);
  const heapBefore = heapStats().heapSize;
  for (let userId = 1; userId <= queues; userId++) {
    all.push(
      manager.create({
        userId,
        eventTypes: ["message"],
        allPublicStreams: false,
        narrow: [],
        capabilities: parseCapabilities({}),
        applyMarkdown: false,
        clientGravatar: true,
        slimPresence: false,
        idleTimeoutSecs: 600,
        clientName: "bench",
      }),
    );
  }
  Bun.gc(true);
  console.log(`Hearth JavaScript heap per registered queue (no poll): ${((heapStats().heapSize - heapBefore) / queues).toFixed(0)} B`);
  const userIds = all.map((q) => q.userId);
  // A request stands in for Bun's: the hang-up watch reads its signal only after a sweep.
  const request = { signal: new AbortController().signal };
  const flags = { flags: [] as string[] };
  const ownFlags = { flags: ["read"] };
  return {
    name: "Hearth",
    park() {
      return Promise.all(
        all.map((q) => {
          // The client acknowledges every event it got: each poll parks.
          const lastId = q.lastEventId;
          if (perPollClosure) return manager.poll(q, lastId, false, () => request.signal, (events: any[]) => finish(events, q));
          return manager.poll(q, lastId, false, request, finish);
        }),
      );
    },
    publish(seq) {
      const perQueue = new Map([[all[0].id, { local_message_id: String(seq) }]]);
      manager.deliver({ type: "message", message: message(seq), flags: [] }, userIds, {
        perUser: { get: (id: number) => (id === 1 ? ownFlags : flags) },
        perQueue,
        toAllPublicStreamsQueues: true,
      });
    },
  };
}

/** The bare long-poll server's queues, as scripts/bench-events.ts serves them (content in one form, no flags per user). */
function bareSide(queues: number): Side {
  type Queued = { id: number; json: string };
  const all = Array.from({ length: queues }, () => ({ events: [] as Queued[], next: 0, waiter: null as ((body: string) => void) | null, last: -1 }));
  const body = (events: Queued[]) => `{"result":"success","msg":"","events":[${events.map((e) => `{"id":${e.id},${e.json}}`).join(",")}]}`;
  const headers = { "content-type": "application/json" };
  // The bare server's fetch: an async function awaiting the queue's promise.
  const poll = async (q: (typeof all)[number]) => {
    q.last = q.next - 1;
    while (q.events.length && q.events[0].id <= q.last) q.events.shift();
    if (q.events.length) return new Response(body(q.events), { headers });
    return new Response(await new Promise<string>((resolve) => (q.waiter = resolve)), { headers });
  };
  return {
    name: "bare",
    park: () => Promise.all(all.map(poll)),
    publish(seq) {
      const { rendered_content: _, ...plain } = message(seq);
      const json = `"type":"message","flags":[],"message":${JSON.stringify({ ...plain, content_type: "text/x-markdown" })}`;
      for (const q of all) {
        q.events.push({ id: q.next++, json });
        if (q.waiter) {
          const w = q.waiter;
          q.waiter = null;
          queueMicrotask(() => w(body(q.events)));
        }
      }
    },
  };
}

/** CPU µs of this process (user + system). */
const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/**
 * Per queue, over `messages` messages: CPU of parking a poll on each queue (the poll
 * route's work after authentication: acknowledging, parking), and from the publish
 * until every parked poll has its Response.
 */
async function fanOutCpu(side: Side, queues: number, messages: number, seq: { n: number }): Promise<{ park: number; answer: number }> {
  let parking = 0;
  let answering = 0;
  for (let i = 0; i < messages; i++) {
    const startPark = cpuUs();
    const answers = side.park();
    parking += cpuUs() - startPark;
    // Parked: the answers are built from here on.
    await Bun.sleep(0);
    const before = cpuUs();
    side.publish(seq.n++);
    const built = await answers;
    answering += cpuUs() - before;
    if (built.length !== queues) throw new Error(`${side.name}: ${built.length} answers`);
    // Each answer holds exactly this message: every poll was parked when it came.
    if (i === 0 && JSON.parse(await built[queues - 1].text()).events.length !== 1) throw new Error(`${side.name}: a poll was not parked`);
  }
  return { park: parking / messages / queues, answer: answering / messages / queues };
}

/** JavaScript heap bytes per parked poll (each queue parked, after a full collection). */
async function heapPerParkedQueue(side: Side, queues: number): Promise<{ bytes: number; parked: Promise<Answer[]> }> {
  const { heapStats } = await import("bun:jsc");
  Bun.gc(true);
  const before = heapStats().heapSize;
  const parked = side.park();
  await Bun.sleep(0);
  Bun.gc(true);
  return { bytes: (heapStats().heapSize - before) / queues, parked };
}

export async function benchParked(argv: string[]) {
  const queues = number(argv, "queues", 1000);
  const rounds = number(argv, "rounds", 5);
  const messagesPerRound = 200;
  const treeArg = argv.indexOf("--tree");
  const tree = treeArg >= 0 ? resolve(argv[treeArg + 1]) : resolve(import.meta.dir, "..");
  const hearth = await hearthSide(tree, queues);
  const bare = bareSide(queues);
  const seqs = new Map<Side, { n: number }>([
    [hearth, { n: 0 }],
    [bare, { n: 0 }],
  ]);
  console.log(`${queues} parked polls, ${messagesPerRound} messages a round, ${rounds} rounds alternating; Hearth from ${tree}`);
  // Warm-up (the JIT), unmeasured.
  for (const side of [hearth, bare]) await fanOutCpu(side, queues, messagesPerRound, seqs.get(side)!);
  const perQueue = new Map<Side, { park: number; answer: number }[]>([
    [hearth, []],
    [bare, []],
  ]);
  for (let r = 0; r < rounds; r++) {
    for (const side of r % 2 === 0 ? [hearth, bare] : [bare, hearth]) perQueue.get(side)!.push(await fanOutCpu(side, queues, messagesPerRound, seqs.get(side)!));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  for (const phase of ["park", "answer"] as const) {
    console.log(phase === "park" ? "CPU per poll parked (µs):" : "CPU per parked poll answered, from the publish until its Response (µs):");
    for (const side of [bare, hearth]) {
      const xs = perQueue.get(side)!.map((x) => x[phase]);
      console.log(`  ${side.name.padEnd(8)} ${xs.map((x) => x.toFixed(2)).join("  ")}; median ${median(xs).toFixed(2)}`);
    }
    console.log(`  ratio Hearth / bare, median of rounds: ${median(perQueue.get(hearth)!.map((x, i) => x[phase] / perQueue.get(bare)![i][phase])).toFixed(2)}`);
  }
  for (const side of [bare, hearth]) {
    const { bytes, parked } = await heapPerParkedQueue(side, queues);
    console.log(`${side.name.padEnd(8)} JavaScript heap per parked poll: ${bytes.toFixed(0)} B`);
    side.publish(seqs.get(side)!.n++);
    await parked;
  }
}

/** `--parked-rss`: a Hearth server's RSS idle, with N queues, with N parked polls. */
export async function parkedRss(argv: string[]) {
  const queues = number(argv, "queues", 1000);
  const treeArg = argv.indexOf("--tree");
  const tree = treeArg >= 0 ? resolve(argv[treeArg + 1]) : resolve(import.meta.dir, "..");
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-bench-parked-"));
  const script = join(tree, "scripts/bench-events.ts");
  const env = { ...process.env, BENCH_DATA: dataDir, BUN_CONFIG_MAX_HTTP_REQUESTS: String(queues + 64) };
  try {
    const setup = Bun.spawnSync([process.execPath, script, "--setup-hearth", "--clients", String(queues)], { env, stdout: "ignore", stderr: "inherit" });
    if (setup.exitCode !== 0) throw new Error("set-up failed");
    const proc = Bun.spawn([process.execPath, script, "--serve-hearth", "--clients", String(queues)], { env, stdout: "pipe", stderr: "ignore" });
    try {
      const info = await readAnnouncement<{ url: string; users: { email: string; key: string }[] }>(proc.stdout, "Hearth");
      const settle = async (label: string) => {
        await Bun.sleep(2000);
        console.log(`${label.padEnd(32)} ${formatRss(rssMiB(proc.pid))}`);
      };
      console.log(`Hearth from ${tree}, ${queues} users`);
      await settle("idle after start");
      const auths = info.users.slice(1, queues + 1).map((u) => "Basic " + Buffer.from(`${u.email}:${u.key}`).toString("base64"));
      const queueIds: string[] = [];
      for (const authorization of auths) {
        const res = await fetch(`${info.url}/api/v1/register`, {
          method: "POST",
          headers: { authorization, "content-type": "application/x-www-form-urlencoded" },
          body: `event_types=${encodeURIComponent('["message"]')}&fetch_event_types=%5B%5D`,
        });
        queueIds.push(((await res.json()) as { queue_id: string }).queue_id);
      }
      await settle(`${queues} queues registered`);
      const clients = queueIds.map(() => RawHttpClient.forUrl(info.url));
      const polls = clients.map((c, i) => c.get(`/api/v1/events?queue_id=${queueIds[i]}&last_event_id=-1`, { authorization: auths[i] }).catch(() => null));
      await settle(`${queues} long-polls parked`);
      clients.forEach((c) => c.close());
      await Promise.allSettled(polls);
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
