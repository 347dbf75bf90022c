import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, startTestServer, type TestServer } from "../kit";
import { drainEvents, register, verifyAction } from "../kit/events";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  // Othello's welcome message read: his unread state is this file's own messages'.
  expectSuccess(await s.as("othello").post("/mark_all_as_read"));
});
afterAll(() => s.stop());

describe("message events through real queues", () => {
  test("apply_markdown per queue, local_message_id to the sending queue only, flags per user, unread state", async () => {
    const { hamlet, othello } = s.users;
    const hamletHtml = await register(s.as("hamlet"), { apply_markdown: true, event_types: ["message"] });
    const hamletOther = await register(s.as("hamlet"), { apply_markdown: true, event_types: ["message"] });
    const othelloBot = await register(s.as("othello"), { apply_markdown: false, event_types: ["message", "update_message_flags"] });
    const sent = expectSuccess(
      await s.as("hamlet").post("/messages", { type: "direct", to: [othello.id], content: "hi **there** @**Othello, the Moor of Venice**", local_id: "7.5", queue_id: hamletHtml.queue_id, read_by_sender: true }),
    );
    const [mine] = await drainEvents(s.as("hamlet"), hamletHtml.queue_id);
    expect(mine).toMatchObject({ type: "message", local_message_id: "7.5", flags: ["read"] });
    expect(mine.message.content).toContain("<strong>there</strong>");
    expect(mine.raw_content).toBeUndefined();
    const [otherTab] = await drainEvents(s.as("hamlet"), hamletOther.queue_id);
    expect(otherTab.local_message_id).toBeUndefined();
    const [theirs] = await drainEvents(s.as("othello"), othelloBot.queue_id);
    expect(theirs.flags).toEqual(["mentioned"]);
    expect(theirs.message).toMatchObject({ id: sent.id, content: "hi **there** @**Othello, the Moor of Venice**", content_type: "text/x-markdown", sender_id: hamlet.id });

    const state = await register(s.as("othello"), { fetch_event_types: ["message", "update_message_flags", "recent_private_conversations", "starred_messages"] });
    expect(state.max_message_id).toBe(sent.id);
    expect(state.unread_msgs).toMatchObject({ count: 1, pms: [{ other_user_id: hamlet.id, unread_message_ids: [sent.id] }], mentions: [sent.id] });
    // Newest first; the other is his welcome conversation with Welcome Bot.
    expect(state.recent_private_conversations[0]).toEqual({ max_message_id: sent.id, user_ids: [hamlet.id] });
    expect(state.recent_private_conversations).toHaveLength(2);
    expectSuccess(await s.as("othello").post("/messages/flags", { messages: [sent.id], op: "add", flag: "starred" }));
    const after = await register(s.as("othello"), { fetch_event_types: ["starred_messages", "message", "update_message_flags"] });
    expect(after.starred_messages).toEqual([sent.id]);
  });
});

describe("who hears of a change to a message (Zulip's event_recipient_ids_for_action_on_messages)", () => {
  test("someone who left a private channel hears of no reaction, edit or deletion there; in a public channel a recipient still does", async () => {
    const cases = [
      { name: "Protected", extra: { invite_only: true, history_public_to_subscribers: false }, leaverHears: false },
      { name: "Shared", extra: { invite_only: true, history_public_to_subscribers: true }, leaverHears: false },
      { name: "Open", extra: {}, leaverHears: true },
    ];
    for (const { name, extra, leaverHears } of cases) {
      const channel = await s.createChannel("iago", `Audience ${name}`, ["iago", "hamlet", "cordelia"], extra);
      const id = expectSuccess(await s.as("iago").post("/messages", { type: "channel", to: channel, topic: "t", content: "before leaving" })).id;
      // Cordelia received it (she holds its row), then leaves.
      expectSuccess(await s.as("cordelia").delete("/users/me/subscriptions", { subscriptions: [`Audience ${name}`] }));
      const queues = { hamlet: await register(s.as("hamlet"), { event_types: ["reaction", "update_message", "delete_message"] }), cordelia: await register(s.as("cordelia"), { event_types: ["reaction", "update_message", "delete_message"] }) };
      expectSuccess(await s.as("hamlet").post(`/messages/${id}/reactions`, { emoji_name: "smile" }));
      expectSuccess(await s.as("iago").patch(`/messages/${id}`, { content: "edited after" }));
      expectSuccess(await s.as("iago").delete(`/messages/${id}`));
      const types = async (who: "hamlet" | "cordelia") => (await drainEvents(s.as(who), queues[who].queue_id)).map((e) => e.type);
      expect(await types("hamlet")).toEqual(["reaction", "update_message", "delete_message"]);
      expect(await types("cordelia")).toEqual(leaverHears ? ["reaction", "update_message", "delete_message"] : []);
    }
  });
});

describe("unread state of a channel one has left", () => {
  test("its unread messages leave unread_msgs (Zulip's get_raw_unread_data), and come back on resubscribing", async () => {
    const channel = await s.createChannel("iago", "Left behind", ["iago", "othello"]);
    const id = expectSuccess(await s.as("iago").post("/messages", { type: "channel", to: channel, topic: "t", content: "unread for othello" })).id;
    const unreadIds = async () => (await register(s.as("othello"), { fetch_event_types: ["message", "update_message_flags"] })).unread_msgs.streams.flatMap((u: any) => u.unread_message_ids);
    expect(await unreadIds()).toContain(id);
    expectSuccess(await s.as("othello").delete("/users/me/subscriptions", { subscriptions: ["Left behind"] }));
    expect(await unreadIds()).not.toContain(id);
    expectSuccess(await s.as("othello").post("/users/me/subscriptions", { subscriptions: [{ name: "Left behind" }] }));
    expect(await unreadIds()).toContain(id);
  });
});

describe("unread_msgs.count leaves out muted messages (Zulip's aggregate_unread_data)", () => {
  test("a muted topic in an unmuted channel does not count; in a muted channel only unmuted or followed topics do; events keep it", async () => {
    expectSuccess(await s.as("othello").post("/mark_all_as_read"));
    const quiet = await s.createChannel("iago", "Quiet corner", ["iago", "othello"]);
    const loud = await s.createChannel("iago", "Loud hall", ["iago", "othello"]);
    const send = async (to: number, topic: string) => expectSuccess(await s.as("iago").post("/messages", { type: "channel", to, topic, content: "unread" })).id;
    for (const topic of ["plain", "unmuted", "followed"]) await send(quiet, topic);
    for (const topic of ["muted", "plain"]) await send(loud, topic);
    expectSuccess(await s.as("hamlet").post("/messages", { type: "direct", to: [s.users.othello.id], content: "a direct message" }));
    const count = async () => (await register(s.as("othello"), { fetch_event_types: ["message", "update_message_flags"] })).unread_msgs.count;
    const mute = (stream_id: number, value: boolean) => s.as("othello").post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id, property: "is_muted", value }] });
    const policy = (stream_id: number, topic: string, visibility_policy: number) => s.as("othello").post("/user_topics", { stream_id, topic, visibility_policy });
    const verify = (action: () => Promise<unknown>) => verifyAction(s, action, { viewers: ["othello"] });
    expect(await count()).toBe(6);

    await verify(async () => expectSuccess(await policy(loud, "muted", 1)));
    expect(await count()).toBe(5);
    await verify(async () => expectSuccess(await mute(quiet, true)));
    expect(await count()).toBe(2);
    // A new message in the muted channel's plain topic is unread, but not counted.
    await verify(() => send(quiet, "plain"));
    expect(await count()).toBe(2);
    await verify(async () => {
      expectSuccess(await policy(quiet, "Unmuted", 2));
      expectSuccess(await policy(quiet, "followed", 3));
    });
    expect(await count()).toBe(4);
    await verify(async () => expectSuccess(await mute(quiet, false)));
    expect(await count()).toBe(6);
    // All of them are still listed, muted or not.
    const state = await register(s.as("othello"), { fetch_event_types: ["message", "update_message_flags"] });
    expect(state.unread_msgs.streams.flatMap((b: any) => b.unread_message_ids)).toHaveLength(6);
  });
});
