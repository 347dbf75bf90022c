/**
 * Channel messages' "unread" rows are implicit when sent and written later by the
 * background job (src/store/unread_rows.ts). Everything a client reads must be the
 * same before and after the job ran, whatever happened to the messages in between.
 */
import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { expectSuccess, startTestServer, type TestServer } from "../kit";
import { register } from "../kit/events";
import { threadNiceValues } from "../kit/process";
import { unreadWatermark, writtenUnreadLocation } from "../../src/store/unread";
import { planDeferredUnreadRows, writeDeferredUnreadRows } from "../../src/store/unread_batches";
import { getUserFlags } from "../../src/store/user_messages";
import { DEFAULT_UNREAD_ROWS_DEFERRAL, startUnreadRowsJob } from "../../src/store/unread_rows";

let s: TestServer;
let denmark: number;
let verona: number;

beforeAll(async () => {
  // The job waits for the test to run it, and runs on its worker however small the backlog.
  s = await startTestServer({ env: { HEARTH_UNREAD_ROWS_INTERVAL_MS: String(3600_000), HEARTH_UNREAD_ROWS_ALWAYS_ON_WORKER: "1" } });
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

describe("when the job runs", () => {
  const workerUrl = new URL("../../src/store/unread_rows_worker.ts", import.meta.url).href;
  const HOUR = 3600_000;
  const watermark = () => unreadWatermark(s.server.h.store);
  /** Waits up to 10 s for the job to pass `id`; how long that took (ms), or null. */
  async function passes(id: number, since: number): Promise<number | null> {
    while (Date.now() - since < 10_000) {
      if (watermark() >= id) return Date.now() - since;
      await Bun.sleep(10);
    }
    return null;
  }
  async function withJob(deferral: { quietMs: number; backlogLimit: number; maxWaitMs: number }, body: () => Promise<void>) {
    await s.server.unreadRows.drain();
    const job = startUnreadRowsJob(s.server.h.store, 20, workerUrl, deferral);
    try {
      await body();
    } finally {
      await job.stop();
      // The tests below read the unread state of their own messages only.
      for (const who of ["hamlet", "polonius", "iago"] as const) expectSuccess(await s.as(who).post("/mark_all_as_read"));
    }
  }

  test("not while messages keep coming, nor before they have waited long or piled up; drain runs at once", async () => {
    await withJob({ quietMs: HOUR, backlogLimit: 1000, maxWaitMs: HOUR }, async () => {
      const id = await send("othello", denmark, "busy", "the job waits");
      await Bun.sleep(400); // twenty ticks
      expect(watermark()).toBeLessThan(id);
      await s.server.unreadRows.drain();
      expect(watermark()).toBeGreaterThanOrEqual(id);
    });
  });

  test("once no message has come for the quiet time", async () => {
    await withJob({ quietMs: 300, backlogLimit: 1000, maxWaitMs: HOUR }, async () => {
      const sentAt = Date.now();
      const id = await send("othello", denmark, "quiet", "written once the server is quiet");
      const took = await passes(id, sentAt);
      expect(took).not.toBeNull();
      expect(took!).toBeGreaterThanOrEqual(300);
    });
  });

  test("busy past the backlog limit: the oldest messages beyond it, not the whole backlog", async () => {
    const store = s.server.h.store;
    await s.server.unreadRows.drain();
    const behind = store.lastId("message") - watermark();
    await withJob({ quietMs: HOUR, backlogLimit: behind + 3, maxWaitMs: HOUR }, async () => {
      const one = await send("othello", denmark, "backlog", "one");
      const two = await send("othello", denmark, "backlog", "two");
      await Bun.sleep(200);
      expect(watermark()).toBeLessThan(one);
      const three = await send("othello", denmark, "backlog", "three");
      expect(await passes(one, Date.now())).not.toBeNull();
      await Bun.sleep(200);
      expect(watermark()).toBeLessThan(three);
      const four = await send("othello", denmark, "backlog", "four");
      expect(await passes(two, Date.now())).not.toBeNull();
      await Bun.sleep(200);
      expect(watermark()).toBeLessThan(four);
    });
  });

  test("a tick that throws is logged, and the job goes on at the next tick", async () => {
    const store = s.server.h.store;
    const lastId = store.lastId;
    let failures = 0;
    const logged = spyOn(console, "error").mockImplementation(() => {});
    try {
      await withJob({ quietMs: 50, backlogLimit: 1000, maxWaitMs: HOUR }, async () => {
        // Only the job's ticks read the store meanwhile: no request is under way.
        store.lastId = (sequence: string) => {
          if (failures < 3) {
            failures++;
            throw new Error("a store read failed");
          }
          return lastId.call(store, sequence);
        };
        const since = Date.now();
        while (failures < 3 && Date.now() - since < 5_000) await Bun.sleep(10);
        expect(failures).toBe(3);
        expect(logged.mock.calls.filter(([text]) => String(text).includes("tick failed")).length).toBe(3);
        // The server still answers, and the job still writes rows.
        const sentAt = Date.now();
        const id = await send("othello", denmark, "after a failed tick", "still served");
        expect(await passes(id, sentAt)).not.toBeNull();
      });
    } finally {
      store.lastId = lastId;
      logged.mockRestore();
    }
  });

  test("once rows have waited the longest wait, busy or not", async () => {
    await withJob({ quietMs: HOUR, backlogLimit: 1000, maxWaitMs: 300 }, async () => {
      const sentAt = Date.now();
      const id = await send("othello", denmark, "longest", "written after the longest wait");
      const took = await passes(id, sentAt);
      expect(took).not.toBeNull();
      expect(took!).toBeGreaterThanOrEqual(300);
    });
  });
});

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
    expect(writtenUnreadLocation(store, s.users.polonius.id, ids[2])).toBeUndefined();

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
    expect(writtenUnreadLocation(store, s.users.polonius.id, ids[2])).toBeDefined();
    // Nothing read, deleted or moved away came back as a written row.
    expect(writtenUnreadLocation(store, s.users.hamlet.id, ids[1])).toBeUndefined();
    expect(writtenUnreadLocation(store, s.users.hamlet.id, ids[4])).toBeUndefined();
    expect(writtenUnreadLocation(store, s.users.hamlet.id, ids[3])).toEqual([denmark, "moved"]);

    const after = { hamlet: await readable("hamlet"), polonius: await readable("polonius"), iago: await readable("iago") };
    expect(after).toEqual(before);

    // After the job, flags change as before.
    expectSuccess(await s.as("polonius").post("/mark_all_as_read"));
    expect((await readable("polonius")).unread).toEqual([]);
  });

  test("rows the job wrote as runs change as written rows do: read, unread again, starred, moved, moved away, deleted", async () => {
    const elsinore = await s.createChannel("iago", "Runs private", ["iago", "hamlet", "othello"], { invite_only: true });
    // Three batches, so polonius holds three runs.
    const ids: number[] = [];
    for (let batch = 0; batch < 3; batch++) {
      for (let i = 0; i < 4; i++) ids.push(await send("othello", denmark, `runs ${batch}`, `run message ${batch}.${i}`));
      await s.server.unreadRows.drain();
    }
    const store = s.server.h.store;
    const polonius = s.users.polonius.id;
    for (const id of ids) expect(writtenUnreadLocation(store, polonius, id)).toBeDefined();
    // No row per message: the job wrote runs.
    expect(store.dbs.userMessageIndex.doesExist([polonius, "unread", ids[0]])).toBe(false);

    const mine = (list: number[]) => list.filter((id) => ids.includes(id));
    expect(mine((await readable("polonius")).unread)).toEqual(ids);
    // Across runs: the first of each is read, a middle one read and marked unread again, one starred.
    expectSuccess(await s.as("polonius").post("/messages/flags", { messages: [ids[0], ids[4], ids[8], ids[5]], op: "add", flag: "read" }));
    expectSuccess(await s.as("polonius").post("/messages/flags", { messages: [ids[5]], op: "remove", flag: "read" }));
    expectSuccess(await s.as("polonius").post("/messages/flags", { messages: [ids[6]], op: "add", flag: "starred" }));
    // A move within the channel, a move where polonius cannot follow, a deletion.
    expectSuccess(await s.as("iago").patch(`/messages/${ids[1]}`, { topic: "runs moved", propagate_mode: "change_one" }));
    expectSuccess(
      await s.as("iago").patch(`/messages/${ids[2]}`, { stream_id: elsinore, propagate_mode: "change_one", send_notification_to_old_thread: false, send_notification_to_new_thread: false }),
    );
    expectSuccess(await s.as("iago").delete(`/messages/${ids[9]}`));

    const expected = [ids[1], ids[3], ids[5], ids[6], ids[7], ids[10], ids[11]];
    const state = await readable("polonius");
    expect(mine(state.unread)).toEqual(expected);
    expect(writtenUnreadLocation(store, polonius, ids[0])).toBeUndefined();
    expect(writtenUnreadLocation(store, polonius, ids[2])).toBeUndefined();
    expect(writtenUnreadLocation(store, polonius, ids[9])).toBeUndefined();
    expect(writtenUnreadLocation(store, polonius, ids[1])).toEqual([denmark, "runs moved"]);
    const streams = (state.unread_msgs as any).streams as { topic: string; unread_message_ids: number[] }[];
    expect(mine(streams.find((x) => x.topic === "runs moved")!.unread_message_ids)).toEqual([ids[1]]);
    expect(mine(streams.find((x) => x.topic === "runs 1")!.unread_message_ids)).toEqual([ids[5], ids[6], ids[7]]);
    const flagsOf = new Map(state.all.map(([id, flags]: [number, string[]]) => [id, flags]));
    expect(flagsOf.get(ids[6])).toEqual(["starred"]);
    expect(flagsOf.get(ids[5])).toEqual([]);
    expect(flagsOf.has(ids[2])).toBe(false);

    // Walks starting inside a run, both ways.
    const around = expectSuccess(
      await s.as("polonius").get("/messages", { anchor: ids[6], num_before: 2, num_after: 2, narrow: JSON.stringify([{ operator: "is", operand: "unread" }]) }),
    );
    expect(mine(around.messages.map((m: any) => m.id))).toEqual([ids[3], ids[5], ids[6], ids[7], ids[10]]);
    const first = expectSuccess(await s.as("polonius").get("/messages", { anchor: "first_unread", num_before: 0, num_after: 1, narrow: JSON.stringify([{ operator: "channel", operand: denmark }, { operator: "topic", operand: "runs 0" }]) }));
    expect(first.anchor).toBe(ids[3]);

    // Everything read: the runs are gone.
    expectSuccess(await s.as("polonius").post("/mark_all_as_read"));
    expect(mine((await readable("polonius")).unread)).toEqual([]);
    for (const { key } of store.dbs.userMessageIndex.getRange({ start: [polonius, "unreadBatch"], end: [polonius, "unreadBatch", Number.MAX_SAFE_INTEGER] })) {
      throw new Error(`a run is left: ${JSON.stringify(key)}`);
    }
  });

  test("a backlog larger than a run: split into runs, cut short and planned again, read, and deleted in bulk", async () => {
    const store = s.server.h.store;
    const polonius = s.users.polonius.id;
    const ids: number[] = [];
    for (let i = 0; i < 150; i++) ids.push(await send("othello", denmark, i % 2 ? "backlog odd" : "backlog even", `backlog ${i}`));
    // A batch cut short: its first commit wrote polonius's runs, then the worker stopped.
    const partial = planDeferredUnreadRows(store, 1000)!;
    await store.commit(() => writeDeferredUnreadRows(store, partial, new Map([[polonius, ids.slice(0, 100)]]), false));
    expect(unreadWatermark(store)).toBeLessThan(ids[0]);
    await s.server.unreadRows.drain();
    expect(unreadWatermark(store)).toBeGreaterThanOrEqual(ids[149]);
    let runs = 0;
    for (const _ of store.dbs.userMessageIndex.getKeys({ start: [polonius, "unreadBatch", ids[0] - 200], end: [polonius, "unreadBatch", ids[149] + 1] })) runs++;
    expect(runs).toBe(3);

    const mine = (list: number[]) => list.filter((id) => ids.includes(id));
    const unreadNow = async () => mine((await readable("polonius")).unread);
    // readable() reads the newest 100.
    expect(await unreadNow()).toEqual(ids.slice(50));
    const read = ids.filter((_, i) => i % 10 === 0);
    expectSuccess(await s.as("polonius").post("/messages/flags", { messages: read, op: "add", flag: "read" }));
    const walk = expectSuccess(
      await s.as("polonius").get("/messages", { anchor: ids[64], num_before: 3, num_after: 3, narrow: JSON.stringify([{ operator: "is", operand: "unread" }]) }),
    );
    expect(mine(walk.messages.map((m: any) => m.id))).toEqual([ids[61], ids[62], ids[63], ids[64], ids[65], ids[66], ids[67]]);
    expectSuccess(await s.as("iago").post(`/streams/${denmark}/delete_topic`, { topic_name: "backlog odd" }));
    const state = await register(s.as("polonius"), { event_types: ["message", "update_message_flags"] });
    const counted = (state.unread_msgs as any).streams.filter((x: any) => x.topic.startsWith("backlog")).flatMap((x: any) => x.unread_message_ids);
    const expected = ids.filter((_, i) => i % 2 === 0 && i % 10 !== 0);
    expect(mine(counted).sort((a, b) => a - b)).toEqual(expected);
    expect(await unreadNow()).toEqual(expected);
    for (const id of ids.filter((_, i) => i % 2 === 1)) expect(writtenUnreadLocation(store, polonius, id)).toBeUndefined();
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
    expect(writtenUnreadLocation(store, hamlet.id, id)).toBeUndefined();
    expect(writtenUnreadLocation(store, polonius.id, id)).toBeDefined();
    // The moved message's row points at where it is now; the deleted one has none.
    expect(writtenUnreadLocation(store, polonius.id, moved)).toEqual([denmark, "elsewhere"]);
    expect(writtenUnreadLocation(store, polonius.id, gone)).toBeUndefined();
    // Cordelia was never a recipient: no row is invented for her.
    expect(getUserFlags(store, cordelia.id, id)).toBeUndefined();
    expect(getUserFlags(store, hamlet.id, id)).toBe(1);
    expect(getUserFlags(store, polonius.id, id)).toBe(0);
  });

  test("a worker that dies is replaced at the next run, which writes the rows", async () => {
    const id = await send("othello", denmark, "worker", "after a crash of the worker");
    const job = startUnreadRowsJob(s.server.h.store, 3600_000, new URL("../fixtures/unread-rows-worker-dies-once.ts", import.meta.url).href, {
      ...DEFAULT_UNREAD_ROWS_DEFERRAL,
      mainThread: { messages: 0, recipients: 0 },
    });
    try {
      // The first worker dies on its run: the drain ends, nothing is written.
      await job.drain();
      expect(unreadWatermark(s.server.h.store)).toBeLessThan(id);
      await job.drain();
      expect(unreadWatermark(s.server.h.store)).toBeGreaterThanOrEqual(id);
      expect(writtenUnreadLocation(s.server.h.store, s.users.polonius.id, id)).toBeDefined();
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
    const again = await startTestServer({ dataDir: s.dataDir, env: { HEARTH_UNREAD_ROWS_INTERVAL_MS: String(3600_000), HEARTH_UNREAD_ROWS_ALWAYS_ON_WORKER: "1" } });
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
