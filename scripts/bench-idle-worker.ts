#!/usr/bin/env bun
/**
 * Idle memory of a server once its background work is done: the unread-rows job's
 * worker thread (src/store/unread_rows.ts) starts with the first deferred rows to write
 * and is retired after a while idle.
 *
 *   bun scripts/bench-idle-worker.ts [--rounds 2] [--wait 33] [--on-worker] [BINARY…]   (default: dist/hearth)
 *
 * Five messages are a backlog the job writes on the main thread, with no worker;
 * `--on-worker` makes the servers write every backlog on the worker
 * (HEARTH_UNREAD_ROWS_ALWAYS_ON_WORKER=1), to measure the worker's retirement.
 *
 * For each round and binary, alternating: a fresh data folder (scripts/bench.ts
 * --populate, 10 users in one channel), the server started on it, RSS 1 s after start,
 * five messages sent over HTTP, RSS 3 s later (the worker has run) and WAIT seconds
 * after the sends (past the default retire delay: the worker is gone if it retires),
 * with the process's thread count beside each.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { formatRss, readLineMatching, rssMiB } from "./bench-lib";

const ROOT = resolve(import.meta.dir, "..");
const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const [, value] = args.splice(i, 2);
  return Number(value) || fallback;
};
const onWorker = args.includes("--on-worker");
if (onWorker) args.splice(args.indexOf("--on-worker"), 1);
const ROUNDS = option("rounds", 2);
const WAIT_S = option("wait", 33);
const binaries = args.length ? args.map((b) => resolve(b)) : [join(ROOT, "dist", "hearth")];

const threads = (pid: number) => readdirSync(`/proc/${pid}/task`).length;
const sample = (pid: number) => `${formatRss(rssMiB(pid))}, ${threads(pid)} threads`;

async function measure(binary: string): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-idle-"));
  try {
    const populate = Bun.spawn([process.execPath, join(ROOT, "scripts", "bench.ts"), "--populate", dataDir, "10"], { stdout: "ignore", stderr: "inherit" });
    if ((await populate.exited) !== 0) throw new Error("populating the data folder failed");
    const users = JSON.parse(readFileSync(join(dataDir, "bench-users.json"), "utf8")) as { email: string; key: string }[];
    const env = onWorker ? { ...process.env, HEARTH_UNREAD_ROWS_ALWAYS_ON_WORKER: "1" } : process.env;
    const proc = Bun.spawn([binary, "serve", "--data", dataDir, "--port", "0", "--host", "127.0.0.1"], { env, stdout: "pipe", stderr: "inherit", stdin: "ignore" });
    try {
      const line = await readLineMatching(proc.stdout, "hearth", (l) => l.includes(" is listening on "));
      void proc.stdout.pipeTo(new WritableStream());
      const url = line.slice(line.indexOf(" is listening on ") + 17).trim();
      await Bun.sleep(1000);
      const afterStart = sample(proc.pid);
      for (let i = 0; i < 5; i++) {
        const u = users[i % users.length];
        const res = await fetch(`${url}/api/v1/messages`, {
          method: "POST",
          headers: { authorization: "Basic " + Buffer.from(`${u.email}:${u.key}`).toString("base64"), "content-type": "application/x-www-form-urlencoded" },
          body: `type=stream&to=bench&topic=idle&content=${encodeURIComponent(`message ${i} to measure idle memory`)}`,
        });
        if (res.status !== 200) throw new Error(await res.text());
      }
      await Bun.sleep(3000);
      const afterRun = sample(proc.pid);
      await Bun.sleep(WAIT_S * 1000 - 3000);
      return [afterStart, afterRun, sample(proc.pid)];
    } finally {
      proc.kill();
      await proc.exited;
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

for (let round = 1; round <= ROUNDS; round++) {
  for (const binary of binaries) {
    const [afterStart, afterRun, idle] = await measure(binary);
    console.log(`round ${round} ${binary}\n  1 s after start:        ${afterStart}\n  3 s after 5 sends:      ${afterRun}\n  ${WAIT_S} s after the sends:    ${idle}`);
  }
}
