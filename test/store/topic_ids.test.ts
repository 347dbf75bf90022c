/**
 * The kept newest IDs of a topic (src/store/topic_ids.ts) against the rows themselves:
 * walks from random places, both ways, stopped early or not, interleaved, with the
 * rows changed between them (each change calling topicIdsChanged, as the index's
 * writers do), a rollback, a change read while its commit is in flight, and emptying
 * the store.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../../src/store/db";
import { StoreCache } from "../../src/store/cache";
import { topicIdsChanged, topicIdsFrom } from "../../src/store/topic_ids";

const dir = mkdtempSync(join(tmpdir(), "hearth-topic-ids-"));
const store = new Store(dir);
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const CHANNEL = 7;
const TOP = Number.MAX_SAFE_INTEGER;

/** The topic's IDs as the rows hold them, from `from` in the given direction. */
function rows(key: string, from: number, direction: "older" | "newer"): number[] {
  const all = [...store.dbs.topicMessages.getKeys({ start: [CHANNEL, key, 0], end: [CHANNEL, key, TOP] } as any)].map((k) => (k as unknown as number[])[2]);
  return direction === "older" ? all.filter((id) => id <= from).reverse() : all.filter((id) => id >= from);
}

function walk(key: string, from: number, direction: "older" | "newer", limit = Infinity): number[] {
  const out: number[] = [];
  if (limit <= 0) return out;
  for (const id of topicIdsFrom(store, CHANNEL, key, from, direction)) {
    out.push(id);
    if (out.length >= limit) break;
  }
  return out;
}

async function write(key: string, add: number[], remove: number[] = []): Promise<void> {
  await store.commit(() => {
    for (const id of add) store.dbs.topicMessages.put([CHANNEL, key, id], true);
    for (const id of remove) store.dbs.topicMessages.remove([CHANNEL, key, id]);
    topicIdsChanged(store, CHANNEL, key);
  });
}

/** A deterministic pseudo-random sequence, so a failure can be replayed. */
function random(seed: number): () => number {
  return () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
}

test("walks from anywhere, either way, stopped anywhere, give the rows, as they change", async () => {
  const next = random(24);
  let id = 1;
  // A topic longer than an entry holds, and others beside it whose rows sort around it.
  await write("t", Array.from({ length: 700 }, () => (id += 1 + Math.floor(next() * 3))));
  await write("s", [5, 50, 5000]);
  await write("tt", [3, 30, 3000]);
  const newest = () => rows("t", TOP, "older")[0];
  for (let round = 0; round < 300; round++) {
    const r = next();
    const from = r < 0.3 ? TOP : r < 0.4 ? newest() + 1 : Math.floor(next() * (newest() + 10));
    const direction = next() < 0.7 ? "older" : "newer";
    const limit = next() < 0.5 ? 50 : next() < 0.5 ? 1000 : Math.floor(next() * 100);
    expect(walk("t", from, direction, limit)).toEqual(rows("t", from, direction).slice(0, limit));
    // Two walks of the topic advanced in turn (as firstUnreadId does), each on its own.
    if (round % 25 === 0) {
      const a = topicIdsFrom(store, CHANNEL, "t", TOP, "older");
      const b = topicIdsFrom(store, CHANNEL, "t", TOP, "older");
      const got: number[][] = [[], []];
      for (let i = 0; i < 500; i++) {
        const step = (i % 3 === 0 ? b : a).next();
        if (!step.done) got[i % 3 === 0 ? 1 : 0].push(step.value);
      }
      a.return(undefined);
      b.return(undefined);
      const all = rows("t", TOP, "older");
      expect(got[0]).toEqual(all.slice(0, got[0].length));
      expect(got[1]).toEqual(all.slice(0, got[1].length));
    }
    // Now and then a change: new messages on top, some removed anywhere, one added in the middle (a move in).
    if (round % 10 === 9) {
      const existing = rows("t", TOP, "older");
      const removed = existing.filter(() => next() < 0.02);
      const middle = existing[Math.floor(next() * existing.length)] + 1;
      await write("t", [(id += 2), (id += 1), ...(existing.includes(middle) ? [] : [middle])], removed);
    }
  }
  expect(walk("s", TOP, "older")).toEqual([5000, 50, 5]);
  expect(walk("tt", 0, "newer")).toEqual([3, 30, 3000]);
  expect(walk("none", TOP, "older")).toEqual([]);
});

test("a short topic read whole is complete: later walks either way need no rows, and still follow changes", async () => {
  await write("short", [10, 20, 30]);
  expect(walk("short", TOP, "older")).toEqual([30, 20, 10]);
  expect(walk("short", 0, "newer")).toEqual([10, 20, 30]);
  expect(walk("short", 15, "older")).toEqual([10]);
  expect(walk("short", 15, "newer")).toEqual([20, 30]);
  await write("short", [5, 25]);
  expect(walk("short", 0, "newer")).toEqual([5, 10, 20, 25, 30]);
  expect(walk("short", TOP, "older")).toEqual([30, 25, 20, 10, 5]);
  await write("short", [], [30, 5]);
  expect(walk("short", TOP, "older")).toEqual([25, 20, 10]);
  expect(walk("short", 0, "newer")).toEqual([10, 20, 25]);
});

test("a rollback, a change read while its commit is in flight, and emptying the store", async () => {
  await write("r", [1, 2, 3]);
  expect(walk("r", TOP, "older")).toEqual([3, 2, 1]);
  await expect(
    store.commit(() => {
      store.dbs.topicMessages.put([CHANNEL, "r", 4], true);
      topicIdsChanged(store, CHANNEL, "r");
      // Inside the transaction: its own write, not kept.
      expect(walk("r", TOP, "older")).toEqual([4, 3, 2, 1]);
      throw new Error("rolled back");
    }),
  ).rejects.toThrow("rolled back");
  expect(walk("r", TOP, "older")).toEqual([3, 2, 1]);

  // Read after the transaction's writes but (most likely: the commit's fsync is still
  // running) before they are visible: whatever that read kept must go when they are.
  let readMeanwhile: Promise<number[]> | undefined;
  const pending = store.commit(() => {
    store.dbs.topicMessages.put([CHANNEL, "r", 9], true);
    topicIdsChanged(store, CHANNEL, "r");
    readMeanwhile = new Promise((resolve) => setImmediate(() => resolve(walk("r", TOP, "older"))));
  });
  await pending;
  await readMeanwhile;
  expect(walk("r", TOP, "older")).toEqual([9, 3, 2, 1]);

  // Emptied by a writer that bypasses the index's writers (realm data deletion).
  await store.commit(() => {
    store.dbs.topicMessages.clearSync();
    StoreCache.invalidateAll(store);
  });
  expect(walk("r", TOP, "older")).toEqual([]);
});
