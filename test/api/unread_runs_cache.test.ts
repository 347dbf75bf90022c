/**
 * The decoded unread runs kept in memory per user (src/store/unread_runs.ts, KnownRuns):
 * each test reads a reader's topic through GET /messages and through the store's
 * lookups (filling the kept runs), writes, then reads again; every writer of runs must
 * show in the next read: a message read, marked unread again, moved, deleted, and a
 * new batch written by the background job.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, startTestServer, type TestServer } from "../kit";
import { hasUnreadRow, unreadWatermark, writtenUnreadLocation } from "../../src/store/unread";
import { getUserFlags } from "../../src/store/user_messages";
import { removeRuns } from "../../src/store/unread_runs";

let s: TestServer;
let channel: number;
beforeAll(async () => {
  // The job waits for the test to run it.
  s = await startTestServer({ env: { HEARTH_UNREAD_ROWS_INTERVAL_MS: String(3600_000) } });
  channel = await s.createChannel("iago", "kept runs", ["othello", "hamlet"]);
});
afterAll(() => s.stop());

const drain = () => s.server.unreadRows.drain();
const hamlet = () => s.users.hamlet.id;
const store = () => s.server.h.store;

async function sendMany(topic: string, count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) ids.push(expectSuccess(await s.as("othello").post("/messages", { type: "stream", to: channel, topic, content: `m${i}` })).id as number);
  return ids;
}

/** Hamlet's flags for a topic's messages, newest 50 and then the rest, as a client loads it. */
async function topicFlags(topic: string): Promise<Map<number, string[]>> {
  const narrow = JSON.stringify([{ operator: "channel", operand: channel }, { operator: "topic", operand: topic }]);
  const out = new Map<number, string[]>();
  let anchor: number | string = "newest";
  for (;;) {
    const r = expectSuccess(await s.as("hamlet").get("/messages", { anchor, num_before: 50, num_after: 0, narrow, include_anchor: anchor === "newest" }));
    for (const m of r.messages as any[]) out.set(m.id, [...m.flags].sort());
    if (r.found_oldest || r.messages.length === 0) return out;
    anchor = r.messages[0].id;
  }
}

/** Reads every message's unread state through the store's lookups (outside any transaction: the kept runs serve them). */
const unreadInStore = (ids: number[]) => ids.map((id) => hasUnreadRow(store(), hamlet(), id));

/** A topic of more than two runs' worth (64 each) whose rows the job has written as runs, read once to fill the kept runs. */
async function topicInRuns(topic: string): Promise<number[]> {
  await drain();
  const ids = await sendMany(topic, 150);
  await drain();
  expect(unreadWatermark(store())).toBeGreaterThanOrEqual(ids[ids.length - 1]);
  // In runs, no written rows.
  for (const id of ids) expect(store().dbs.userMessageIndex.doesExist([hamlet(), "unread", id])).toBe(false);
  expect(unreadInStore(ids).every(Boolean)).toBe(true);
  const flags = await topicFlags(topic);
  expect([...flags.values()].every((f) => !f.includes("read"))).toBe(true);
  return ids;
}

describe("kept unread runs follow every writer", () => {
  test("a message read, then marked unread again", async () => {
    const ids = await topicInRuns("read");
    const picked = [ids[3], ids[70], ids[140]];
    expectSuccess(await s.as("hamlet").post("/messages/flags", { messages: picked, op: "add", flag: "read" }));
    expect(unreadInStore(picked)).toEqual([false, false, false]);
    expect(unreadInStore([ids[2], ids[71], ids[141]])).toEqual([true, true, true]);
    for (const id of picked) expect(writtenUnreadLocation(store(), hamlet(), id)).toBeUndefined();
    let flags = await topicFlags("read");
    for (const id of picked) expect(flags.get(id)).toContain("read");
    expect(flags.get(ids[4])).not.toContain("read");

    expectSuccess(await s.as("hamlet").post("/messages/flags", { messages: picked, op: "remove", flag: "read" }));
    expect(unreadInStore(picked)).toEqual([true, true, true]);
    expect(getUserFlags(store(), hamlet(), ids[70])).toBe(0);
    flags = await topicFlags("read");
    for (const id of picked) expect(flags.get(id)).not.toContain("read");
  });

  test("messages moved to another topic", async () => {
    const ids = await topicInRuns("before move");
    for (const id of [ids[10], ids[100]]) expect(writtenUnreadLocation(store(), hamlet(), id)).toEqual([channel, "before move"]);
    expectSuccess(await s.as("iago").patch(`/messages/${ids[100]}`, { topic: "after move", propagate_mode: "change_later", send_notification_to_old_thread: false, send_notification_to_new_thread: false }));
    expect(writtenUnreadLocation(store(), hamlet(), ids[10])).toEqual([channel, "before move"]);
    for (const id of [ids[100], ids[149]]) expect(writtenUnreadLocation(store(), hamlet(), id)).toEqual([channel, "after move"]);
    expect(unreadInStore(ids).every(Boolean)).toBe(true);
    const moved = await topicFlags("after move");
    expect([...moved.keys()].sort((a, b) => a - b)).toEqual(ids.slice(100));
    expect([...moved.values()].every((f) => !f.includes("read"))).toBe(true);
    const register = expectSuccess(await s.as("hamlet").post("/register", { event_types: JSON.stringify(["message"]), fetch_event_types: JSON.stringify(["message", "update_message_flags"]) }));
    const unreadAfter = register.unread_msgs.streams.find((x: any) => x.stream_id === channel && x.topic === "after move");
    expect(unreadAfter.unread_message_ids).toEqual(ids.slice(100));
  });

  test("messages deleted", async () => {
    const ids = await topicInRuns("delete");
    const gone = [ids[0], ids[64], ids[65], ids[149]];
    for (const id of gone) expectSuccess(await s.as("iago").delete(`/messages/${id}`));
    expect(unreadInStore(gone)).toEqual([false, false, false, false]);
    for (const id of gone) expect(getUserFlags(store(), hamlet(), id)).toBeUndefined();
    expect(unreadInStore([ids[1], ids[63], ids[66], ids[148]])).toEqual([true, true, true, true]);
    const flags = await topicFlags("delete");
    expect(flags.size).toBe(ids.length - gone.length);
    for (const id of gone) expect(flags.has(id)).toBe(false);
  });

  test("a new batch written by the job, and reads after it", async () => {
    const ids = await topicInRuns("batches");
    const more = await sendMany("batches", 80);
    // Implicit until the job runs.
    expect(unreadWatermark(store())).toBeLessThan(more[0]);
    expect(unreadInStore([ids[149], ...more]).every(Boolean)).toBe(true);
    await drain();
    expect(unreadWatermark(store())).toBeGreaterThanOrEqual(more[more.length - 1]);
    expect(unreadInStore([...ids, ...more]).every(Boolean)).toBe(true);
    expect(writtenUnreadLocation(store(), hamlet(), more[79])).toEqual([channel, "batches"]);
    // A read in the new batch's runs, after they were kept.
    expectSuccess(await s.as("hamlet").post("/messages/flags", { messages: [more[5], ids[149]], op: "add", flag: "read" }));
    expect(unreadInStore([more[5], ids[149], more[6], ids[148]])).toEqual([false, false, true, true]);
    const flags = await topicFlags("batches");
    expect(flags.size).toBe(ids.length + more.length);
    expect(flags.get(more[5])).toContain("read");
    expect(flags.get(more[6])).not.toContain("read");
  });

  test("reads inside a transaction see its writes, and a rollback leaves the kept runs as committed", async () => {
    const ids = await topicInRuns("rollback");
    const db = store();
    const user = hamlet();
    // The runs holding the first messages removed inside a transaction that then fails.
    await db
      .commit(() => {
        removeRuns(db, user, 0, ids[5]);
        expect(hasUnreadRow(db, user, ids[5])).toBe(false);
        throw new Error("rolled back");
      })
      .catch((error: Error) => expect(error.message).toBe("rolled back"));
    expect(unreadInStore(ids.slice(0, 10)).every(Boolean)).toBe(true);
  });
});
