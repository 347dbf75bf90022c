/**
 * The kept newest IDs of a topic (src/store/topic_ids.ts) behind GET /messages' topic
 * narrow: each test reads topics through the API (filling what is kept), writes
 * through the API, and reads again, paging both ways; every writer of a topic's rows
 * must show: a new message, a message moved in or out (one, or the whole topic
 * renamed), a move to another channel, a deletion (a deleted message's ID left
 * behind would be skipped by the walk, which finds no message for it, so that test
 * passes either way: it is there for the pages' edges).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, startTestServer, type TestServer } from "../kit";

let s: TestServer;
let channel: number;
let other: number;
beforeAll(async () => {
  s = await startTestServer();
  channel = await s.createChannel("iago", "kept topics", ["othello", "hamlet"]);
  other = await s.createChannel("iago", "kept topics elsewhere", ["othello", "hamlet"]);
});
afterAll(() => s.stop());

async function send(topic: string, count: number, to = channel): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) ids.push(expectSuccess(await s.as("othello").post("/messages", { type: "stream", to, topic, content: `${topic} ${i}` })).id as number);
  return ids;
}

/** Moves without the notification messages, which would be messages of the topics too. */
const quiet = { send_notification_to_new_thread: false, send_notification_to_old_thread: false };

const narrowOf = (topic: string, to = channel) => JSON.stringify([{ operator: "channel", operand: to }, { operator: "topic", operand: topic }]);

/** A topic's IDs as a client pages through it: newest 20, then older pages, oldest first. */
async function pagedOlder(topic: string, to = channel): Promise<number[]> {
  const narrow = narrowOf(topic, to);
  const out: number[] = [];
  let anchor: number | string = "newest";
  for (;;) {
    const r = expectSuccess(await s.as("hamlet").get("/messages", { anchor, num_before: 20, num_after: 0, narrow, include_anchor: anchor === "newest" }));
    out.unshift(...(r.messages as any[]).map((m) => m.id as number));
    if (r.found_oldest || r.messages.length === 0) return out;
    anchor = r.messages[0].id;
  }
}

/** The same, from the oldest up, 20 at a time. */
async function pagedNewer(topic: string, to = channel): Promise<number[]> {
  const narrow = narrowOf(topic, to);
  const out: number[] = [];
  let anchor: number | string = "oldest";
  for (;;) {
    const r = expectSuccess(await s.as("hamlet").get("/messages", { anchor, num_before: 0, num_after: 20, narrow, include_anchor: anchor === "oldest" }));
    out.push(...(r.messages as any[]).map((m) => m.id as number));
    if (r.found_newest || r.messages.length === 0) return out;
    anchor = r.messages[r.messages.length - 1].id;
  }
}

/** Both ways, twice (the second read from what the first kept), all equal to `expected`. */
async function expectTopic(topic: string, expected: number[], to = channel): Promise<void> {
  for (let i = 0; i < 2; i++) {
    expect(await pagedOlder(topic, to)).toEqual(expected);
    expect(await pagedNewer(topic, to)).toEqual(expected);
  }
}

describe("kept topic IDs follow every writer", () => {
  test("new messages", async () => {
    const ids = await send("new", 45);
    await expectTopic("new", ids);
    const more = await send("new", 3);
    await expectTopic("new", [...ids, ...more]);
    // A topic spelled otherwise is the same topic.
    const upper = await send("NEW", 1);
    await expectTopic("new", [...ids, ...more, ...upper]);
  });

  test("one message moved in and out, and a whole topic renamed", async () => {
    const a = await send("move a", 25);
    const b = await send("move b", 5);
    await expectTopic("move a", a);
    await expectTopic("move b", b);
    // In: an older message into the middle of "move a"; out: one of "move a" to "move c".
    expectSuccess(await s.as("othello").patch(`/messages/${b[2]}`, { topic: "move a", propagate_mode: "change_one", ...quiet }));
    expectSuccess(await s.as("othello").patch(`/messages/${a[24]}`, { topic: "move c", propagate_mode: "change_one", ...quiet }));
    const inA = [...a.slice(0, 24), b[2]].sort((x, y) => x - y);
    await expectTopic("move a", inA);
    await expectTopic("move b", [b[0], b[1], b[3], b[4]]);
    await expectTopic("move c", [a[24]]);
    expectSuccess(await s.as("iago").patch(`/messages/${a[0]}`, { topic: "move d", propagate_mode: "change_all", ...quiet }));
    await expectTopic("move a", []);
    await expectTopic("move d", inA);
  });

  test("a move to another channel", async () => {
    const ids = await send("across", 30);
    await expectTopic("across", ids);
    await expectTopic("across", [], other);
    expectSuccess(await s.as("iago").patch(`/messages/${ids[10]}`, { stream_id: other, propagate_mode: "change_later", ...quiet }));
    await expectTopic("across", ids.slice(0, 10));
    await expectTopic("across", ids.slice(10), other);
  });

  test("deletions", async () => {
    const ids = await send("deleted", 30);
    await expectTopic("deleted", ids);
    for (const id of [ids[29], ids[12], ids[0]]) expectSuccess(await s.as("iago").delete(`/messages/${id}`));
    await expectTopic("deleted", ids.filter((_, i) => i !== 29 && i !== 12 && i !== 0));
  });
});
