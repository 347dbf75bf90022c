/**
 * The job's search rows (src/store/unread_rows_run.ts, search_terms.ts): on a quiet
 * server a batch's rows go in one commit, since each commit dirties a B-tree leaf per
 * distinct word and sender; while sends arrive, in commits of 100 messages, which keep
 * LMDB's writer lock free for the sends between them. Each commit moves the search
 * watermark, so its steps show the commits.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { expectSuccess, startTestServer, type TestServer } from "../kit";
import { searchWatermark } from "../../src/store/search_terms";
import { writePendingBatches } from "../../src/store/unread_rows_run";

let s: TestServer;
let channel: number;

beforeAll(async () => {
  // The server's own job waits: the test runs the batches itself.
  s = await startTestServer({ env: { HEARTH_UNREAD_ROWS_INTERVAL_MS: String(3600_000) } });
  channel = await s.createChannel("iago", "Quiet", ["hamlet", "othello"]);
  await s.server.unreadRows.drain();
});
afterAll(() => s.stop());

async function send(count: number, word: string): Promise<void> {
  for (let i = 0; i < count; i += 25) {
    await Promise.all(Array.from({ length: Math.min(25, count - i) }, (_, k) =>
      s.as("othello").post("/messages", { type: "stream", to: channel, topic: "t", content: `${word} n${i + k}` }).then(expectSuccess)));
  }
}

/**
 * Runs the pending batches, returning how far each commit that moved the search
 * watermark moved it; `afterCommit` runs after each commit, before the run goes on.
 */
async function searchSteps(oldest: number | undefined, afterCommit: (steps: readonly number[]) => Promise<void> = async () => {}): Promise<number[]> {
  const store = s.server.h.store;
  const steps: number[] = [];
  let mark = searchWatermark(store);
  await writePendingBatches(store, {
    oldest,
    commit: async (fn) => {
      const result = await store.commit(fn);
      const now = searchWatermark(store);
      if (now !== mark) steps.push(now - mark);
      mark = now;
      await afterCommit(steps);
      return result;
    },
    afterBatch: () => {},
  });
  return steps;
}

test("a quiet server's run writes a batch's search rows in one commit", async () => {
  await send(250, "calm");
  expect(await searchSteps(undefined)).toEqual([250]);
  const found = expectSuccess(await s.as("hamlet").get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow: JSON.stringify([{ operator: "search", operand: "n249" }]) }));
  expect(found.messages.map((m: any) => m.content)).toEqual(["<p>calm n249</p>"]);
}, 60_000);

test("a busy server's run starts in short commits and goes to one per batch once nothing more arrives", async () => {
  await send(700, "lull");
  // The first batch cannot know yet whether sends keep coming; nothing arrives before the second.
  expect(await searchSteps(700)).toEqual([100, 100, 100, 100, 100, 200]);
}, 60_000);

test("while messages keep arriving between batches, every commit is a short one", async () => {
  await send(700, "rush");
  const store = s.server.h.store;
  const before = searchWatermark(store);
  // The run reads the newest message ID before each batch: a message sent as the first batch ends makes the second a busy one too.
  const steps = await searchSteps(700, async (soFar) => {
    if (soFar.length === 5) await send(1, "more");
  });
  expect(steps).toEqual([100, 100, 100, 100, 100, 100, 100]);
  expect(searchWatermark(store)).toBe(before + 700);
}, 60_000);
