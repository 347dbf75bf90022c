import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, startTestServer, type TestServer } from "../kit";

/**
 * `anchor=first_unread` walks two ways in turn (src/views/narrow.ts firstUnreadId):
 * the narrow's own index (a topic) and the reader's unread rows. Whichever answers
 * first, the anchor must be the oldest unread message of the narrow, whether the
 * reader has few unread messages in a long topic or many elsewhere and none there.
 */
let s: TestServer;
let denmark: number;
let venice: number;

beforeAll(async () => {
  s = await startTestServer();
  denmark = await s.createChannel("iago", "Denmark", ["iago", "hamlet", "othello"]);
  venice = await s.createChannel("iago", "Venice", ["iago", "hamlet", "othello"]);
});
afterAll(() => s.stop());

async function send(to: number, topic: string, content: string): Promise<number> {
  return expectSuccess(await s.as("iago").post("/messages", { type: "channel", to, topic, content })).id;
}

async function firstUnreadAnchor(who: "hamlet" | "othello", narrow: unknown[]): Promise<{ anchor: number; ids: number[] }> {
  const body = expectSuccess(await s.as(who).get("/messages", { anchor: "first_unread", num_before: 0, num_after: 0, narrow }));
  return { anchor: body.anchor, ids: body.messages.map((m: { id: number }) => m.id) };
}

const topicNarrow = (channel: number, topic: string) => [{ operator: "channel", operand: channel }, { operator: "topic", operand: topic }];

describe("first_unread", () => {
  test("one unread message in a long read topic, and unread messages elsewhere", async () => {
    const ids: number[] = [];
    for (let i = 0; i < 40; i++) ids.push(await send(denmark, "long", `line ${i}`));
    const elsewhere = await send(venice, "other", "unread elsewhere");
    const sameChannel = await send(denmark, "short", "unread in the channel");
    expectSuccess(await s.as("hamlet").post("/messages/flags", { messages: ids, op: "add", flag: "read" }));
    expectSuccess(await s.as("hamlet").post("/messages/flags", { messages: [ids[27]], op: "remove", flag: "read" }));

    expect(await firstUnreadAnchor("hamlet", topicNarrow(denmark, "long"))).toEqual({ anchor: ids[27], ids: [ids[27]] });
    expect((await firstUnreadAnchor("hamlet", [{ operator: "channel", operand: denmark }])).anchor).toBe(ids[27]);
    expect((await firstUnreadAnchor("hamlet", topicNarrow(denmark, "short"))).anchor).toBe(sameChannel);
    expect((await firstUnreadAnchor("hamlet", topicNarrow(venice, "other"))).anchor).toBe(elsewhere);

    // Nothing unread in the topic: the newest message is the anchor's answer, as Zulip's "newest".
    expectSuccess(await s.as("hamlet").post("/messages/flags", { messages: [ids[27]], op: "add", flag: "read" }));
    const none = expectSuccess(await s.as("hamlet").get("/messages", { anchor: "first_unread", num_before: 1, num_after: 0, narrow: topicNarrow(denmark, "long") }));
    expect(none.messages.map((m: { id: number }) => m.id)).toEqual([ids[39]]);
    expect(none.found_newest).toBe(true);
  });

  test("every message of the topic unread, many unread elsewhere: the topic's oldest", async () => {
    const elsewhere: number[] = [];
    for (let i = 0; i < 30; i++) elsewhere.push(await send(venice, "backlog", `old ${i}`));
    const topic: number[] = [];
    for (let i = 0; i < 5; i++) topic.push(await send(denmark, "fresh", `new ${i}`));
    expect((await firstUnreadAnchor("othello", topicNarrow(denmark, "fresh"))).anchor).toBe(topic[0]);
    // Read the first two: the third is the answer.
    expectSuccess(await s.as("othello").post("/messages/flags", { messages: topic.slice(0, 2), op: "add", flag: "read" }));
    expect((await firstUnreadAnchor("othello", topicNarrow(denmark, "fresh"))).anchor).toBe(topic[2]);
    expect((await firstUnreadAnchor("othello", topicNarrow(venice, "backlog"))).anchor).toBe(elsewhere[0]);
  });
});
