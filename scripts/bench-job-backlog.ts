#!/usr/bin/env bun
/**
 * Whether the unread-rows job keeps up with sustained sends (docs/benchmarks.md, "The
 * background job's cost"): CHECKOUT's server on a copy of bench-compare's populated
 * folder (run `bun scripts/bench-compare.ts . send 1` once to make it), 50 connections
 * sending channel messages for SECONDS, and once a second the messages past each of
 * the job's watermarks (search rows / unread rows), read from the folder by this
 * process. Prints the send rate and those counts, and the job's worker thread's CPU per
 * message it wrote meanwhile (its CPU over the run divided by the mean advance of the two
 * watermarks): bench-compare's per-send figure counts only the work done inside its
 * window, which a job that keeps up better does more of.
 *
 *   bun scripts/bench-job-backlog.ts CHECKOUT [seconds]
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../src/store/db";
import { searchWatermark } from "../src/store/search_terms";
import { unreadWatermark } from "../src/store/unread";
import { RawHttpClient, spawnServer, threadCpuSeconds } from "./bench-lib";

const [root, secs = "10"] = process.argv.slice(2);
if (!root) throw new Error("usage: bun scripts/bench-job-backlog.ts CHECKOUT [seconds]");
const populated = join(tmpdir(), "hearth-bench-compare-populated");
if (!existsSync(join(populated, "bench-users.json"))) throw new Error(`${populated} is missing: run bun scripts/bench-compare.ts . send 1 once`);
const dir = mkdtempSync(join(tmpdir(), "hearth-bench-job-backlog-"));
cpSync(populated, dir, { recursive: true });
const users = JSON.parse(readFileSync(join(dir, "bench-users.json"), "utf8")) as { email: string; key: string }[];
const basic = (u: { email: string; key: string }) => "Basic " + Buffer.from(`${u.email}:${u.key}`).toString("base64");
const { proc, url } = await spawnServer(root, dir);
void proc.stdout.pipeTo(new WritableStream());
const store = new Store(dir);
const workerCpu = () => threadCpuSeconds(proc.pid, (name) => name).get("Worker") ?? 0;
const marks = () => ({ cpu: workerCpu(), search: searchWatermark(store), unread: unreadWatermark(store) });
const before = marks();
let sending = true;
let sent = 0;
const samples = (async () => {
  const out: string[] = [];
  while (sending) {
    await Bun.sleep(1000);
    const newest = store.lastId("message");
    out.push(`${newest - searchWatermark(store)}/${newest - unreadWatermark(store)}`);
  }
  return out;
})();
const end = Date.now() + Number(secs) * 1000;
await Promise.all(Array.from({ length: 50 }, async (_, k) => {
  const c = RawHttpClient.forUrl(url);
  for (let i = k; Date.now() < end; i += 50) {
    const body = `type=stream&to=bench&topic=${encodeURIComponent(`topic ${(i >> 4) % 20}`)}&content=${encodeURIComponent(`castle ghost king queen ${i} poison sword crown`)}`;
    const r = await c.request("POST", "/api/v1/messages", { authorization: basic(users[i % users.length]), "content-type": "application/x-www-form-urlencoded" }, body);
    if (r.status !== 200) throw new Error(r.body);
    sent++;
  }
  c.close();
}));
sending = false;
const after = marks();
const written = (after.search - before.search + after.unread - before.unread) / 2;
const workerUsPerMessage = Math.round((1e6 * (after.cpu - before.cpu)) / written);
console.log(JSON.stringify({ root, sendPerSecond: Math.round(sent / Number(secs)), pendingEachSecond: await samples, written, workerUsPerMessage }));
proc.kill("SIGTERM");
await proc.exited;
await store.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
