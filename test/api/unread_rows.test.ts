/**
 * Channel messages' "unread" rows are implicit when sent and written later by the
 * background job (src/actions/unread_rows.ts). Everything a client reads must be the
 * same before and after the job ran, whatever happened to the messages in between.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, startTestServer, type TestServer } from "../kit";
import { register } from "../events-kit";
import { threadNiceValues } from "../process";
import { getUserFlags, planDeferredUnreadRows, unreadWatermark, writeDeferredUnreadRows } from "../../src/store/messages";
import { startUnreadRowsJob } from "../../src/actions/unread_rows";

let s: TestServer;
let denmark: number;
let verona: number;

beforeAll(async () => {
  // The job waits for the test to run it.
  s = await startTestServer({ env: { HEARTH_UNREAD_ROWS_INTERVAL_MS: String(3600_000) } });
  denmark = await s.createChannel("iago", "Denmark", ["hamlet", "othello", "polonius"]);
  verona = await s.createChannel("iago", "Verona", ["hamlet", "othello"]);
  // Their welcome messages read: the unread state here is this file's own messages'.
  for (const who of ["hamlet", "polonius", "iago"] as const) expectSuccess(await s.as(who).post("/mark_all_as_read"));
});
afterAll(() => s.stop());

const send = async (who: "othello" | "iago" | "hamlet", to: number, topic: string, content: string) =>
  expectSuccess(await s.as(who).post("/messages", { type: "stream", to, topic, content })).id as number;

/** What clients read about unread messages and flags, per user. */
async function readable(who: "hamlet" | "polonius" | "iago") {
  const state = await register(s.as(who), { event_types: ["message", "update_message_flags"] });
  const narrow = (n: unknown[]) => s.as(who).get("/messages", { anchor: "newest", num_before: 100, num_after: 0, narrow: JSON.stringify(n) });
  const all = expectSuccess(await narrow([]));
  const unread = expectSuccess(await narrow([{ operator: "is", operand: "unread" }]));
  const firstUnread = expectSuccess(await s.as(who).get("/messages", { anchor: "first_unread", num_before: 0, num_after: 1 }));
  return {
    unread_msgs: state.unread_msgs,
    max_message_id: state.max_message_id,
    all: all.messages.map((m: any) => [m.id, m.flags]),
    unread: unread.messages.map((m: any) => m.id),
    anchor: firstUnread.anchor,
  };
}

describe("deferred unread rows", () => {
  test("reads are the same before and after the job writes the rows", async () => {
    const ids = [];
    for (let i = 0; i < 6; i++) ids.push(await send("othello", denmark, `topic ${i % 2}`, `message ${i}`));
    const mention = await send("othello", denmark, "topic 0", "@**King Hamlet** look");
    const other = await send("othello", verona, "elsewhere", "not for polonius");
    // Before the job: reading, starring, moving, deleting and unsubscribing change implicit rows.
    expectSuccess(await s.as("hamlet").post("/messages/flags", { messages: [ids[0], ids[1]], op: "add", flag: "read" }));
    expectSuccess(await s.as("hamlet").post("/messages/flags", { messages: [ids[2]], op: "add", flag: "starred" }));
    expectSuccess(await s.as("hamlet").post("/messages/flags", { messages: [ids[0]], op: "remove", flag: "read" }));
    expectSuccess(await s.as("iago").patch(`/messages/${ids[3]}`, { topic: "moved", propagate_mode: "change_one" }));
    expectSuccess(await s.as("iago").delete(`/messages/${ids[4]}`));
    expectSuccess(await s.as("polonius").post("/mark_topic_as_read", { stream_id: denmark, topic_name: "topic 1" }));

    const store = s.server.h.store;
    // The rows really are implicit at this point.
    expect(unreadWatermark(store)).toBeLessThan(ids[0]);
    expect(store.dbs.userMessageIndex.doesExist([s.users.polonius.id, "unread", ids[2]])).toBe(false);

    const before = { hamlet: await readable("hamlet"), polonius: await readable("polonius"), iago: await readable("iago") };
    // The move's notice (a Notification Bot message) is theirs too; these are the test's own.
    const own = new Set([...ids, mention, other]);
    const mine = (list: number[]) => list.filter((id) => own.has(id));
    expect(mine(before.hamlet.unread)).toEqual([ids[0], ids[2], ids[3], ids[5], mention, other]);
    expect(before.hamlet.anchor).toBe(ids[0]);
    // Polonius read "topic 1" (messages 1, 3 moved away first, 5); message 4 is gone.
    expect(mine(before.polonius.unread)).toEqual([ids[0], ids[2], ids[3], mention]);
    expect(mine(before.polonius.all.map(([id]: [number]) => id))).toEqual([ids[0], ids[1], ids[2], ids[3], ids[5], mention]);
    const moved = (before.hamlet.unread_msgs as any).streams.find((x: any) => x.topic === "moved");
    expect(mine(moved.unread_message_ids)).toEqual([ids[3]]);

    await s.server.unreadRows.drain();
    expect(unreadWatermark(store)).toBeGreaterThanOrEqual(other);
    expect(store.dbs.userMessageIndex.doesExist([s.users.polonius.id, "unread", ids[2]])).toBe(true);
    // Nothing read, deleted or moved away came back as a written row.
    expect(store.dbs.userMessageIndex.doesExist([s.users.hamlet.id, "unread", ids[1]])).toBe(false);
    expect(store.dbs.userMessageIndex.doesExist([s.users.hamlet.id, "unread", ids[4]])).toBe(false);
    expect(store.dbs.userMessageIndex.get([s.users.hamlet.id, "unread", ids[3]])).toEqual([denmark, "moved"]);

    const after = { hamlet: await readable("hamlet"), polonius: await readable("polonius"), iago: await readable("iago") };
    expect(after).toEqual(before);

    // After the job, flags change as before.
    expectSuccess(await s.as("polonius").post("/mark_all_as_read"));
    expect((await readable("polonius")).unread).toEqual([]);
  });

  test("a pending message moved where a reader lost access leaves that reader's unread state, read before and after", async () => {
    const elsinore = await s.createChannel("iago", "Elsinore", ["iago", "hamlet", "othello"], { invite_only: true });
    const id = await send("othello", denmark, "to move", "soon private");
    const store = s.server.h.store;
    expect(unreadWatermark(store)).toBeLessThan(id);
    const unreadIds = (state: any) => state.unread_msgs.streams.flatMap((x: any) => x.unread_message_ids);
    // Polonius's reads see it unread while its row is implicit...
    expect(unreadIds(await register(s.as("polonius"), { event_types: ["message", "update_message_flags"] }))).toContain(id);
    expect((await readable("polonius")).unread).toContain(id);
    // ...and not once it has moved into a private channel he is not in, before the job runs.
    expectSuccess(await s.as("iago").patch(`/messages/${id}`, { stream_id: elsinore, propagate_mode: "change_one", send_notification_to_old_thread: false, send_notification_to_new_thread: false }));
    expect(unreadWatermark(store)).toBeLessThan(id);
    expect(unreadIds(await register(s.as("polonius"), { event_types: ["message", "update_message_flags"] }))).not.toContain(id);
    expect((await readable("polonius")).unread).not.toContain(id);
    expect(unreadIds(await register(s.as("hamlet"), { event_types: ["message", "update_message_flags"] }))).toContain(id);
    await s.server.unreadRows.drain();
    expect(unreadIds(await register(s.as("polonius"), { event_types: ["message", "update_message_flags"] }))).not.toContain(id);
    expect(unreadIds(await register(s.as("hamlet"), { event_types: ["message", "update_message_flags"] }))).toContain(id);
  });

  test("a batch planned before a change checks each row again when it writes", async () => {
    const id = await send("othello", denmark, "race", "planned");
    const moved = await send("othello", denmark, "race", "will move");
    const gone = await send("othello", denmark, "race", "will go");
    const store = s.server.h.store;
    const { hamlet, polonius, cordelia } = s.users;
    // Planned while everyone had them unread; then Hamlet reads one, a message moves and one is deleted.
    const batch = planDeferredUnreadRows(store, 1000)!;
    expect(batch.lists.has(id)).toBe(true);
    const everyone = new Map([
      [hamlet.id, [id, moved, gone]],
      [polonius.id, [id, moved, gone]],
      [cordelia.id, [id]],
    ]);
    expectSuccess(await s.as("hamlet").post("/messages/flags", { messages: [id], op: "add", flag: "read" }));
    expectSuccess(await s.as("iago").patch(`/messages/${moved}`, { topic: "elsewhere", propagate_mode: "change_one" }));
    expectSuccess(await s.as("iago").delete(`/messages/${gone}`));
    await store.commit(() => writeDeferredUnreadRows(store, batch, everyone, true));
    expect(store.dbs.userMessageIndex.doesExist([hamlet.id, "unread", id])).toBe(false);
    expect(store.dbs.userMessageIndex.doesExist([polonius.id, "unread", id])).toBe(true);
    // The moved message's row points at where it is now; the deleted one has none.
    expect(store.dbs.userMessageIndex.get([polonius.id, "unread", moved])).toEqual([denmark, "elsewhere"]);
    expect(store.dbs.userMessageIndex.doesExist([polonius.id, "unread", gone])).toBe(false);
    // Cordelia was never a recipient: no row is invented for her.
    expect(getUserFlags(store, cordelia.id, id)).toBeUndefined();
    expect(getUserFlags(store, hamlet.id, id)).toBe(1);
    expect(getUserFlags(store, polonius.id, id)).toBe(0);
  });

  test("a worker that dies is replaced at the next run, which writes the rows", async () => {
    const id = await send("othello", denmark, "worker", "after a crash of the worker");
    const job = startUnreadRowsJob(s.server.h, 3600_000, new URL("../fixtures/unread-rows-worker-dies-once.ts", import.meta.url).href);
    try {
      // The first worker dies on its run: the drain ends, nothing is written.
      await job.drain();
      expect(unreadWatermark(s.server.h.store)).toBeLessThan(id);
      await job.drain();
      expect(unreadWatermark(s.server.h.store)).toBeGreaterThanOrEqual(id);
      expect(s.server.h.store.dbs.userMessageIndex.doesExist([s.users.polonius.id, "unread", id])).toBe(true);
    } finally {
      await job.stop();
    }
  });

  test("the worker thread runs at the lowest CPU priority, the server's own thread at its usual one", async () => {
    if (process.platform !== "linux") return;
    await send("othello", denmark, "priority", "for a niced worker");
    await s.server.unreadRows.drain();
    // Every server this process started has its worker; each lowered its own thread only.
    const threads = threadNiceValues(process.pid);
    expect(threads.find((t) => t.main)?.nice).toBeLessThan(19);
    expect(threads.some((t) => t.nice === 19 && t.name === "Worker")).toBe(true);
    expect(threads.filter((t) => t.nice === 19).every((t) => !t.main)).toBe(true);
  });

  test("implicit rows survive a restart, and the job finishes them there", async () => {
    const id = await send("othello", denmark, "restart", "before the restart");
    const before = await readable("polonius");
    expect(before.unread).toContain(id);
    // Stopped without running the job; the first server's stop (afterAll) removes the folder.
    await s.server.stop();
    const again = await startTestServer({ dataDir: s.dataDir, env: { HEARTH_UNREAD_ROWS_INTERVAL_MS: String(3600_000) } });
    const first = s;
    s = { ...again, users: first.users, as: (who) => again.as(typeof who === "string" ? first.users[who] : who), stop: first.stop };
    try {
      expect(unreadWatermark(again.server.h.store)).toBeLessThan(id);
      expect(await readable("polonius")).toEqual(before);
      await again.server.unreadRows.drain();
      expect(unreadWatermark(again.server.h.store)).toBe(id);
      expect(await readable("polonius")).toEqual(before);
    } finally {
      await again.stop();
    }
  });
});
