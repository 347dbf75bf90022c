import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, startTestServer, type TestServer } from "../kit";
import { verifyAction } from "../kit/events";

/**
 * State + events consistency for every message action: register, act, apply the
 * events each user received, compare with a fresh register (message state parts).
 */
let s: TestServer;
let denmark: number;
const eventTypes = ["message", "update_message_flags", "update_message", "delete_message", "reaction", "typing", "recent_private_conversations", "starred_messages"];
// realm_user brings `user_id`, which applying direct-message events needs.
const registerParams = { event_types: eventTypes, fetch_event_types: [...eventTypes, "realm_user"] };
const viewers = ["hamlet", "othello", "cordelia", "iago", "polonius"] as const;
const verify = (action: () => Promise<unknown>) => verifyAction(s, action, { viewers: [...viewers], registerParams });

beforeAll(async () => {
  s = await startTestServer();
  const ids = ["iago", "hamlet", "othello", "polonius"].map((n) => (s.users as any)[n].id);
  expectSuccess(await s.as("iago").post("/users/me/subscriptions", { subscriptions: [{ name: "Denmark" }], principals: ids }));
  denmark = expectSuccess(await s.as("iago").get("/get_stream_id", { stream: "Denmark" })).stream_id;
});
afterAll(() => s.stop());

const send = async (who: string, params: Record<string, unknown>) => expectSuccess(await s.as(who as any).post("/messages", params)).id as number;

describe("message actions keep registered state consistent", () => {
  test("direct, group and self messages", async () => {
    const { othello, cordelia, hamlet } = s.users;
    const r = await verify(async () => {
      await send("hamlet", { type: "direct", to: [othello.id], content: "hi @**Othello, the Moor of Venice**" });
      await send("hamlet", { type: "direct", to: [othello.id, cordelia.id], content: "group" });
      await send("hamlet", { type: "direct", to: [hamlet.id], content: "self" });
    });
    expect(r.types.othello).toEqual(["message", "message"]);
    expect(r.types.iago).toEqual([]);
  });

  test("channel message with mentions, then flags", async () => {
    let id = 0;
    await verify(async () => {
      id = await send("othello", { type: "stream", to: "Denmark", topic: "castle", content: "@**all** and @**King Hamlet**" });
    });
    await verify(async () => {
      expectSuccess(await s.as("hamlet").post("/messages/flags", { messages: [id], op: "add", flag: "read" }));
      expectSuccess(await s.as("hamlet").post("/messages/flags", { messages: [id], op: "add", flag: "starred" }));
      expectSuccess(await s.as("iago").post("/messages/flags", { messages: [id], op: "add", flag: "read" }));
      expectSuccess(await s.as("iago").post("/messages/flags", { messages: [id], op: "remove", flag: "read" }));
    });
    await verify(async () => {
      expectSuccess(await s.as("hamlet").post("/messages/flags", { messages: [id], op: "remove", flag: "starred" }));
      expectSuccess(await s.as("polonius").post("/mark_all_as_read"));
      expectSuccess(await s.as("iago").post("/mark_topic_as_read", { stream_id: denmark, topic_name: "castle" }));
    });
  });

  test("edit, move, react, delete", async () => {
    const id = await send("hamlet", { type: "channel", to: denmark, topic: "plans", content: "first" });
    const other = await send("othello", { type: "channel", to: denmark, topic: "plans", content: "second" });
    // Deleting the newest message changes max_message_id, which Zulip's apply_event re-reads from the database.
    await send("othello", { type: "channel", to: denmark, topic: "plans", content: "third" });
    await verify(async () => {
      expectSuccess(await s.as("hamlet").patch(`/messages/${id}`, { content: "now @**Othello, the Moor of Venice**" }));
    });
    await verify(async () => {
      expectSuccess(await s.as("hamlet").patch(`/messages/${id}`, { topic: "new plans", propagate_mode: "change_all" }));
    });
    await verify(async () => {
      expectSuccess(await s.as("othello").post(`/messages/${id}/reactions`, { emoji_name: "tada" }));
      expectSuccess(await s.as("othello").delete(`/messages/${other}`));
    });
  });

  test("a channel's first_message_id follows its first message and its deletion", async () => {
    expectSuccess(await s.as("iago").post("/users/me/subscriptions", { subscriptions: [{ name: "fresh" }], principals: [s.users.iago.id, s.users.hamlet.id] }));
    const fresh = expectSuccess(await s.as("iago").get("/get_stream_id", { stream: "fresh" })).stream_id;
    const channelParams = { event_types: [...eventTypes, "stream", "subscription"], fetch_event_types: [...eventTypes, "realm_user", "stream", "subscription"] };
    let first = 0;
    const r = await verifyAction(s, async () => {
      first = await send("hamlet", { type: "channel", to: fresh, topic: "t", content: "first!" });
      await send("hamlet", { type: "channel", to: fresh, topic: "t", content: "second" });
    }, { viewers: [...viewers], registerParams: channelParams });
    expect(r.types.othello).toContain("stream/update");
    await verifyAction(s, async () => {
      expectSuccess(await s.as("iago").delete(`/messages/${first}`));
    }, { viewers: [...viewers], registerParams: channelParams });
    // Moving the (new) first message to another channel moves first_message_id along.
    const firstNow = await send("hamlet", { type: "channel", to: fresh, topic: "u", content: "later" });
    expectSuccess(await s.as("iago").post("/users/me/subscriptions", { subscriptions: [{ name: "empty" }], principals: [s.users.iago.id, s.users.hamlet.id] }));
    const empty = expectSuccess(await s.as("iago").get("/get_stream_id", { stream: "empty" })).stream_id;
    const r2 = await verifyAction(s, async () => {
      expectSuccess(await s.as("hamlet").patch(`/messages/${firstNow}`, { stream_id: empty, send_notification_to_new_thread: false }));
    }, { viewers: [...viewers], registerParams: channelParams });
    expect(r2.types.othello).toContain("stream/update");
  });
});
