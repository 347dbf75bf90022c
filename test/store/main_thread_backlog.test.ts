/**
 * A quiet server's small backlog of deferred unread and search rows is written on the
 * main thread, with no worker thread (src/store/unread_rows.ts, `mainThread`); a large
 * one, or one with many recipients, on the worker. Either way the rows are the same:
 * two servers get the same messages, one writes them where the limits say, the other
 * always on the worker, and their rows are compared key for key.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, startTestServer, type TestServer } from "../kit";
import type { Store } from "../../src/store/db";
import { searchWatermark } from "../../src/store/search_terms";
import { unreadWatermark } from "../../src/store/unread";
import { startUnreadRowsJob, type MainThreadBacklog, type UnreadRowsJob } from "../../src/store/unread_rows";

const workerUrl = new URL("../../src/store/unread_rows_worker.ts", import.meta.url).href;
const HOUR = 3600_000;
const ALWAYS_WORKER: MainThreadBacklog = { messages: 0, recipients: 0 };
const LIMITS: MainThreadBacklog = { messages: 10, recipients: 100 };

/** A job that runs only when drained, never retires its worker, and writes on the main thread within `mainThread`. */
const jobOf = (s: TestServer, mainThread: MainThreadBacklog): UnreadRowsJob =>
  startUnreadRowsJob(s.server.h.store, HOUR, workerUrl, { quietMs: 0, backlogLimit: 1000, maxWaitMs: HOUR, mainThread }, HOUR);

let limited: TestServer;
let reference: TestServer;
let channels: [number, number];

beforeAll(async () => {
  // The servers' own jobs wait: the tests run theirs.
  const env = { HEARTH_UNREAD_ROWS_INTERVAL_MS: String(HOUR) };
  [limited, reference] = await Promise.all([startTestServer({ env }), startTestServer({ env })]);
  const small = await Promise.all([limited, reference].map((s) => s.createChannel("iago", "Small", ["hamlet", "othello"])));
  expect(small[0]).toBe(small[1]);
  channels = [small[0], 0];
  const everyone = ["hamlet", "othello", "polonius", "cordelia", "shiva", "iago", "desdemona"] as const;
  const wide = await Promise.all([limited, reference].map((s) => s.createChannel("iago", "Wide", [...everyone])));
  expect(wide[0]).toBe(wide[1]);
  channels[1] = wide[0];
});
afterAll(async () => {
  await Promise.all([limited?.stop(), reference?.stop()]);
});

/** The same messages on both servers (their IDs are the same). */
async function sendBoth(channel: number, topic: string, count: number): Promise<number> {
  let last = 0;
  for (let i = 0; i < count; i++) {
    const ids = await Promise.all(
      [limited, reference].map(async (s) =>
        expectSuccess(await s.as("othello").post("/messages", { type: "stream", to: channel, topic, content: `word${i} of ${topic} @**King Hamlet**`.slice(0, i % 2 ? 14 : 99) })).id as number,
      ),
    );
    expect(ids[0]).toBe(ids[1]);
    last = ids[0];
  }
  return last;
}

/** Everything the job writes: watermarks, users' rows and runs, search rows. */
function rowsOf(store: Store) {
  const entries = (db: { getRange(options: object): Iterable<{ key: unknown; value: unknown }> }) => [...db.getRange({})].map(({ key, value }) => [key, value]);
  return {
    watermarks: [unreadWatermark(store), searchWatermark(store)],
    userMessages: entries(store.dbs.userMessages),
    userMessageIndex: entries(store.dbs.userMessageIndex),
    searchTerms: [...store.dbs.searchTerms.getKeys({})],
  };
}

/** Drains a job on each server: `limits` on the first, the worker always on the second; whether each had a worker after. */
async function drainBoth(limits: MainThreadBacklog): Promise<[boolean, boolean]> {
  const jobs = [jobOf(limited, limits), jobOf(reference, ALWAYS_WORKER)];
  try {
    await Promise.all(jobs.map((job) => job.drain()));
    return [jobs[0].workerState() !== "none", jobs[1].workerState() !== "none"];
  } finally {
    await Promise.all(jobs.map((job) => job.stop()));
  }
}

describe("where the job writes a backlog", () => {
  test("a few messages to a small channel: on the main thread, the same rows as the worker's", async () => {
    await drainBoth(ALWAYS_WORKER);
    const last = await sendBoth(channels[0], "few", 3);
    expect(unreadWatermark(limited.server.h.store)).toBeLessThan(last);
    expect(await drainBoth(LIMITS)).toEqual([false, true]);
    expect(unreadWatermark(limited.server.h.store)).toBe(last);
    expect(searchWatermark(limited.server.h.store)).toBe(last);
    expect(rowsOf(limited.server.h.store)).toEqual(rowsOf(reference.server.h.store));
  });

  test("more messages than the limit: on the worker, the same rows", async () => {
    const last = await sendBoth(channels[0], "many", LIMITS.messages + 5);
    expect(await drainBoth(LIMITS)).toEqual([true, true]);
    expect(unreadWatermark(limited.server.h.store)).toBe(last);
    expect(rowsOf(limited.server.h.store)).toEqual(rowsOf(reference.server.h.store));
  });

  test("few messages with more recipients than the limit: on the worker; within it, on the main thread", async () => {
    const last = await sendBoth(channels[1], "wide", 2);
    expect(await drainBoth({ messages: 10, recipients: 5 })).toEqual([true, true]);
    expect(unreadWatermark(limited.server.h.store)).toBe(last);
    const next = await sendBoth(channels[1], "wide again", 2);
    expect(await drainBoth({ messages: 10, recipients: 100 })).toEqual([false, true]);
    expect(unreadWatermark(limited.server.h.store)).toBe(next);
    expect(rowsOf(limited.server.h.store)).toEqual(rowsOf(reference.server.h.store));
  });

  test("a server's own job writes its first messages without starting a worker", async () => {
    // The default limits, the default schedule (a tick every 20 ms here): no drain.
    const s = await startTestServer({ env: { HEARTH_UNREAD_ROWS_INTERVAL_MS: "20" } });
    try {
      const channel = await s.createChannel("iago", "Quiet", ["hamlet", "othello"]);
      const id = expectSuccess(await s.as("othello").post("/messages", { type: "stream", to: channel, topic: "t", content: "hello" })).id as number;
      const since = Date.now();
      while ((unreadWatermark(s.server.h.store) < id || searchWatermark(s.server.h.store) < id) && Date.now() - since < 10_000) await Bun.sleep(20);
      expect(unreadWatermark(s.server.h.store)).toBe(id);
      expect(searchWatermark(s.server.h.store)).toBe(id);
      expect(s.server.unreadRows.workerState()).toBe("none");
    } finally {
      await s.stop();
    }
  });
});
