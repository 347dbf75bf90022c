#!/usr/bin/env bun
/**
 * What writing a backlog of deferred unread and search rows costs on the main thread
 * against the worker (src/store/unread_rows.ts, `mainThread`): for each backlog size,
 * a fresh folder (scripts/bench.ts --populate, USERS users in one channel, their
 * welcome messages), the server from source with its own job waiting, N channel
 * messages sent, then one drain of a job that writes on the main thread and, on a
 * second identical folder, of one that writes on the worker. Prints the drain's wall
 * time, the process's CPU time (all threads) and the longest the event loop was held
 * (the largest gap between 1 ms timer callbacks).
 *
 *   bun scripts/bench-inline-rows.ts [--users 100] [N…]   (default N: 1 20 100 500)
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const args = process.argv.slice(2);
const usersAt = args.indexOf("--users");
const USERS = usersAt >= 0 ? Number(args.splice(usersAt, 2)[1]) : 100;
const sizes = args.length ? args.map(Number) : [1, 20, 100, 500];
process.env.HEARTH_UNREAD_ROWS_INTERVAL_MS = String(3600_000);
const { startServer } = await import("../src/server");
const { startUnreadRowsJob } = await import("../src/store/unread_rows");
const workerUrl = new URL("../src/store/unread_rows_worker.ts", import.meta.url).href;

async function measure(n: number, where: "main thread" | "worker") {
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-inline-"));
  try {
    const populate = Bun.spawn([process.execPath, join(ROOT, "scripts", "bench.ts"), "--populate", dataDir, String(USERS)], { stdout: "ignore", stderr: "inherit" });
    if ((await populate.exited) !== 0) throw new Error("populating failed");
    const users = JSON.parse(readFileSync(join(dataDir, "bench-users.json"), "utf8")) as { email: string; key: string }[];
    const server = await startServer({ dataDir, host: "127.0.0.1", port: 0, externalUrl: null });
    try {
      // The welcome messages first, on the worker: the backlog measured is the N sends.
      const warm = startUnreadRowsJob(server.h.store, 3600_000, workerUrl, { quietMs: 0, backlogLimit: 1000, maxWaitMs: 3600_000, mainThread: { messages: 0, recipients: 0 } });
      await warm.drain();
      await warm.stop();
      const auth = "Basic " + Buffer.from(`${users[1].email}:${users[1].key}`).toString("base64");
      for (let i = 0; i < n; i++) {
        const res = await fetch(`${server.url}/api/v1/messages`, {
          method: "POST",
          headers: { authorization: auth, "content-type": "application/x-www-form-urlencoded" },
          body: `type=stream&to=bench&topic=t${i % 5}&content=${encodeURIComponent(`message ${i} with a few words to index for the search rows`)}`,
        });
        if (res.status !== 200) throw new Error(await res.text());
      }
      const mainThread = where === "worker" ? { messages: 0, recipients: 0 } : { messages: 1e9, recipients: 1e9 };
      const job = startUnreadRowsJob(server.h.store, 3600_000, workerUrl, { quietMs: 0, backlogLimit: 1e9, maxWaitMs: 3600_000, mainThread }, 3600_000);
      let last = performance.now();
      let longest = 0;
      const lag = setInterval(() => {
        const now = performance.now();
        longest = Math.max(longest, now - last);
        last = now;
      }, 1);
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      await job.drain();
      const wall = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      clearInterval(lag);
      await job.stop();
      return { n, where, wallMs: Math.round(wall), cpuMs: Math.round((cpu.user + cpu.system) / 1000), longestHoldMs: Math.round(longest) };
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

for (const n of sizes) for (const where of ["main thread", "worker"] as const) console.log(JSON.stringify(await measure(n, where)));
process.exit(0);
