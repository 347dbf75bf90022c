#!/usr/bin/env bun
/**
 * Cold start and idle memory on a large data folder, servers started one after the
 * other, round after round (a shared machine moves each figure; compare within a round):
 *
 *   bun scripts/bench-start.ts [--messages N] [--rounds R] SERVER…
 *
 * SERVER is a compiled `hearth`, a Hearth source tree (its src/main.ts is run) or
 * `bare` (the bare Bun.serve of scripts/bench.ts). The folder (100 users, one channel
 * all subscribe to, N messages there, default 200,000; the sender has read each, the
 * others the oldest 90 %) is made once under the temp folder and reused; every start
 * runs on it (no copy). Prints per start: spawn to "listening" and to the first
 * answered GET /users/me, in wall time and in the server's CPU time (all threads: the
 * figure to compare on a loaded machine), and the RSS a second later (anonymous and
 * file-backed).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { rssMiB, spawnServer } from "./bench-lib";

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const i = args.indexOf(name);
  return i < 0 ? fallback : Number(args.splice(i, 2)[1]);
};
const MESSAGES = option("--messages", 200_000);
const ROUNDS = option("--rounds", 2);
const servers = args.map((s) => (s === "bare" ? s : resolve(s)));
if (servers.length === 0) throw new Error("usage: bun scripts/bench-start.ts [--messages N] [--rounds R] BINARY|CHECKOUT|bare…");
const BENCH = join(import.meta.dir, "bench.ts");

const populated = join(tmpdir(), `hearth-bench-start-${MESSAGES}`);
if (!existsSync(join(populated, "populated"))) await populate(populated);

for (let round = 1; round <= ROUNDS; round++) {
  for (const server of servers) console.log(JSON.stringify({ round, server, ...(await startOnce(server)) }));
}

async function startOnce(root: string) {
  // On the folder itself: a copy of a large folder per start costs more than the runs.
  const dir = populated;
  {
    const users = JSON.parse(readFileSync(join(dir, "bench-users.json"), "utf8")) as { email: string; key: string }[];
    const { proc, url, startMs } = await spawnServer(root, dir);
    const listening = performance.now();
    const startCpuMs = cpuMs(proc.pid);
    void proc.stdout.pipeTo(new WritableStream());
    const auth = "Basic " + Buffer.from(`${users[1].email}:${users[1].key}`).toString("base64");
    const res = await fetch(`${url}/api/v1/users/me`, { headers: { authorization: auth } });
    await res.text();
    if (res.status !== 200) throw new Error(`GET /users/me: ${res.status}`);
    const firstMs = startMs + performance.now() - listening;
    const firstCpuMs = cpuMs(proc.pid);
    await Bun.sleep(1000);
    const idle = rssMiB(proc.pid);
    proc.kill("SIGTERM");
    await proc.exited;
    return { startMs: Math.round(startMs), firstMs: Math.round(firstMs), startCpuMs: Math.round(startCpuMs), firstCpuMs: Math.round(firstCpuMs), idle };
  }
}

/** CPU time on all of a process's threads so far, in ms (from /proc/<pid>/task/<tid>/schedstat, in ns; stat's ticks are 10 ms). */
function cpuMs(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {} // a thread that ended meanwhile
  }
  return ns / 1e6;
}

/** The bench's organization (scripts/bench.ts --populate), then MESSAGES channel messages written in bulk as an import writes them. */
async function populate(dataDir: string) {
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const p = Bun.spawn([process.execPath, BENCH, "--populate", dataDir, "100"], { stdout: "inherit", stderr: "inherit" });
  if ((await p.exited) !== 0) throw new Error("populating failed");
  const { Store } = await import("../src/store/db");
  const { getChannelByName, putChannel } = await import("../src/store/channels");
  const { subscriberIds } = await import("../src/store/subscriptions");
  const { recipientIdFor } = await import("../src/store/messages");
  const { UNREAD_WATERMARK } = await import("../src/store/unread");
  const { insertMessagesInBulk, reserveIds } = await import("../src/store/bulk_messages");
  const store = new Store(dataDir);
  const channel = getChannelByName(store, "bench")!;
  const members = subscriberIds(store, channel.id);
  const WORDS = "castle ghost king queen poison sword crown denmark player skull madness revenge night watch letter duel rosemary fennel rue daisy violet".split(" ");
  const t0 = performance.now();
  const start = Math.floor(Date.now() / 1000) - MESSAGES;
  let first = 0;
  for (let done = 0; done < MESSAGES; done += 5000) {
    const count = Math.min(5000, MESSAGES - done);
    await store.commit(() => {
      const recipientId = recipientIdFor(store, `c:${channel.id}`);
      let id = reserveIds(store, "message", count);
      // No message has been sent yet: every one before the first holds its unread rows.
      if (!first) store.dbs.meta.put(UNREAD_WATERMARK, id - 1);
      first ||= id;
      const batch = [];
      for (let i = done; i < done + count; i++) {
        const words = Array.from({ length: 16 + (i % 17) }, (_, j) => WORDS[(i * 7 + j * 13 + ((i >> 3) ^ j)) % WORDS.length]).join(" ") + ` ${i}`;
        const sender = members[i % members.length];
        const flags = new Map(members.map((u) => [u, u === sender || i < MESSAGES * 0.9 ? 1 : 0]));
        batch.push({
          message: {
            id: id++, sender_id: sender, type: "stream" as const, channel_id: channel.id, topic: `topic ${(i >> 4) % 20}`, dm_user_ids: null,
            recipient_id: recipientId, content: words, rendered_content: `<p>${words}</p>`, timestamp: start + i, client: "bench",
            is_me_message: false, has_link: false, has_image: false, has_attachment: false, reactions: [], submessages: [], edit_history: [],
            last_edit_timestamp: null, last_moved_timestamp: null,
          },
          flags,
        });
      }
      insertMessagesInBulk(store, batch);
    });
    if (done % 50_000 === 0) Bun.gc(true);
  }
  await store.commit(() => putChannel(store, { ...getChannelByName(store, "bench")!, first_message_id: first, last_message_at: start + MESSAGES }));
  await store.close();
  writeFileSync(join(dataDir, "populated"), "");
  console.error(`populated ${dataDir} with ${MESSAGES} messages in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
