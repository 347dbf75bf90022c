/**
 * The unread-rows job retires its worker thread once idle and starts another for the
 * next run (src/store/unread_rows.ts). Spawning and retiring must leak nothing native:
 * LMDB's reader table (a fixed number of slots for the whole process), file
 * descriptors, memory; and no run may be lost to a retirement under way.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { expectSuccess, startTestServer, type TestServer } from "../kit";
import { startUnreadRowsJob, type UnreadRowsJob } from "../../src/store/unread_rows";
import { unreadWatermark } from "../../src/store/unread";
import { searchWatermark } from "../../src/store/search_terms";

let s: TestServer;
let channel: number;
const workerUrl = new URL("../../src/store/unread_rows_worker.ts", import.meta.url).href;
// Runs at once when asked, never waiting for quiet, always on the worker (however
// small the backlog); a worker idle for a tick retires.
const EAGER = { quietMs: 0, backlogLimit: 1000, maxWaitMs: 0, mainThread: { messages: 0, recipients: 0 } };
const TICK_MS = 5;

beforeAll(async () => {
  // The server's own job waits: the tests run theirs.
  s = await startTestServer({ env: { HEARTH_UNREAD_ROWS_INTERVAL_MS: String(3600_000) } });
  channel = await s.createChannel("iago", "Retirements", ["hamlet", "othello"]);
  await s.server.unreadRows.drain();
});
afterAll(() => s.stop());

const send = async (content: string) =>
  expectSuccess(await s.as("othello").post("/messages", { type: "stream", to: channel, topic: "cycles", content })).id as number;
const written = (id: number) => unreadWatermark(s.server.h.store) >= id && searchWatermark(s.server.h.store) >= id;

/** This process's slots in LMDB's reader table (readerList lists each, idle ones with txnid "-"). */
function readerSlotsInUse(): number {
  const list = (s.server.h.store.root as unknown as { readerList(): string }).readerList();
  return list.split("\n").filter((line) => /^\s*\d+\s+\S+\s+\S+\s*$/.test(line) && Number(line.trim().split(/\s+/)[0]) === process.pid).length;
}
const openFds = () => readdirSync("/proc/self/fd").length;
const rssMiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))![1]) / 1024;

/** Waits (turn by turn, so as not to miss a short state) until the job's worker is in `state`. */
async function until(job: UnreadRowsJob, state: "none" | "alive" | "retiring", withinMs = 10_000): Promise<void> {
  const since = Date.now();
  while (job.workerState() !== state) {
    if (Date.now() - since > withinMs) throw new Error(`the worker never reached "${state}" (it is "${job.workerState()}")`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Waits turn by turn while the worker is alive; whether its retirement was caught under way (it may be done by then). */
async function retirementStarts(job: UnreadRowsJob): Promise<boolean> {
  const since = Date.now();
  while (job.workerState() === "alive" && Date.now() - since < 10_000) await new Promise((resolve) => setImmediate(resolve));
  return job.workerState() === "retiring";
}

describe("the job's worker", () => {
  test("retires when idle and a new one writes the next batch", async () => {
    const job = startUnreadRowsJob(s.server.h.store, TICK_MS, workerUrl, EAGER, 0);
    try {
      expect(job.workerState()).toBe("none");
      const id = await send("first");
      await job.drain();
      expect(written(id)).toBe(true);
      await until(job, "none");
      const next = await send("second");
      await job.drain();
      expect(written(next)).toBe(true);
    } finally {
      await job.stop();
    }
    expect(job.workerState()).toBe("none");
  });

  test("a drain asked during a retirement waits for it and then runs on a new worker", async () => {
    const job = startUnreadRowsJob(s.server.h.store, TICK_MS, workerUrl, EAGER, 0);
    let caughtRetiring = 0;
    try {
      // A retirement lasts a round trip to the worker: most rounds catch it under way,
      // the others drain after it; no run may be lost either way.
      for (let round = 0; round < 30 && caughtRetiring < 5; round++) {
        const id = await send(`drain during retirement ${round}`);
        await job.drain();
        if (await retirementStarts(job)) caughtRetiring++;
        const next = await send(`after it ${round}`);
        await job.drain();
        expect(written(id) && written(next)).toBe(true);
      }
    } finally {
      await job.stop();
    }
    expect(caughtRetiring).toBeGreaterThan(0);
  });

  test("a stop during a retirement waits for it; nothing is left running", async () => {
    for (let attempt = 0; attempt < 30; attempt++) {
      const job = startUnreadRowsJob(s.server.h.store, TICK_MS, workerUrl, EAGER, 0);
      const id = await send(`stop during retirement ${attempt}`);
      await job.drain();
      expect(written(id)).toBe(true);
      const caught = await retirementStarts(job);
      await job.stop();
      expect(job.workerState()).toBe("none");
      // A drain after the stop does nothing and does not hang.
      await job.drain();
      if (caught) return;
    }
    throw new Error("no stop came during a retirement in 30 attempts");
  });

  test("a tick's run after a retirement is not lost (no drain)", async () => {
    const job = startUnreadRowsJob(s.server.h.store, TICK_MS, workerUrl, EAGER, 0);
    try {
      const id = await send("before");
      await job.drain();
      await retirementStarts(job);
      const next = await send("sent while it retires (or after)");
      const since = Date.now();
      while (!written(next) && Date.now() - since < 10_000) await Bun.sleep(5);
      expect(written(id) && written(next)).toBe(true);
    } finally {
      await job.stop();
    }
  });

  test(
    "150 spawn and retire cycles, each writing a batch, leave reader slots, file descriptors and memory flat",
    async () => {
      const job = startUnreadRowsJob(s.server.h.store, TICK_MS, workerUrl, EAGER, 0);
      const cycle = async (i: number) => {
        const id = await send(`cycle ${i}`);
        await job.drain();
        expect(written(id)).toBe(true);
        await until(job, "none");
      };
      try {
        // The first cycles load what the rest reuse (module code, lmdb-js's native side).
        for (let i = 0; i < 10; i++) await cycle(i);
        Bun.gc(true);
        const before = { readers: readerSlotsInUse(), fds: openFds(), rss: rssMiB() };
        for (let i = 10; i < 160; i++) await cycle(i);
        Bun.gc(true);
        const after = { readers: readerSlotsInUse(), fds: openFds(), rss: rssMiB() };
        console.log(
          `after 10 cycles: ${before.readers} reader slots, ${before.fds} fds, RSS ${before.rss.toFixed(1)} MiB; ` +
            `after 150 more: ${after.readers} reader slots, ${after.fds} fds, RSS ${after.rss.toFixed(1)} MiB ` +
            `(${((after.rss - before.rss) / 150).toFixed(3)} MiB a cycle)`,
        );
        // A slot left per retired worker would be 150 more, past the table's 126.
        expect(after.readers).toBeLessThanOrEqual(before.readers + 2);
        expect(after.fds).toBeLessThanOrEqual(before.fds + 5);
        // Generous: a worker's heap kept per cycle would be gigabytes.
        expect(after.rss - before.rss).toBeLessThan(300);
        // The store still reads and writes, on this thread and on a new worker.
        const id = await send("after the cycles");
        await job.drain();
        expect(written(id)).toBe(true);
        expect(expectSuccess(await s.as("hamlet").get("/messages", { anchor: id, num_before: 0, num_after: 0 })).messages[0].id).toBe(id);
      } finally {
        await job.stop();
      }
    },
    180_000,
  );
});
