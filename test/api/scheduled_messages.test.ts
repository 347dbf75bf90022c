/** Scheduled messages: create, list, edit, delete, delivery by the job (fake clock), failure, restart. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectSchema, expectSuccess, startTestServer, type TestServer } from "../kit";
import { register, verifyAction } from "../kit/events";
import { Store } from "../../src/store/db";
import { getScheduled, putScheduled } from "../../src/store/scheduled_messages";
import { checkEditScheduledMessage, deliverDueScheduledMessages } from "../../src/actions/scheduled_messages";
import { getUser } from "../../src/store/users";
import { CreateScheduledMessageResponse, ScheduledMessagesResponse } from "../../src/schemas/scheduled_messages";

let s: TestServer;
let denmark: number;
const viewers = { viewers: ["hamlet", "othello"] as ("hamlet" | "othello")[] };
const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;
/** The job's pass with the clock moved past every item scheduled so far in these tests. */
const tickLater = () => deliverDueScheduledMessages(s.server.h, Date.now() / 1000 + 10 * 86400);

beforeAll(async () => {
  s = await startTestServer();
  denmark = await s.createChannel("iago", "Denmark", ["iago", "hamlet", "othello", "cordelia"]);
});
afterAll(() => s.stop());

async function schedule(who: "hamlet" | "othello", params: Record<string, unknown>) {
  return s.as(who).post("/scheduled_messages", { type: "stream", to: denmark, topic: "plans", content: "later", scheduled_delivery_timestamp: inAnHour(), ...params });
}
async function listOf(who: "hamlet" | "othello" | "cordelia") {
  const body = expectSuccess(await s.as(who).get("/scheduled_messages"));
  expectSchema(ScheduledMessagesResponse, body);
  return body.scheduled_messages as any[];
}
async function newest(who: "hamlet" | "othello", narrow: unknown[] = []) {
  return expectSuccess(await s.as(who).get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow, apply_markdown: false })).messages[0];
}
async function clearAll(who: "hamlet" | "othello") {
  for (const m of await listOf(who)) expectSuccess(await s.as(who).delete(`/scheduled_messages/${m.scheduled_message_id}`));
}

describe("POST and GET /scheduled_messages", () => {
  test("channel and direct messages: IDs, Zulip's object, soonest first, owner only; events to the owner", async () => {
    const at = inAnHour();
    let channelId = 0;
    const result = await verifyAction(s, async () => {
      const body = expectSuccess(await schedule("hamlet", { type: "channel", content: "**bold** plan", scheduled_delivery_timestamp: at + 60 }));
      expectSchema(CreateScheduledMessageResponse, body);
      channelId = body.scheduled_message_id;
    }, viewers);
    expect(result.types).toEqual({ hamlet: ["scheduled_messages/add"], othello: [] });
    const dm = expectSuccess(await schedule("hamlet", { type: "direct", to: [s.users.othello.id], content: "psst", scheduled_delivery_timestamp: at })).scheduled_message_id;
    const group = expectSuccess(await schedule("hamlet", { type: "private", to: [s.users.othello.id, s.users.cordelia.id], scheduled_delivery_timestamp: at + 120 })).scheduled_message_id;
    const list = await listOf("hamlet");
    expect(list.map((m) => m.scheduled_message_id)).toEqual([dm, channelId, group]);
    expect(list[0]).toEqual({ scheduled_message_id: dm, type: "private", to: [s.users.othello.id], content: "psst", rendered_content: "<p>psst</p>", scheduled_delivery_timestamp: at, failed: false });
    expect(list[1]).toEqual({
      scheduled_message_id: channelId,
      type: "stream",
      to: denmark,
      topic: "plans",
      content: "**bold** plan",
      rendered_content: "<p><strong>bold</strong> plan</p>",
      scheduled_delivery_timestamp: at + 60,
      failed: false,
    });
    expect(list[2].to).toEqual([s.users.hamlet.id, s.users.othello.id, s.users.cordelia.id].sort((a, b) => a - b));
    expect(await listOf("othello")).toEqual([]);
    expect((await register(s.as("hamlet"), { fetch_event_types: ["scheduled_messages"] })).scheduled_messages).toEqual(list);
    await clearAll("hamlet");
  });

  test("validation errors write nothing", async () => {
    const past = Math.floor(Date.now() / 1000) - 10;
    expectError(await schedule("hamlet", { scheduled_delivery_timestamp: past }), 400, "BAD_REQUEST", "Scheduled delivery time must be in the future.");
    expectError(await schedule("hamlet", { type: "direct", to: [9999] }), 400, "BAD_REQUEST", "Invalid user ID 9999");
    const missing = expectError(await schedule("hamlet", { to: 9999 }), 400, "STREAM_DOES_NOT_EXIST", "Channel with ID '9999' does not exist");
    expect(missing.stream_id).toBe(9999);
    expectError(await schedule("hamlet", { content: "   " }), 400, "BAD_REQUEST", "Message must not be empty");
    expectError(await schedule("hamlet", { type: "huddle" }), 400, "BAD_REQUEST");
    expectError(await schedule("hamlet", { to: "Denmark" }), 400, "BAD_REQUEST");
    expectError(await s.as("hamlet").post("/scheduled_messages", { type: "stream", to: denmark, content: "x" }), 400, "REQUEST_VARIABLE_MISSING");
    // A private channel hamlet cannot see is "does not exist", as Zulip hides it.
    expectSuccess(await s.as("iago").post("/users/me/subscriptions", { subscriptions: [{ name: "Council" }], invite_only: true }));
    const council = expectSuccess(await s.as("iago").get("/get_stream_id", { stream: "Council" })).stream_id;
    expectError(await schedule("hamlet", { to: council }), 400, "STREAM_DOES_NOT_EXIST");
    expect(await listOf("hamlet")).toEqual([]);
  });
});

describe("PATCH and DELETE /scheduled_messages/{id}", () => {
  test("Zulip's edit rules, an update event for each change, 404 for others' and unknown IDs", async () => {
    const id = expectSuccess(await schedule("hamlet", {})).scheduled_message_id;
    const at = inAnHour() + 500;
    const path = `/scheduled_messages/${id}`;
    expectError(await s.as("hamlet").patch(path, {}), 400, "BAD_REQUEST", "Nothing to change");
    expectError(await s.as("hamlet").patch(path, { type: "direct" }), 400, "BAD_REQUEST", "Recipient required when updating type of scheduled message.");
    expectError(await s.as("hamlet").patch(path, { type: "channel", to: denmark }), 400, "BAD_REQUEST", "Topic required when updating scheduled message type to channel.");
    expectError(await s.as("hamlet").patch(path, { scheduled_delivery_timestamp: 1000 }), 400, "BAD_REQUEST", "Scheduled delivery time must be in the future.");
    expectError(await s.as("hamlet").patch(path, { to: 9999 }), 400, "STREAM_DOES_NOT_EXIST");
    expectError(await s.as("othello").patch(path, { content: "mine now" }), 404, "BAD_REQUEST", "Scheduled message does not exist");
    expectError(await s.as("hamlet").patch("/scheduled_messages/99999", { content: "x" }), 404, "BAD_REQUEST", "Scheduled message does not exist");

    const edit = await verifyAction(s, () => s.as("hamlet").patch(path, { content: "*new* words", topic: "agenda", scheduled_delivery_timestamp: at }), viewers);
    expect(edit.types).toEqual({ hamlet: ["scheduled_messages/update"], othello: [] });
    expect((await listOf("hamlet"))[0]).toMatchObject({ content: "*new* words", rendered_content: "<p><em>new</em> words</p>", topic: "agenda", scheduled_delivery_timestamp: at });
    // To a direct message: `topic` goes away; back to a channel needs a topic.
    await verifyAction(s, () => s.as("hamlet").patch(path, { type: "direct", to: [s.users.cordelia.id], topic: "ignored" }), viewers);
    const dm = (await listOf("hamlet"))[0];
    expect(dm).toMatchObject({ type: "private", to: [s.users.cordelia.id], content: "*new* words" });
    expect(dm.topic).toBeUndefined();
    expectSuccess(await s.as("hamlet").patch(path, { type: "stream", to: denmark, topic: "back" }));
    expect((await listOf("hamlet"))[0]).toMatchObject({ type: "stream", to: denmark, topic: "back" });

    expectError(await s.as("othello").delete(path), 404, "BAD_REQUEST", "Scheduled message does not exist");
    const removal = await verifyAction(s, () => s.as("hamlet").delete(path), viewers);
    expect(removal.events.hamlet.map((e) => [e.type, e.op, e.scheduled_message_id])).toEqual([["scheduled_messages", "remove", id]]);
    expectError(await s.as("hamlet").delete(path), 404, "BAD_REQUEST", "Scheduled message does not exist");
    expectError(await s.as("hamlet").delete("/scheduled_messages/abc"), 400, "BAD_REQUEST");
  });
});

describe("delivery", () => {
  test("due messages go out through the normal send path; the owner's queue loses them", async () => {
    const channelMsg = expectSuccess(await schedule("hamlet", { content: "scheduled hello", topic: "delivery", read_by_sender: false })).scheduled_message_id;
    const dmMsg = expectSuccess(await schedule("hamlet", { type: "direct", to: [s.users.othello.id], content: "scheduled dm", read_by_sender: true })).scheduled_message_id;
    // Not due yet: nothing happens.
    expect(await deliverDueScheduledMessages(s.server.h)).toBe(0);
    const result = await verifyAction(s, () => tickLater(), viewers);
    expect(result.types.hamlet.filter((t) => t.startsWith("scheduled_messages"))).toEqual(["scheduled_messages/remove", "scheduled_messages/remove"]);
    expect(result.events.hamlet.filter((e) => e.type === "scheduled_messages").map((e) => e.scheduled_message_id).sort()).toEqual([channelMsg, dmMsg].sort());
    expect(result.types.othello.filter((t) => t === "message")).toHaveLength(2);
    expect(await listOf("hamlet")).toEqual([]);

    const sent = await newest("othello", [{ operator: "channel", operand: denmark }]);
    expect(sent).toMatchObject({ content: "scheduled hello", subject: "delivery", sender_id: s.users.hamlet.id });
    const own = await newest("hamlet", [{ operator: "channel", operand: denmark }]);
    expect(own.flags).not.toContain("read");
    const dm = await newest("othello", [{ operator: "dm", operand: [s.users.hamlet.id] }]);
    expect(dm).toMatchObject({ content: "scheduled dm", sender_id: s.users.hamlet.id });
    // Delivered ones are gone for good: a second pass sends nothing, edits are refused.
    expect(await tickLater()).toBe(0);
    expectError(await s.as("hamlet").patch(`/scheduled_messages/${channelMsg}`, { content: "too late" }), 400, "BAD_REQUEST", "Scheduled message was already sent");
  });

  test("permissions at delivery time: a failure marks it failed, tells the owner, and an edit with a new time requeues it", async () => {
    expectSuccess(await s.as("iago").post("/users/me/subscriptions", { subscriptions: [{ name: "Secret" }], invite_only: true, principals: [s.users.iago.id, s.users.hamlet.id] }));
    const secret = expectSuccess(await s.as("iago").get("/get_stream_id", { stream: "Secret" })).stream_id;
    const id = expectSuccess(await schedule("hamlet", { to: secret, content: "for the council" })).scheduled_message_id;
    expectSuccess(await s.as("iago").delete("/users/me/subscriptions", { subscriptions: ["Secret"], principals: [s.users.hamlet.id] }));

    const result = await verifyAction(s, () => tickLater(), viewers);
    expect(result.types.hamlet).toEqual(["scheduled_messages/update", "message"]);
    expect(result.types.othello).toEqual([]);
    const [failed] = await listOf("hamlet");
    expect(failed).toMatchObject({ scheduled_message_id: id, failed: true });
    const notice = await newest("hamlet");
    expect(notice.sender_email).toBe("notification-bot@zulip.com");
    expect(notice.content).toContain("was not sent because of the following error:\n\n> Channel with ID");
    expect(notice.content).toContain("[View scheduled messages](#scheduled)");
    // Failed ones are not retried on their own.
    expect(await tickLater()).toBe(0);

    expectError(await s.as("hamlet").patch(`/scheduled_messages/${id}`, { content: "retry" }), 400, "BAD_REQUEST", "Scheduled delivery time must be in the future.");
    expectSuccess(await s.as("iago").post("/users/me/subscriptions", { subscriptions: [{ name: "Secret" }], principals: [s.users.hamlet.id] }));
    await verifyAction(s, () => s.as("hamlet").patch(`/scheduled_messages/${id}`, { scheduled_delivery_timestamp: inAnHour() }), viewers);
    expect((await listOf("hamlet"))[0].failed).toBe(false);
    await tickLater();
    expect(await listOf("hamlet")).toEqual([]);
    expect((await newest("hamlet", [{ operator: "channel", operand: secret }])).content).toBe("for the council");
  });

  test("an edit racing the delivery either lands before the send or is refused: never lost, never sent twice", async () => {
    const id = expectSuccess(await schedule("hamlet", { content: "draft one", topic: "race" })).scheduled_message_id;
    const pass = tickLater();
    const edit = s.as("hamlet").patch(`/scheduled_messages/${id}`, { content: "draft two" });
    await pass;
    const edited = await edit;
    await tickLater();
    const all = expectSuccess(await s.as("othello").get("/messages", { anchor: "newest", num_before: 10, num_after: 0, apply_markdown: false, narrow: [{ operator: "topic", operand: "race" }] })).messages;
    expect(all).toHaveLength(1);
    if (edited.status === 200) expect(all[0].content).toBe("draft two");
    else {
      expectError(edited, 400, "BAD_REQUEST", "Scheduled message was already sent");
      expect(all[0].content).toBe("draft one");
    }
    expect(await listOf("hamlet")).toEqual([]);
  });
  test("an edit committed while a pass is sending supersedes the old text (the send rolls back, the next pass sends the new one)", async () => {
    const h = s.server.h;
    const id = expectSuccess(await schedule("hamlet", { content: "old text", topic: "superseded" })).scheduled_message_id;
    const hamlet = getUser(h.store, s.users.hamlet.id)!;
    // The edit's transaction is queued before the pass reads the item.
    const edit = checkEditScheduledMessage(h, hamlet, id, { content: "new text" });
    await tickLater();
    await edit;
    await tickLater();
    const all = expectSuccess(await s.as("othello").get("/messages", { anchor: "newest", num_before: 10, num_after: 0, apply_markdown: false, narrow: [{ operator: "topic", operand: "superseded" }] })).messages;
    expect(all.map((m: any) => m.content)).toEqual(["new text"]);
    expect(await listOf("hamlet")).toEqual([]);
  });
});

describe("restart", () => {
  test("items that fell due while the server was down are delivered at start", async () => {
    const t = await startTestServer();
    const hamlet = t.users.hamlet;
    const othello = t.users.othello;
    const msgId = expectSuccess(await t.as(hamlet).post("/scheduled_messages", { type: "direct", to: [othello.id], content: "while you were out", scheduled_delivery_timestamp: inAnHour() })).scheduled_message_id;
    const target = expectSuccess(await t.as(othello).post("/messages", { type: "direct", to: [hamlet.id], content: "remind me" })).id;
    const reminderId = expectSuccess(await t.as(hamlet).post("/reminders", { message_id: target, scheduled_delivery_timestamp: inAnHour() })).reminder_id;
    const kept = expectSuccess(await t.as(hamlet).post("/scheduled_messages", { type: "direct", to: [othello.id], content: "not yet", scheduled_delivery_timestamp: inAnHour() + 86400 })).scheduled_message_id;
    await t.server.stop();

    // Time passes while the server is down: both items' delivery times move into the past.
    const store = new Store(t.dataDir);
    await store.commit(() => {
      for (const id of [msgId, reminderId]) {
        const r = getScheduled(store, hamlet.id, id)!;
        putScheduled(store, { ...r, deliver_at: Math.floor(Date.now() / 1000) - 60 }, r);
      }
    });
    await store.close();

    const again = await startTestServer({ dataDir: t.dataDir });
    try {
      const remaining = expectSuccess(await again.as(hamlet).get("/scheduled_messages")).scheduled_messages;
      expect(remaining.map((m: any) => m.scheduled_message_id)).toEqual([kept]);
      expect(expectSuccess(await again.as(hamlet).get("/reminders")).reminders).toEqual([]);
      const got = expectSuccess(await again.as(othello).get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow: [{ operator: "dm", operand: [hamlet.id] }] })).messages[0];
      expect(got.content).toBe("<p>while you were out</p>");
      const reminder = expectSuccess(await again.as(hamlet).get("/messages", { anchor: "newest", num_before: 1, num_after: 0, apply_markdown: false })).messages[0];
      expect(reminder.sender_email).toBe("notification-bot@zulip.com");
      expect(reminder.content).toStartWith("You requested a reminder for the following direct message.");
    } finally {
      await again.server.stop();
      await t.stop();
    }
  });
});
