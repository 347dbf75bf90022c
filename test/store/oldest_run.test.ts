/**
 * A busy server's run of the oldest messages (src/store/unread_rows_run.ts, `oldest`)
 * writes exactly that many messages' unread and search rows, a batch of at most
 * MESSAGES_PER_BATCH at a time, however many that is: one batch per run let the
 * backlog grow without bound under sends faster than a batch per tick.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { expectSuccess, startTestServer, type TestServer } from "../kit";
import { searchWatermark } from "../../src/store/search_terms";
import { unreadWatermark } from "../../src/store/unread";
import { MESSAGES_PER_BATCH } from "../../src/store/unread_batches";
import { writePendingBatches } from "../../src/store/unread_rows_run";

let s: TestServer;
let channel: number;

beforeAll(async () => {
  // The server's own job waits: the test runs the batches itself.
  s = await startTestServer({ env: { HEARTH_UNREAD_ROWS_INTERVAL_MS: String(3600_000) } });
  channel = await s.createChannel("iago", "Busy", ["hamlet", "othello", "polonius"]);
  await s.server.unreadRows.drain();
});
afterAll(() => s.stop());

test("a run of more than a batch's oldest messages writes them all, a batch at a time, and no more", async () => {
  const store = s.server.h.store;
  const total = MESSAGES_PER_BATCH + 40;
  const oldest = MESSAGES_PER_BATCH + 20;
  for (let i = 0; i < total; i += 20) {
    await Promise.all(Array.from({ length: Math.min(20, total - i) }, (_, k) =>
      s.as("othello").post("/messages", { type: "stream", to: channel, topic: `t${(i + k) % 3}`, content: `busy word${i + k}` }).then(expectSuccess)));
  }
  const before = { unread: unreadWatermark(store), search: searchWatermark(store) };
  expect(store.lastId("message") - before.unread).toBe(total);
  expect(store.lastId("message") - before.search).toBe(total);
  let batches = 0;
  await writePendingBatches(store, { oldest, commit: (fn) => store.commit(fn), afterBatch: () => batches++ });
  expect(batches).toBe(2);
  expect(unreadWatermark(store)).toBe(before.unread + oldest);
  expect(searchWatermark(store)).toBe(before.search + oldest);
  // What it wrote reads as before: hamlet's unread messages are all of them, the newest found by a search.
  const unread = expectSuccess(await s.as("hamlet").get("/messages", { anchor: "newest", num_before: 1000, num_after: 0, narrow: JSON.stringify([{ operator: "is", operand: "unread" }, { operator: "channel", operand: channel }]) }));
  expect(unread.messages.length).toBe(total);
  const found = expectSuccess(await s.as("hamlet").get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow: JSON.stringify([{ operator: "search", operand: `word${oldest - 1}` }]) }));
  expect(found.messages.map((m: any) => m.content)).toEqual([`<p>busy word${oldest - 1}</p>`]);
}, 60_000);
