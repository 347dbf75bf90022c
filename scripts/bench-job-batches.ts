#!/usr/bin/env bun
/**
 * What the unread-rows job's batches cost per message, apart from the server and its
 * scheduling (docs/benchmarks.md, "The background job's cost"): a folder of 100 users
 * in one channel is made once with this checkout (scripts/bench.ts --populate), then
 * 1,500 channel messages in 20 topics are sent with the job held off. For each
 * CHECKOUT in turn, ROUNDS times, a copy of that folder is opened in this process and
 * its backlog written as the worker writes it (three batches of 500:
 * writeDeferredUnreadBatch, then writeSearchTermBatch, each committing on this
 * thread). Prints the process's CPU per message for each part; a round's first
 * figures include the JIT's warm-up, as a newly started worker's do.
 *
 *   bun scripts/bench-job-batches.ts [--rounds 4] CHECKOUT…   (default: this checkout)
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const MESSAGES = 1500;
const BATCH = 500;
const base = join(tmpdir(), "hearth-bench-job-batches");
const args = process.argv.slice(2);
if (args[0] === "--child") {
  await timeBatches(args[1], Number(process.env.BENCH_ROUNDS));
  process.exit(0);
}
const roundsAt = args.indexOf("--rounds");
const ROUNDS = roundsAt >= 0 ? Number(args.splice(roundsAt, 2)[1]) : 4;
const checkouts = args.length ? args.map((a) => resolve(a)) : [ROOT];

if (!existsSync(join(base, "done"))) await makeFolder();
for (const checkout of checkouts) {
  const child = Bun.spawn([process.execPath, import.meta.path, "--child", checkout], { stdout: "inherit", stderr: "inherit", env: { ...process.env, BENCH_ROUNDS: String(ROUNDS) } });
  if ((await child.exited) !== 0) throw new Error(`${checkout} failed`);
}

/** In a process of its own per checkout: that checkout's modules, loaded once. */
async function timeBatches(checkout: string, rounds: number) {
  const { Store } = await import(join(checkout, "src/store/db"));
  const { writeDeferredUnreadBatch } = await import(join(checkout, "src/store/unread_batches"));
  const { writeSearchTermBatch } = await import(join(checkout, "src/store/search_terms"));
  const cpuMs = () => {
    const c = process.cpuUsage();
    return (c.user + c.system) / 1000;
  };
  const unread: number[] = [];
  const search: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const dir = mkdtempSync(join(tmpdir(), "hearth-bench-job-batches-"));
    cpSync(base, dir, { recursive: true });
    const store = new Store(dir);
    const commit = <T>(fn: () => T) => store.commitOnThisThread(fn);
    let t = cpuMs();
    let n = 0;
    for (let i = 0; i < MESSAGES / BATCH; i++) n += await writeDeferredUnreadBatch(store, BATCH, commit);
    unread.push(Math.round(((cpuMs() - t) * 1000) / n));
    t = cpuMs();
    n = 0;
    for (let i = 0; i < MESSAGES / BATCH; i++) n += await writeSearchTermBatch(store, BATCH, commit);
    search.push(Math.round(((cpuMs() - t) * 1000) / n));
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(JSON.stringify({ checkout, unreadUsPerMessage: unread, searchUsPerMessage: search }));
}

async function makeFolder() {
  rmSync(base, { recursive: true, force: true });
  const populate = Bun.spawn([process.execPath, join(import.meta.dir, "bench.ts"), "--populate", base, "100"], { stdout: "ignore", stderr: "inherit" });
  if ((await populate.exited) !== 0) throw new Error("populating failed");
  process.env.HEARTH_UNREAD_ROWS_INTERVAL_MS = String(3600_000);
  const { startServer } = await import("../src/server");
  const users = JSON.parse(readFileSync(join(base, "bench-users.json"), "utf8")) as { email: string; key: string }[];
  const server = await startServer({ dataDir: base, host: "127.0.0.1", port: 0, externalUrl: null });
  const words = "castle ghost king queen poison sword crown denmark player skull madness revenge night watch letter duel rosemary fennel rue daisy violet".split(" ");
  const content = (seq: number) => Array.from({ length: 16 + (seq % 17) }, (_, i) => words[(seq * 7 + i * 13 + ((seq >> 3) ^ i)) % words.length]).join(" ") + ` ${seq}`;
  const send = async (i: number) => {
    const u = users[1 + (i % 50)];
    const res = await fetch(`${server.url}/api/v1/messages`, {
      method: "POST",
      headers: { authorization: "Basic " + Buffer.from(`${u.email}:${u.key}`).toString("base64"), "content-type": "application/x-www-form-urlencoded" },
      body: `type=stream&to=bench&topic=t${i % 20}&content=${encodeURIComponent(content(i))}`,
    });
    if (res.status !== 200) throw new Error(await res.text());
  };
  for (let i = 0; i < MESSAGES; i += 20) await Promise.all(Array.from({ length: 20 }, (_, k) => send(i + k)));
  await server.stop();
  await Bun.write(join(base, "done"), "");
}
