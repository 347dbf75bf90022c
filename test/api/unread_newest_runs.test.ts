/**
 * A user's newest unread runs kept in memory for `is:unread` walks (src/store/unread_runs.ts,
 * KnownRuns `newest`): each test fills them with GET /messages for `is:unread` (newest
 * 50, then paged older), writes, and reads again, against the same walk made inside a
 * transaction, which reads the stored rows and never the kept runs. Every writer of
 * runs must show in the next read: messages read, marked unread again, deleted, moved,
 * a batch of the job, a batch committed by the worker before the main thread hears of
 * it (the watermark moved, no runsChanged), and a rollback; walks past the runs kept.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, startTestServer, type TestServer } from "../kit";
import { unreadMessageIds, UNREAD_WATERMARK, unreadWatermark } from "../../src/store/unread";
import { removeRuns } from "../../src/store/unread_runs";
import { encodeRun } from "../../src/store/unread_run_encoding";

let s: TestServer;
let channel: number;
beforeAll(async () => {
  // The job waits for the test to run it.
  s = await startTestServer({ env: { HEARTH_UNREAD_ROWS_INTERVAL_MS: String(3600_000) } });
  channel = await s.createChannel("iago", "newest runs", ["othello", "hamlet"]);
});
afterAll(() => s.stop());

const drain = () => s.server.unreadRows.drain();
const hamlet = () => s.users.hamlet.id;
const store = () => s.server.h.store;
const UNREAD = JSON.stringify([{ operator: "is", operand: "unread" }]);

async function sendMany(topic: string, count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) ids.push(expectSuccess(await s.as("othello").post("/messages", { type: "stream", to: channel, topic, content: `m${i}` })).id as number);
  return ids;
}

/** Hamlet's `is:unread` IDs through GET /messages, newest first: the newest 50, then pages of `size` older (a client's load). */
async function unreadPages(size = 50): Promise<number[]> {
  const out: number[] = [];
  let anchor: number | string = "newest";
  for (;;) {
    const r = expectSuccess(await s.as("hamlet").get("/messages", { anchor, num_before: anchor === "newest" ? 50 : size, num_after: 0, narrow: UNREAD, include_anchor: anchor === "newest" }));
    const ids = (r.messages as any[]).map((m) => m.id as number).reverse();
    for (const m of r.messages as any[]) expect(m.flags).not.toContain("read");
    out.push(...ids);
    if (r.found_oldest || ids.length === 0) return out;
    anchor = ids[ids.length - 1];
  }
}

/** The same IDs read inside a transaction: the stored rows, not the kept runs. */
async function unreadStored(): Promise<number[]> {
  let ids: number[] = [];
  await store().commit(() => {
    ids = [...unreadMessageIds(store(), hamlet(), Number.MAX_SAFE_INTEGER, "older")];
  });
  return ids;
}

/** A walk from a given message down, outside any transaction (kept runs) and inside (stored rows). */
async function expectWalkFrom(from: number): Promise<void> {
  const kept = [...unreadMessageIds(store(), hamlet(), from, "older")];
  let stored: number[] = [];
  await store().commit(() => {
    stored = [...unreadMessageIds(store(), hamlet(), from, "older")];
  });
  expect(kept).toEqual(stored);
}

async function expectSame(): Promise<number[]> {
  const stored = await unreadStored();
  // The rows themselves (GET /messages drops a message read or deleted by its flags or its absence).
  expect([...unreadMessageIds(store(), hamlet(), Number.MAX_SAFE_INTEGER, "older")]).toEqual(stored);
  expect(await unreadPages()).toEqual(stored);
  expect(await unreadPages(20)).toEqual(stored);
  return stored;
}

describe("kept newest unread runs follow every writer", () => {
  test("more runs than are kept: walks from the top, from the middle and below the kept ones", async () => {
    await drain();
    // 18 runs (at most 64 IDs each, batches of 500): more than the 16 kept.
    const ids = await sendMany("many", 1100);
    await drain();
    expect(unreadWatermark(store())).toBeGreaterThanOrEqual(ids[ids.length - 1]);
    const all = await expectSame();
    for (const id of ids) expect(all).toContain(id);
    for (const from of [ids[1099], ids[1000], ids[700], ids[200], ids[0], ids[0] - 1]) await expectWalkFrom(from);
    // A walk that starts below the kept runs first, then one from the top.
    await expectWalkFrom(ids[10]);
    await expectWalkFrom(Number.MAX_SAFE_INTEGER);
  }, 120_000);

  test("messages read, marked unread again, deleted and moved", async () => {
    const ids = await sendMany("writers", 200);
    await drain();
    await expectSame();
    const picked = [ids[199], ids[150], ids[3]];
    expectSuccess(await s.as("hamlet").post("/messages/flags", { messages: picked, op: "add", flag: "read" }));
    let now = await expectSame();
    for (const id of picked) expect(now).not.toContain(id);

    expectSuccess(await s.as("hamlet").post("/messages/flags", { messages: [ids[150]], op: "remove", flag: "read" }));
    now = await expectSame();
    expect(now).toContain(ids[150]);

    for (const id of [ids[198], ids[100]]) expectSuccess(await s.as("iago").delete(`/messages/${id}`));
    now = await expectSame();
    expect(now).not.toContain(ids[198]);
    expect(now).not.toContain(ids[100]);

    expectSuccess(await s.as("iago").patch(`/messages/${ids[120]}`, { topic: "moved", propagate_mode: "change_later", send_notification_to_old_thread: false, send_notification_to_new_thread: false }));
    now = await expectSame();
    expect(now).toContain(ids[197]);
    expect(now).toContain(ids[120]);

    // Everything read, then a new batch.
    expectSuccess(await s.as("hamlet").post("/mark_all_as_read", {}));
    expect(await expectSame()).toEqual([]);
    const more = await sendMany("writers", 70);
    expect(await expectSame()).toEqual(more.slice().reverse());
    await drain();
    expect(await expectSame()).toEqual(more.slice().reverse());
   }, 60_000);

  test("a batch the worker committed before the main thread heard of it (the watermark moved)", async () => {
    await drain();
    const before = await expectSame();
    const ids = await sendMany("unheard", 10);
    // Implicit rows until the batch: read with the kept runs as they are.
    expect((await unreadPages()).slice(0, 10)).toEqual(ids.slice().reverse());
    // As the worker's last commit of a batch: Hamlet's run and the watermark, with no runsChanged on this thread.
    const db = store();
    await db.commit(() => {
      db.dbs.userMessageIndex.put([hamlet(), "unreadBatch", ids[0]], encodeRun(ids[0], ids, ids.map(() => 0)));
      db.dbs.userMessageIndex.put([hamlet(), "unreadBatchPlaces", ids[0]], [[channel, "unheard"]]);
      db.dbs.meta.put(UNREAD_WATERMARK, ids[ids.length - 1]);
    });
    const now = await expectSame();
    expect(now).toEqual([...ids.slice().reverse(), ...before]);
   }, 60_000);

  test("a rollback leaves the kept runs as committed", async () => {
    const ids = await sendMany("rollback", 100);
    await drain();
    const before = await expectSame();
    const db = store();
    await db
      .commit(() => {
        removeRuns(db, hamlet(), ids[0], Number.MAX_SAFE_INTEGER);
        expect([...unreadMessageIds(db, hamlet(), Number.MAX_SAFE_INTEGER, "older")]).not.toContain(ids[99]);
        throw new Error("rolled back");
      })
      .catch((error: Error) => expect(error.message).toBe("rolled back"));
    expect(await expectSame()).toEqual(before);
   }, 60_000);
});
