/**
 * Widgets (`/poll`, `/todo`, bots' `widget_content`) and POST /submessage, as the
 * Zulip server runs them: the first submessage comes with the message, readers add
 * theirs, and every holder of the message hears of each one.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectSchema, expectSuccess, startTestServer, type TestServer } from "../kit";
import { verifyAction } from "../kit/events";
import { Message } from "../../src/schemas/messages";

let s: TestServer;
let denmark: number;
let elsinore: number;

beforeAll(async () => {
  s = await startTestServer();
  denmark = await s.createChannel("iago", "Denmark", ["hamlet", "othello"]);
  elsinore = await s.createChannel("iago", "Elsinore", ["hamlet", "othello"], { invite_only: true });
});
afterAll(() => s.stop());

const send = async (content: string, extra: Record<string, unknown> = {}) =>
  expectSuccess(await s.as("hamlet").post("/messages", { type: "stream", to: denmark, topic: "widgets", content, ...extra })).id as number;
const fetchMessage = async (who: "hamlet" | "othello", id: number) => {
  const body = expectSuccess(await s.as(who).get(`/messages/${id}`, { apply_markdown: "false" }));
  expectSchema(Message, { ...body.message, flags: body.message.flags ?? [] });
  return body.message;
};
const submit = (who: "hamlet" | "othello" | "cordelia" | "iago", id: number, content: unknown, msgType = "widget") =>
  s.as(who).post("/submessage", { message_id: id, msg_type: msgType, content: typeof content === "string" ? content : JSON.stringify(content) });

describe("widgets", () => {
  test("/poll and /todo start a widget: its first submessage goes out with the message", async () => {
    let pollId = 0;
    const r = await verifyAction(
      s,
      async () => {
        pollId = await send("/poll Where do we meet?\n- The castle\n* The graveyard\n\nThe ramparts");
      },
      { viewers: ["othello"], registerParams: { event_types: ["message"] } },
    );
    const event = r.events.othello.find((e: any) => e.type === "message")!;
    const widget = {
      id: expect.any(Number),
      message_id: pollId,
      sender_id: s.users.hamlet.id,
      msg_type: "widget",
      content: JSON.stringify({ widget_type: "poll", extra_data: { question: "Where do we meet?", options: ["The castle", "The graveyard", "The ramparts"] } }),
    };
    expect(event.message.submessages).toEqual([widget]);
    expect((await fetchMessage("othello", pollId)).submessages).toEqual([widget]);

    const todoId = await send("/todo Before the play\nActors: find them\n- Stage");
    const [todo] = (await fetchMessage("hamlet", todoId)).submessages;
    expect(JSON.parse(todo.content)).toEqual({
      widget_type: "todo",
      extra_data: { task_list_title: "Before the play", tasks: [{ task: "Actors", desc: "find them" }, { task: "Stage", desc: "" }] },
    });
    // Not widgets: other commands, and a command anywhere but at the start.
    for (const content of ["/me waves", "/bogus", "use /poll", "/polling", "x\n/poll Q"]) {
      expect((await fetchMessage("hamlet", await send(content))).submessages).toEqual([]);
    }
    // Leading blank lines go before the content is read (Zulip's normalize_body).
    expect((await fetchMessage("hamlet", await send("\n\n/poll Q"))).submessages).toHaveLength(1);
  });

  test("readers vote; each vote reaches every holder of the message and is kept in order", async () => {
    const id = await send("/poll Which play?\nHamlet\nLear");
    const result = await verifyAction(
      s,
      async () => {
        expectSuccess(await submit("othello", id, { type: "vote", key: "canned,0", vote: 1 }));
        expectSuccess(await submit("hamlet", id, { type: "new_option", idx: 1, option: "Macbeth" }));
        expectSuccess(await submit("othello", id, { type: "vote", key: "canned,0", vote: -1 }));
      },
      { viewers: ["hamlet", "othello", "cordelia", "iago"], registerParams: { event_types: ["submessage"] } },
    );
    expect(result.types.othello).toEqual(["submessage", "submessage", "submessage"]);
    expect(result.types.hamlet).toEqual(["submessage", "submessage", "submessage"]);
    // Who hears: the message's holders (Cordelia and Iago are not subscribed).
    expect(result.types.cordelia).toEqual([]);
    expect(result.types.iago).toEqual([]);
    expect(result.events.othello[0]).toEqual({
      type: "submessage",
      id: expect.any(Number),
      msg_type: "widget",
      message_id: id,
      submessage_id: expect.any(Number),
      sender_id: s.users.othello.id,
      content: JSON.stringify({ type: "vote", key: "canned,0", vote: 1 }),
    });
    const subs = (await fetchMessage("othello", id)).submessages;
    expect(subs.map((x: any) => [x.sender_id, JSON.parse(x.content).type])).toEqual([
      [s.users.hamlet.id, undefined],
      [s.users.othello.id, "vote"],
      [s.users.hamlet.id, "new_option"],
      [s.users.othello.id, "vote"],
    ]);
    expect(subs.map((x: any) => x.id)).toEqual([...subs.map((x: any) => x.id)].sort((a: number, b: number) => a - b));
  });

  test("a later subscriber of a channel with shared history hears of votes, as for reactions", async () => {
    const id = await send("/poll Who joins late?\nPolonius");
    expectSuccess(await s.as("iago").post("/users/me/subscriptions", { subscriptions: [{ name: "Denmark" }], principals: [s.users.polonius.id] }));
    const result = await verifyAction(s, () => submit("othello", id, { type: "vote", key: "canned,0", vote: 1 }), {
      viewers: ["polonius", "cordelia"],
      registerParams: { event_types: ["submessage"] },
    });
    expect(result.types.polonius).toEqual(["submessage"]);
    expect(result.types.cordelia).toEqual([]);
  });

  test("bad submessages are refused with Zulip's errors and change nothing", async () => {
    const poll = await send("/poll Question?");
    const todo = await send("/todo Tasks");
    const plain = await send("no widget here");
    const before = (await fetchMessage("hamlet", poll)).submessages;
    expectError(await submit("othello", poll, "{not json"), 400, "BAD_REQUEST", "Invalid json for submessage");
    expectError(await submit("othello", poll, { type: "vote", key: "k", vote: 2 }), 400, "BAD_REQUEST", 'Invalid poll data["vote"]');
    expectError(await submit("othello", poll, { type: "vote", key: "k", vote: 1, extra: true }), 400, "BAD_REQUEST", "Unexpected arguments: extra");
    expectError(await submit("othello", poll, { type: "vote", vote: 1 }), 400, "BAD_REQUEST", "key key is missing from poll data");
    expectError(await submit("othello", poll, { type: "question", question: "Mine now?" }), 400, "BAD_REQUEST", "You can't edit a question unless you are the author.");
    expectError(await submit("othello", poll, { type: "new_option", idx: 1001, option: "x" }), 400, "BAD_REQUEST", 'poll data["idx"] is too large');
    expectError(await submit("othello", poll, { type: "vote", key: 7, vote: 1 }), 400, "BAD_REQUEST", 'poll data["key"] is not a string');
    expectError(await submit("othello", todo, { type: "new_task", key: 0, task: "t", desc: "", completed: "no" }), 400, "BAD_REQUEST", 'todo data["completed"] is not a boolean');
    expectError(await submit("othello", poll, { type: "vote", key: "k".repeat(10_001), vote: 1 }), 400, "BAD_REQUEST", "Submessage content is too long (limit: 10000 characters)");
    expectError(await submit("othello", poll, { type: "rename" }), 400, "BAD_REQUEST", "Unknown type for poll data: rename");
    expectError(await submit("othello", poll, [1, 2]), 400, "BAD_REQUEST", "poll data is not a dict");
    expectError(await submit("othello", todo, { type: "new_task_list_title", title: "Mine" }), 400, "BAD_REQUEST", "You can't edit the task list title unless you are the author.");
    expectSuccess(await submit("othello", todo, { type: "new_task", key: 0, task: "Lines", desc: "", completed: false }));
    expectSuccess(await submit("hamlet", todo, { type: "new_task_list_title", title: "Before the play" }));
    // The first submessage of a message is its sender's to attach.
    expectError(await submit("othello", plain, { anything: true }), 400, "BAD_REQUEST", "You cannot attach a submessage to this message.");
    expectSuccess(await submit("hamlet", plain, { anything: true }, "custom"));
    expectSuccess(await submit("othello", plain, JSON.stringify("any JSON is fine without a poll or todo"), "custom"));
    // Messages the caller cannot read do not exist for them.
    const secret = await send("/poll Secret?", { to: elsinore });
    expectError(await submit("cordelia", secret, { type: "vote", key: "k", vote: 1 }), 400, "BAD_REQUEST", "Invalid message(s)");
    expectSuccess(await submit("othello", secret, { type: "vote", key: "k", vote: 1 }));
    expectError(await submit("othello", 999999, { type: "vote", key: "k", vote: 1 }), 400, "BAD_REQUEST", "Invalid message(s)");
    expect((await fetchMessage("hamlet", poll)).submessages).toEqual(before);
  });

  test("a widget message's content cannot be edited; its topic can", async () => {
    const id = await send("/poll Edit me?");
    expectError(await s.as("hamlet").patch(`/messages/${id}`, { content: "/poll Edited" }), 400, "BAD_REQUEST", "Widgets cannot be edited.");
    expectSuccess(await s.as("hamlet").patch(`/messages/${id}`, { topic: "widgets moved" }));
  });

  test("bots attach a widget with widget_content; bad widget_content is refused", async () => {
    const zform = { widget_type: "zform", extra_data: { type: "choices", heading: "Pick", choices: [{ short_name: "A", long_name: "Apple", reply: "apple" }] } };
    const id = await send("Choose:", { widget_content: JSON.stringify(zform) });
    expect(JSON.parse((await fetchMessage("othello", id)).submessages[0].content)).toEqual(zform);
    const bad = async (widget: string, msg: string) =>
      expectError(await s.as("hamlet").post("/messages", { type: "stream", to: denmark, topic: "widgets", content: "x", widget_content: widget }), 400, "BAD_REQUEST", msg);
    // Other keys are allowed, as Zulip's trivia bot sends them.
    const trivia = { ...zform, extra_data: { ...zform.extra_data, choices: [{ type: "multiple_choice", short_name: "A", long_name: "Apple", reply: "apple" }] } };
    const quiz = await send("Quiz:", { widget_content: JSON.stringify(trivia) });
    expect(JSON.parse((await fetchMessage("othello", quiz)).submessages[0].content)).toEqual(trivia);
    await bad("{{{", "Widgets: API programmer sent invalid JSON content");
    await bad(JSON.stringify({ color: "red" }), "Widgets: widget_type is not in widget_content");
    await bad(JSON.stringify({ widget_type: "poll", extra_data: {} }), "Widgets: unknown widget type: poll");
    await bad(JSON.stringify({ ...zform, extra_data: { ...zform.extra_data, choices: [{ long_name: "x", reply: "y" }] } }), 'Widgets: short_name key is missing from extra_data["choices"][0]');
    // A widget is kept in the message record: bounded as a submessage is.
    await bad(JSON.stringify({ ...zform, padding: "x".repeat(10_000) }), "Widgets: widget_content is too long (limit: 10000 characters)");
  });

  test("a message holds at most 1,000 submessages; the next is refused and nothing is written", async () => {
    const id = await send("/poll Busy?\nYes");
    for (let i = 0; i < 999; i += 111) {
      await Promise.all(Array.from({ length: Math.min(111, 999 - i) }, () => submit("othello", id, { type: "vote", key: "canned,0", vote: 1 })).map(async (r) => expectSuccess(await r)));
    }
    expect((await fetchMessage("hamlet", id)).submessages).toHaveLength(1000);
    expectError(await submit("othello", id, { type: "vote", key: "canned,0", vote: -1 }), 400, "BAD_REQUEST", "This message has too many submessages (limit: 1000)");
    expect((await fetchMessage("hamlet", id)).submessages).toHaveLength(1000);
  });

  test("voting and reacting follow the topic for users whose policy is 'on participation'", async () => {
    const id = await send("/poll Follow?");
    expectSuccess(await s.as("othello").patch("/settings", { automatically_follow_topics_policy: 1 }));
    expectSuccess(await s.as("othello").post("/user_topics", { stream_id: denmark, topic: "widgets", visibility_policy: 0 }));
    expectSuccess(await submit("othello", id, { type: "vote", key: "canned,0", vote: 1 }));
    const topics = expectSuccess(await s.as("othello").post("/register", { fetch_event_types: JSON.stringify(["user_topic"]) })).user_topics;
    expect(topics.find((t: any) => t.stream_id === denmark && t.topic_name === "widgets")?.visibility_policy).toBe(3); // followed
    // Reacting is taking part too; a user with another policy is left alone.
    const other = expectSuccess(await s.as("hamlet").post("/messages", { type: "stream", to: denmark, topic: "reactions", content: "react to me" })).id;
    expectSuccess(await s.as("iago").post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "Denmark" }]) }));
    expectSuccess(await s.as("iago").patch("/settings", { automatically_follow_topics_policy: 1 }));
    expectSuccess(await s.as("iago").post(`/messages/${other}/reactions`, { emoji_name: "smile" }));
    expectSuccess(await s.as("othello").patch("/settings", { automatically_follow_topics_policy: 4 }));
    expectSuccess(await s.as("othello").post(`/messages/${other}/reactions`, { emoji_name: "smile" }));
    const policyOf = async (who: "iago" | "othello") =>
      expectSuccess(await s.as(who).post("/register", { fetch_event_types: JSON.stringify(["user_topic"]) })).user_topics.find((t: any) => t.topic_name === "reactions")?.visibility_policy;
    expect(await policyOf("iago")).toBe(3);
    expect(await policyOf("othello")).toBeUndefined();
    // Someone who left the channel follows nothing by taking part.
    expectSuccess(await s.as("iago").delete("/users/me/subscriptions", { subscriptions: JSON.stringify(["Denmark"]) }));
    const third = expectSuccess(await s.as("hamlet").post("/messages", { type: "stream", to: denmark, topic: "after leaving", content: "x" })).id;
    expectSuccess(await s.as("iago").post(`/messages/${third}/reactions`, { emoji_name: "smile" }));
    expect(
      expectSuccess(await s.as("iago").post("/register", { fetch_event_types: JSON.stringify(["user_topic"]) })).user_topics.find((t: any) => t.topic_name === "after leaving"),
    ).toBeUndefined();
  });
});
