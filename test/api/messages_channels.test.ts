import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectSchema, expectSuccess, recordPublished, startTestServer, type TestServer } from "../kit";
import { GetMessagesByIdsResponse, GetMessagesResponse, MessageHistoryResponse, SendMessageResponse, TopicsResponse, UpdateFlagsForNarrowResponse, UpdateFlagsResponse } from "../../src/schemas/messages";
import { getMessage, MessageFlag } from "../../src/store/messages";
import { getUserFlags } from "../../src/store/user_messages";
import { register, verifyAction } from "../kit/events";
import { getChannel, putChannel } from "../../src/store/channels";
import { doExpireMessages } from "../../src/actions/retention";
import { putUserGroup, systemGroupId, USER_GROUP_SETTINGS } from "../../src/store/user_groups";

let s: TestServer;
let recorded: ReturnType<typeof recordPublished>;
let denmark: number;
let secret: number;

beforeAll(async () => {
  s = await startTestServer();
  recorded = recordPublished(s);
  denmark = await s.createChannel("iago", "Denmark", ["iago", "hamlet", "othello", "polonius"]);
  secret = await s.createChannel("iago", "secret", ["iago", "hamlet"], { invite_only: true });
});
afterAll(() => s.stop());

const ofType = (type: string) => recorded.events.filter((e) => e.event.type === type);

async function send(who: string, to: unknown, topic: string, content: string, extra: Record<string, unknown> = {}): Promise<number> {
  const res = await s.as(who as any).post("/messages", { type: "channel", to, topic, content, ...extra });
  expectSchema(SendMessageResponse, expectSuccess(res));
  return res.body.id;
}

const fetchIds = async (who: string, narrow: unknown, extra: Record<string, unknown> = {}) =>
  expectSuccess(await s.as(who as any).get("/messages", { anchor: "newest", num_before: 100, num_after: 0, narrow, ...extra })).messages.map((m: any) => m.id);

describe("channel messages", () => {
  test("send by ID and by name (legacy stream + subject), events to subscribers only, fetch by channel+topic", async () => {
    recorded.clear();
    const { hamlet, othello, cordelia, iago, polonius } = s.users;
    const a = await send("hamlet", denmark, "castle", "To be or not to be");
    const msgs = ofType("message");
    const reached = msgs.flatMap((e) => e.userIds).sort();
    expect(reached).toEqual([hamlet.id, othello.id, iago.id, polonius.id].sort());
    expect(reached).not.toContain(cordelia.id);
    expect(msgs.find((e) => e.userIds.includes(othello.id))!.event.flags).toEqual([]);

    const res = await s.as("othello").post("/messages", { type: "stream", to: "Denmark", subject: "castle", content: "ghost seen" });
    const b = expectSuccess(res).id;
    const body = expectSuccess(
      await s.as("hamlet").get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow: JSON.stringify([["stream", "Denmark"], ["topic", "castle"]]), apply_markdown: "false" }),
    );
    expectSchema(GetMessagesResponse, body);
    expect(body.messages.map((m: any) => m.id)).toEqual([a, b]);
    const m = body.messages[1];
    expect(m).toMatchObject({ type: "stream", display_recipient: "Denmark", stream_id: denmark, subject: "castle", content: "ghost seen", content_type: "text/x-markdown" });
    expect(await fetchIds("hamlet", [{ operator: "channel", operand: denmark }, { operator: "topic", operand: "CASTLE" }])).toEqual([a, b]);
  });

  test("non-subscribers read public history as historical and may post; private channels stay hidden", async () => {
    const { cordelia } = s.users;
    const id = await send("hamlet", denmark, "history", "old news");
    const got = expectSuccess(await s.as("cordelia").get(`/messages/${id}`));
    expect(got.message.flags.sort()).toEqual(["historical", "read"]);
    expect(await fetchIds("cordelia", [{ operator: "channel", operand: "Denmark" }])).toContain(id);
    // Zulip lets anyone post to a public channel without subscribing; the sender gets a row.
    const own = await send("cordelia", denmark, "history", "drive-by", { read_by_sender: true });
    expect(expectSuccess(await s.as("cordelia").get(`/messages/${own}`)).message.flags).toEqual(["read"]);
    expect(cordelia.id).toBeGreaterThan(0);

    const hidden = await send("hamlet", secret, "plans", "shh");
    expectError(await s.as("cordelia").get(`/messages/${hidden}`), 400, "BAD_REQUEST", "Invalid message(s)");
    expectError(await s.as("cordelia").post("/messages", { type: "stream", to: "secret", topic: "x", content: "hi" }), 400, "STREAM_DOES_NOT_EXIST");
    expectError(await s.as("cordelia").post("/messages", { type: "channel", to: secret, topic: "x", content: "hi" }), 400, "BAD_REQUEST");
    expectError(await s.as("cordelia").get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow: [["stream", "secret"]] }), 400, "BAD_NARROW");
    expect(await fetchIds("cordelia", [{ operator: "search", operand: "shh" }])).toEqual([]);
    expect(await fetchIds("hamlet", [{ operator: "search", operand: "shh" }])).toEqual([hidden]);
  });

  test("guests see only channels they are subscribed to", async () => {
    const other = await s.createChannel("iago", "Elsinore", ["iago"]);
    const id = await send("iago", other, "t", "guests keep out");
    expectError(await s.as("polonius").get(`/messages/${id}`), 400, "BAD_REQUEST", "Invalid message(s)");
    expectError(await s.as("polonius").post("/messages", { type: "channel", to: other, topic: "t", content: "x" }), 400, "BAD_REQUEST");
    await send("polonius", denmark, "guest", "a guest speaks");
  });

  test("mentions: user, wildcard, silent, group; is:mentioned", async () => {
    const { othello, iago, hamlet } = s.users;
    // No group-creation endpoint yet: write a user-defined group through the store.
    const store = s.server.h.store;
    await store.commit(() => {
      const id = store.nextId("user_group");
      const everyone = systemGroupId(store, "role:everyone");
      putUserGroup(store, {
        id,
        name: "actors",
        description: "players",
        is_system_group: false,
        direct_subgroup_ids: [],
        creator_id: iago.id,
        date_created: 0,
        deactivated: false,
        settings: Object.fromEntries(USER_GROUP_SETTINGS.map((k) => [k, everyone])) as any,
      });
      store.dbs.userGroupMembers.put([id, othello.id], true);
    });
    recorded.clear();
    const id = await send("hamlet", denmark, "mentions", "@**all** hear @_**Iago** and @*actors*", { read_by_sender: true });
    const forOthello = ofType("message").find((e) => e.userIds.includes(othello.id))!.event.flags as string[];
    expect(forOthello.sort()).toEqual(["mentioned", "wildcard_mentioned"]);
    const forIago = ofType("message").find((e) => e.userIds.includes(iago.id))!.event.flags as string[];
    expect(forIago).toEqual(["wildcard_mentioned"]);
    const forHamlet = ofType("message").find((e) => e.userIds.includes(hamlet.id))!.event.flags as string[];
    expect(forHamlet).toEqual(["read"]);
    expect(await fetchIds("othello", [{ operator: "is", operand: "mentioned" }])).toContain(id);
  });

  test("topic rules: (no topic), truncation, empty-topic display, topics list", async () => {
    const empty = await send("hamlet", denmark, "(no topic)", "general");
    const legacy = expectSuccess(await s.as("hamlet").get(`/messages/${empty}`));
    expect(legacy.message.subject).toBe("general chat");
    const modern = expectSuccess(await s.as("hamlet").get(`/messages/${empty}`, { allow_empty_topic_name: true }));
    expect(modern.message.subject).toBe("");
    const long = await send("hamlet", denmark, "x".repeat(80), "long topic");
    expect(expectSuccess(await s.as("hamlet").get(`/messages/${long}`)).message.subject.length).toBe(60);
    expectError(await s.as("hamlet").post("/messages", { type: "channel", to: denmark, topic: "bad\u0000topic", content: "x" }), 400, "BAD_REQUEST");
    const topics = expectSuccess(await s.as("othello").get(`/users/me/${denmark}/topics`, { allow_empty_topic_name: true }));
    expectSchema(TopicsResponse, topics);
    expect(topics.topics[0]).toEqual({ name: "x".repeat(57) + "...", max_id: long });
    expect(topics.topics.map((t: any) => t.name)).toContain("");
    expectError(await s.as("cordelia").get(`/users/me/${secret}/topics`), 400, "BAD_REQUEST");
  });

  test("the empty topic in register's unread_msgs and user_topics and in update_message_flags: the display name without empty_topic_name (FL 334)", async () => {
    const empty = await send("hamlet", denmark, "(no topic)", "unread in general chat");
    expectSuccess(await s.as("othello").post("/user_topics", { stream_id: denmark, topic: "", visibility_policy: 3 }));
    const legacyCaps = { client_capabilities: { user_settings_object: true } };
    const legacy = await register(s.as("othello"), { ...legacyCaps, event_types: ["message", "update_message_flags", "user_topic"] });
    const modern = await register(s.as("othello"), { event_types: ["message", "update_message_flags", "user_topic"] });
    const unreadTopic = (state: any) => state.unread_msgs.streams.find((e: any) => e.unread_message_ids.includes(empty))?.topic;
    expect(unreadTopic(legacy)).toBe("general chat");
    expect(unreadTopic(modern)).toBe("");
    const followed = (state: any) => state.user_topics.filter((t: any) => t.stream_id === denmark && t.visibility_policy === 3).map((t: any) => t.topic_name);
    expect(followed(legacy)).toContain("general chat");
    expect(followed(modern)).toContain("");

    expectSuccess(await s.as("othello").post("/messages/flags", { messages: [empty], op: "add", flag: "read" }));
    expectSuccess(await s.as("othello").post("/messages/flags", { messages: [empty], op: "remove", flag: "read" }));
    const unreadEvent = async (state: any) => {
      const events = expectSuccess(await s.as("othello").get("/events", { queue_id: state.queue_id, last_event_id: -1, dont_block: true })).events;
      return events.find((e: any) => e.type === "update_message_flags" && e.op === "remove");
    };
    expect((await unreadEvent(legacy)).message_details[String(empty)].topic).toBe("general chat");
    expect((await unreadEvent(modern)).message_details[String(empty)].topic).toBe("");
  });

  test("last_edit_timestamp is for content edits, last_moved_timestamp for moves other than resolving (FL 365)", async () => {
    const id = await send("hamlet", denmark, "timestamps", "first words");
    const view = async () => expectSuccess(await s.as("othello").get(`/messages/${id}`)).message;
    expectSuccess(await s.as("hamlet").patch(`/messages/${id}`, { topic: "✔ timestamps" }));
    let m = await view();
    expect(m.last_moved_timestamp).toBeUndefined();
    expect(m.last_edit_timestamp).toBeUndefined();
    expect(m.edit_history[0]).toMatchObject({ prev_topic: "timestamps", topic: "✔ timestamps" });
    expectSuccess(await s.as("hamlet").patch(`/messages/${id}`, { content: "second words" }));
    m = await view();
    expect(m.last_edit_timestamp).toBeGreaterThan(0);
    expect(m.last_moved_timestamp).toBeUndefined();
    // The whole topic, Notification Bot's resolved notice included: no resolved topic is left behind.
    expectSuccess(await s.as("hamlet").patch(`/messages/${id}`, { topic: "timestamps elsewhere", propagate_mode: "change_all" }));
    m = await view();
    expect(m.last_moved_timestamp).toBeGreaterThan(0);
  });

  test("move topic with change_all, history, events; time limit error", async () => {
    const { othello, cordelia } = s.users;
    const a = await send("hamlet", denmark, "old name", "one");
    const b = await send("othello", denmark, "old name", "two");
    recorded.clear();
    expectSuccess(await s.as("othello").patch(`/messages/${a}`, { topic: "new name", propagate_mode: "change_all" }));
    const moved = expectSuccess(await s.as("hamlet").get("/messages", { anchor: "oldest", num_before: 0, num_after: 10, narrow: [["stream", "Denmark"], ["topic", "new name"]] })).messages;
    expect(moved.map((m: any) => m.id).slice(0, 2)).toEqual([a, b]);
    // Notification Bot tells the new thread (send_notification_to_new_thread defaults to true).
    expect(moved[2]).toMatchObject({ sender_email: "notification-bot@zulip.com" });
    expect(moved[2].content).toContain("This topic was moved here from");
    expect(moved[2].content).toContain('class="stream-topic"');
    // A topic the #**…>…** syntax cannot carry gets Zulip's plain link, its characters escaped.
    const odd = await send("hamlet", denmark, "a > b*", "odd");
    expectSuccess(await s.as("othello").patch(`/messages/${odd}`, { topic: "plain", propagate_mode: "change_one" }));
    const notice = expectSuccess(await s.as("hamlet").get("/messages", { anchor: "newest", num_before: 1, num_after: 0, apply_markdown: false, narrow: [["stream", "Denmark"], ["topic", "plain"]] })).messages[0];
    expect(notice.content).toBe(`A message was moved here from [#Denmark > a &gt; b&#42;](#narrow/channel/${denmark}-Denmark/topic/a.20.3E.20b*) by @_**Othello, the Moor of Venice|${othello.id}**.`);
    expect(await fetchIds("hamlet", [["stream", "Denmark"], ["topic", "old name"]])).toEqual([]);
    const ev = ofType("update_message")[0].event as any;
    expect(ev).toMatchObject({ message_ids: [a, b], orig_subject: "old name", subject: "new name", propagate_mode: "change_all", stream_id: denmark });
    expect(ofType("update_message").flatMap((e) => e.userIds)).toContain(othello.id);
    // Zulip tells recipients and subscribers, not every user who could read the channel.
    expect(ofType("update_message").flatMap((e) => e.userIds)).not.toContain(cordelia.id);
    const got = expectSuccess(await s.as("hamlet").get(`/messages/${b}`));
    expect(got.message.edit_history[0]).toMatchObject({ prev_topic: "old name", topic: "new name" });
    expect(got.message.last_moved_timestamp).toBeGreaterThan(0);
    // FL 365: a move is no content edit.
    expect(got.message.last_edit_timestamp).toBeUndefined();

    // Age the first message past the 7-day limit for members.
    await s.server.h.store.commit(() => {
      const m = getMessage(s.server.h.store, a)!;
      s.server.h.store.dbs.messages.put(a, { ...m, timestamp: m.timestamp - 8 * 86400 });
    });
    const err = expectError(await s.as("othello").patch(`/messages/${b}`, { topic: "newer", propagate_mode: "change_all" }), 400, "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED");
    // The topic holds a, b and the Notification Bot message; only a is too old.
    expect(err).toMatchObject({ first_message_id_allowed_to_move: b, total_messages_in_topic: 3, total_messages_allowed_to_move: 2 });
    expectError(await s.as("othello").patch(`/messages/${a}`, { topic: "newer" }), 400, "BAD_REQUEST");
    // Moderators and above are not limited.
    expectSuccess(await s.as("iago").patch(`/messages/${b}`, { topic: "newest", propagate_mode: "change_all" }));
  });

  test("move to another channel gives new subscribers rows; resolve topic; is:resolved", async () => {
    const target = await s.createChannel("iago", "Norway", ["iago", "cordelia", "hamlet"]);
    const a = await send("hamlet", denmark, "migrate", "moving out");
    expectSuccess(await s.as("hamlet").patch(`/messages/${a}`, { stream_id: target, propagate_mode: "change_all" }));
    const got = expectSuccess(await s.as("cordelia").get(`/messages/${a}`));
    expect(got.message).toMatchObject({ stream_id: target, display_recipient: "Norway" });
    expect(got.message.edit_history[0]).toMatchObject({ prev_stream: denmark, stream: target });
    expectSuccess(await s.as("hamlet").patch(`/messages/${a}`, { topic: "✔ migrate" }));
    const resolved = expectSuccess(await s.as("hamlet").get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow: [{ operator: "is", operand: "resolved" }] })).messages;
    expect(resolved[0].id).toBe(a);
    expect(resolved.at(-1).content).toBe(`<p><span class="user-mention silent" data-user-id="${s.users.hamlet.id}">King Hamlet</span> has marked this topic as resolved.</p>`);
  });

  test("resolve notices start read per resolved_topic_notice_auto_read_policy: always, except_followed (the default) unless followed, never", async () => {
    const a = await send("hamlet", denmark, "notice reads", "a question");
    expectSuccess(await s.as("othello").patch("/settings", { resolved_topic_notice_auto_read_policy: "never" }));
    expectSuccess(await s.as("polonius").patch("/settings", { resolved_topic_notice_auto_read_policy: "always" }));
    // Iago keeps the default, except_followed, and follows the topic.
    expectSuccess(await s.as("iago").post("/user_topics", { stream_id: denmark, topic: "notice reads", visibility_policy: 3 }));
    try {
      const r = await verifyAction(s, async () => expectSuccess(await s.as("hamlet").patch(`/messages/${a}`, { topic: "✔ notice reads" })), { viewers: ["iago", "othello", "polonius"] });
      const noticeFlags = (who: "iago" | "othello" | "polonius") => r.events[who].find((e: any) => e.type === "message")!.flags as string[];
      expect(noticeFlags("polonius")).toContain("read");
      expect(noticeFlags("othello")).not.toContain("read");
      // The follow moved with the topic to its resolved name.
      expect(noticeFlags("iago")).not.toContain("read");
      // Unresolving: Iago no longer follows the topic now, so his default marks it read.
      expectSuccess(await s.as("iago").post("/user_topics", { stream_id: denmark, topic: "✔ notice reads", visibility_policy: 0 }));
      const back = await verifyAction(s, async () => expectSuccess(await s.as("hamlet").patch(`/messages/${a}`, { topic: "notice reads" })), { viewers: ["iago", "othello"] });
      expect(back.events.iago.find((e: any) => e.type === "message")!.flags).toContain("read");
      expect(back.events.othello.find((e: any) => e.type === "message")!.flags).not.toContain("read");
    } finally {
      expectSuccess(await s.as("othello").patch("/settings", { resolved_topic_notice_auto_read_policy: "except_followed" }));
      expectSuccess(await s.as("polonius").patch("/settings", { resolved_topic_notice_auto_read_policy: "except_followed" }));
    }
  });

  test("resolving a topic follows can_resolve_topics_group (organization or channel), with no time limit", async () => {
    const a = await send("othello", denmark, "to resolve", "a question");
    try {
      expectSuccess(await s.as("iago").patch("/realm", { can_resolve_topics_group: JSON.stringify({ new: systemGroupId(s.server.h.store, "role:administrators") }) }));
      expectError(await s.as("othello").patch(`/messages/${a}`, { topic: "✔ to resolve" }), 400, "BAD_REQUEST", "You don't have permission to resolve topics in this channel.");
      // Renaming is still the moving permission's business.
      expectSuccess(await s.as("othello").patch(`/messages/${a}`, { topic: "renamed" }));
      // The channel's own group can grant it.
      expectSuccess(await s.as("iago").patch(`/streams/${denmark}`, { can_resolve_topics_group: JSON.stringify({ new: systemGroupId(s.server.h.store, "role:members") }) }));
      expectSuccess(await s.as("othello").patch(`/messages/${a}`, { topic: "✔ renamed" }));
      // Past the time limit for moving, resolving still works; renaming does not.
      const ageMessage = (id: number) =>
        s.server.h.store.commit(() => s.server.h.store.dbs.messages.put(id, { ...s.server.h.store.dbs.messages.get(id), timestamp: Math.floor(Date.now() / 1000) - 30 * 86400 }));
      const old = await send("othello", denmark, "old topic", "long ago");
      await ageMessage(old);
      const tooLate = "The time limit for editing this message's topic has passed.";
      expectError(await s.as("othello").patch(`/messages/${old}`, { topic: "older topic" }), 400, "BAD_REQUEST", tooLate);
      // Resolving is exactly the mark before the old name; a second mark is a rename.
      expectError(await s.as("othello").patch(`/messages/${old}`, { topic: "✔ ✔ old topic" }), 400, "BAD_REQUEST", tooLate);
      expectSuccess(await s.as("othello").patch(`/messages/${old}`, { topic: "✔ old topic" }));
      expectSuccess(await s.as("othello").patch(`/messages/${old}`, { topic: "old topic" }));
      // A name at the length limit is resolved too: the mark is judged before the cut.
      const long = "l".repeat(60);
      const longId = await send("othello", denmark, long, "x");
      await ageMessage(longId);
      expectSuccess(await s.as("othello").patch(`/messages/${longId}`, { topic: `✔ ${long}` }));
      expect(expectSuccess(await s.as("othello").get(`/messages/${longId}`)).message.subject).toStartWith("✔ lll");
    } finally {
      expectSuccess(await s.as("iago").patch("/realm", { can_resolve_topics_group: JSON.stringify({ new: systemGroupId(s.server.h.store, "role:everyone") }) }));
      expectSuccess(await s.as("iago").patch(`/streams/${denmark}`, { can_resolve_topics_group: JSON.stringify({ new: systemGroupId(s.server.h.store, "role:nobody") }) }));
    }
  });

  test("new topics follow can_create_topic_group; a bot may use its owner's permission", async () => {
    await send("othello", denmark, "existing", "already here");
    const bot = await s.createBot("iago", { full_name: "Topic bot", short_name: "topicbot" });
    const botClient = s.as(bot);
    const denied = "You do not have permission to create new topics in this channel.";
    try {
      expectSuccess(await s.as("iago").patch(`/streams/${denmark}`, { can_create_topic_group: JSON.stringify({ new: systemGroupId(s.server.h.store, "role:administrators") }) }));
      // An existing topic (in any case) is fine; a new one is not.
      await send("othello", denmark, "EXISTING", "reply");
      expectError(await s.as("othello").post("/messages", { type: "stream", to: denmark, topic: "brand new", content: "x" }), 400, "BAD_REQUEST", denied);
      const moved = await send("othello", denmark, "existing", "move me");
      expectError(await s.as("othello").patch(`/messages/${moved}`, { topic: "brand new" }), 400, "BAD_REQUEST", denied);
      // Resolving is not creating a topic.
      expectSuccess(await s.as("othello").patch(`/messages/${moved}`, { topic: "✔ existing", propagate_mode: "change_all" }));
      // Administrators may, and so may a bot whose owner may.
      expectSuccess(await botClient.post("/messages", { type: "stream", to: denmark, topic: "bot topic", content: "beep" }));
      expectSuccess(await s.as("iago").post("/messages", { type: "stream", to: denmark, topic: "admin topic", content: "x" }));
      // role:nobody: nobody at all.
      expectSuccess(await s.as("iago").patch(`/streams/${denmark}`, { can_create_topic_group: JSON.stringify({ new: systemGroupId(s.server.h.store, "role:nobody") }) }));
      expectError(await s.as("iago").post("/messages", { type: "stream", to: denmark, topic: "another", content: "x" }), 400, "BAD_REQUEST", denied);
      await send("iago", denmark, "admin topic", "still fine");
    } finally {
      expectSuccess(await s.as("iago").patch(`/streams/${denmark}`, { can_create_topic_group: JSON.stringify({ new: systemGroupId(s.server.h.store, "role:everyone") }) }));
    }
  });

  test("mark_stream_as_read, mark_topic_as_read, first_unread in a channel", async () => {
    const x = await send("hamlet", denmark, "reading", "r1");
    const y = await send("hamlet", denmark, "other", "r2");
    const unread = await fetchIds("othello", [{ operator: "is", operand: "unread" }, { operator: "channel", operand: denmark }]);
    expect(unread).toEqual(expect.arrayContaining([x, y]));
    expectSuccess(await s.as("othello").post("/mark_topic_as_read", { stream_id: denmark, topic_name: "reading" }));
    expect(await fetchIds("othello", [{ operator: "is", operand: "unread" }, { operator: "channel", operand: denmark }, { operator: "topic", operand: "reading" }])).toEqual([]);
    expect(await fetchIds("othello", [{ operator: "is", operand: "unread" }, { operator: "channel", operand: denmark }])).toContain(y);
    expectSuccess(await s.as("othello").post("/mark_stream_as_read", { stream_id: denmark }));
    expect(await fetchIds("othello", [{ operator: "is", operand: "unread" }, { operator: "channel", operand: denmark }])).toEqual([]);
    expectError(await s.as("cordelia").post("/mark_stream_as_read", { stream_id: secret }), 400, "BAD_REQUEST");
  });

  test("has:link, channels:public, negated channel", async () => {
    const link = await send("hamlet", denmark, "links", "see https://example.com/pic.png");
    const priv = await send("hamlet", secret, "links", "private link https://example.com");
    expect(await fetchIds("hamlet", [{ operator: "has", operand: "image" }])).toEqual([link]);
    const links = await fetchIds("hamlet", [{ operator: "has", operand: "link" }]);
    expect(links).toEqual(expect.arrayContaining([link, priv]));
    expect(await fetchIds("hamlet", [{ operator: "has", operand: "link" }, { operator: "channels", operand: "public" }])).not.toContain(priv);
    expect(await fetchIds("hamlet", [{ operator: "has", operand: "link" }, { operator: "channel", operand: "secret", negated: true }])).not.toContain(priv);
  });

  test("channel typing goes to other subscribers; delete_topic is for administrators", async () => {
    const { hamlet, othello, cordelia } = s.users;
    recorded.clear();
    expectSuccess(await s.as("hamlet").post("/typing", { op: "start", type: "channel", stream_id: denmark, topic: "castle" }));
    const t = ofType("typing")[0];
    expect(t.event).toMatchObject({ message_type: "stream", stream_id: denmark, topic: "castle" });
    expect(t.userIds).toContain(othello.id);
    expect(t.userIds).not.toContain(hamlet.id);
    expect(t.userIds).not.toContain(cordelia.id);
    // A topic is cut as a message's would be, not broadcast at any length.
    recorded.clear();
    expectSuccess(await s.as("hamlet").post("/typing", { op: "start", type: "channel", stream_id: denmark, topic: "x".repeat(100_000) }));
    expect([...(ofType("typing")[0].event.topic as string)].length).toBeLessThanOrEqual(60);

    const doomed = await send("hamlet", denmark, "doomed", "bye");
    expectError(await s.as("hamlet").post(`/streams/${denmark}/delete_topic`, { topic_name: "doomed" }), 400, "UNAUTHORIZED_PRINCIPAL");
    recorded.clear();
    expect(expectSuccess(await s.as("iago").post(`/streams/${denmark}/delete_topic`, { topic_name: "doomed" })).complete).toBe(true);
    expect(ofType("delete_message")[0].event).toMatchObject({ message_ids: [doomed], stream_id: denmark, topic: "doomed" });
    expect(await fetchIds("hamlet", [["stream", "Denmark"], ["topic", "doomed"]])).toEqual([]);
  });

  test("matches_narrow", async () => {
    const id = await send("hamlet", denmark, "matching", "a quick brown fox");
    const other = await send("hamlet", denmark, "matching", "nothing here");
    const res = expectSuccess(await s.as("othello").get("/messages/matches_narrow", { msg_ids: [id, other], narrow: [{ operator: "search", operand: "quick" }] }));
    expect(Object.keys(res.messages)).toEqual([String(id)]);
    expect(res.messages[String(id)].match_content).toBe('<p>a <span class="highlight">quick</span> brown fox</p>');
  });

  test("retention removes expired channel messages with their rows", async () => {
    const h = s.server.h;
    const keep = await s.createChannel("iago", "ephemeral", ["iago", "hamlet"]);
    const old = await send("hamlet", keep, "t", "old message");
    const fresh = await send("hamlet", keep, "t", "fresh message");
    await h.store.commit(() => {
      const ch = getChannel(h.store, keep)!;
      putChannel(h.store, { ...ch, message_retention_days: 1 });
      const m = getMessage(h.store, old)!;
      h.store.dbs.messages.put(old, { ...m, timestamp: m.timestamp - 2 * 86400 });
    });
    expect(await doExpireMessages(h)).toBe(1);
    expectError(await s.as("hamlet").get(`/messages/${old}`), 400, "BAD_REQUEST", "Invalid message(s)");
    expect(await fetchIds("hamlet", [{ operator: "channel", operand: keep }])).toEqual([fresh]);
    expect(await fetchIds("hamlet", [{ operator: "search", operand: "old" }])).not.toContain(old);
    expect(h.store.dbs.userMessages.get([s.users.hamlet.id, old])).toBeUndefined();
  });

  test("protected history: new subscribers of a private channel see only what they received; admins without subscription see nothing", async () => {
    const vault = await s.createChannel("hamlet", "vault", ["hamlet"], { invite_only: true, history_public_to_subscribers: false });
    const before = await send("hamlet", vault, "t", "before othello");
    await send("hamlet", vault, "hidden topic", "before othello too");
    expectSuccess(await s.as("hamlet").post("/users/me/subscriptions", { subscriptions: [{ name: "vault" }], principals: [s.users.othello.id] }));
    const after = await send("hamlet", vault, "t", "after othello");
    expect(await fetchIds("othello", [{ operator: "channel", operand: vault }])).toEqual([after]);
    expect(expectSuccess(await s.as("othello").get(`/users/me/${vault}/topics`)).topics).toEqual([{ name: "t", max_id: after }]);
    expect(expectSuccess(await s.as("hamlet").get(`/users/me/${vault}/topics`)).topics.map((t: any) => t.name)).toEqual(["t", "hidden topic"]);
    expectError(await s.as("othello").get(`/messages/${before}`), 400, "BAD_REQUEST", "Invalid message(s)");
    expectError(await s.as("iago").get(`/messages/${after}`), 400, "BAD_REQUEST", "Invalid message(s)");
    // Starring a message one cannot see is refused; starring a visible historical one creates a row.
    expectError(await s.as("othello").post("/messages/flags", { messages: [before], op: "add", flag: "starred" }), 400, "BAD_REQUEST", "Invalid message(s)");
    // Nor does a later subscriber hear of edits and reactions to what they cannot see.
    recorded.clear();
    expectSuccess(await s.as("hamlet").patch(`/messages/${before}`, { content: "before othello, edited" }));
    expectSuccess(await s.as("hamlet").post(`/messages/${before}/reactions`, { emoji_name: "smile" }));
    const heard = [...recorded.ofType("update_message"), ...recorded.ofType("reaction")];
    expect(heard.length).toBe(2);
    for (const e of heard) expect(e.userIds).not.toContain(s.users.othello.id);
    const open = await send("hamlet", denmark, "t", "public");
    expectSuccess(await s.as("cordelia").post("/messages/flags", { messages: [open], op: "add", flag: "starred" }));
    expect(expectSuccess(await s.as("cordelia").get(`/messages/${open}`)).message.flags.sort()).toEqual(["historical", "read", "starred"]);
  });

  test("who may post: can_send_message_group and archived channels", async () => {
    const admins = expectSuccess(await s.as("iago").get("/user_groups")).user_groups.find((g: any) => g.name === "role:administrators").id;
    const announce = await s.createChannel("iago", "announce", ["iago", "hamlet"], { can_send_message_group: admins });
    expectError(await s.as("hamlet").post("/messages", { type: "channel", to: announce, topic: "t", content: "x" }), 400, "BAD_REQUEST", "You do not have permission to post in this channel.");
    await send("iago", announce, "t", "official");
  });

  test("flags/narrow: read removal skips unsubscribed channels and names them", async () => {
    const id = await send("cordelia", denmark, "drive-by", "cordelia was here");
    const res = expectSuccess(
      await s.as("cordelia").post("/messages/flags/narrow", { anchor: id, num_before: 0, num_after: 0, narrow: [["stream", "Denmark"]], op: "remove", flag: "read" }),
    );
    expect(res).toMatchObject({ processed_count: 1, updated_count: 0, ignored_because_not_subscribed_channels: [denmark] });
    const add = expectSuccess(
      await s.as("hamlet").post("/messages/flags/narrow", { anchor: "newest", num_before: 5, num_after: 0, narrow: [["stream", "Denmark"]], op: "add", flag: "read" }),
    );
    // Only when marking unread: "only present when flag is read and op is remove".
    expect("ignored_because_not_subscribed_channels" in add).toBe(false);
    const star = expectSuccess(
      await s.as("cordelia").post("/messages/flags/narrow", { anchor: id, num_before: 0, num_after: 0, narrow: [["stream", "Denmark"]], op: "remove", flag: "starred" }),
    );
    expect("ignored_because_not_subscribed_channels" in star).toBe(false);
    expectSchema(UpdateFlagsForNarrowResponse, star);
    const nothingSkipped = expectSuccess(
      await s.as("hamlet").post("/messages/flags/narrow", { anchor: id, num_before: 0, num_after: 0, narrow: [["stream", "Denmark"]], op: "remove", flag: "read" }),
    );
    expect(nothingSkipped.ignored_because_not_subscribed_channels).toEqual([]);
  });

  test("POST /messages/flags: read removal skips unsubscribed channels and names them (FL 355)", async () => {
    const id = await send("cordelia", denmark, "drive-by flags", "cordelia again");
    const dm = expectSuccess(await s.as("hamlet").post("/messages", { type: "direct", to: [s.users.cordelia.id], content: "a word" })).id;
    expectSuccess(await s.as("cordelia").post("/messages/flags", { messages: [id, dm], op: "add", flag: "read" }));
    const before = getUserFlags(s.server.h.store, s.users.cordelia.id, id);
    expect(before! & MessageFlag.read).toBe(MessageFlag.read);
    const res = expectSuccess(await s.as("cordelia").post("/messages/flags", { messages: [id, dm], op: "remove", flag: "read" }));
    expectSchema(UpdateFlagsResponse, res);
    expect(res).toMatchObject({ messages: [id, dm], ignored_because_not_subscribed_channels: [denmark] });
    expect(getUserFlags(s.server.h.store, s.users.cordelia.id, id)).toBe(before);
    expect(getUserFlags(s.server.h.store, s.users.cordelia.id, dm)! & MessageFlag.read).toBe(0);
    const starring = expectSuccess(await s.as("cordelia").post("/messages/flags", { messages: [id], op: "add", flag: "starred" }));
    expect("ignored_because_not_subscribed_channels" in starring).toBe(false);
    const reading = expectSuccess(await s.as("cordelia").post("/messages/flags", { messages: [dm], op: "add", flag: "read" }));
    expect("ignored_because_not_subscribed_channels" in reading).toBe(false);
    const unreadDm = expectSuccess(await s.as("cordelia").post("/messages/flags", { messages: [dm], op: "remove", flag: "read" }));
    expect(unreadDm.ignored_because_not_subscribed_channels).toEqual([]);
  });

  test("a topic link names the topic's newest message the writer can read (FL 400; the oldest before), so it follows the topic when moved", async () => {
    await send("hamlet", denmark, "linked castle", "the first");
    const latest = await send("hamlet", denmark, "linked castle", "the second");
    const link = await send("othello", denmark, "elsewhere", "see #**Denmark>linked castle** and #**Denmark>no such topic**");
    const html = expectSuccess(await s.as("othello").get(`/messages/${link}`)).message.content;
    expect(html).toContain(`href="/#narrow/channel/${denmark}-Denmark/topic/linked.20castle/with/${latest}"`);
    expect(html).toContain(`href="/#narrow/channel/${denmark}-Denmark/topic/no.20such.20topic"`);
    // A private channel's topic, linked by someone who cannot read it: no channel link at all.
    const outside = await send("othello", denmark, "elsewhere", "#**secret>plans**");
    expect(expectSuccess(await s.as("othello").get(`/messages/${outside}`)).message.content).not.toContain("stream-topic");
  });

  test("a mention of a deactivated user renders silent, as Zulip renders it", async () => {
    const yorick = await s.createUser("yorick");
    expectSuccess(await s.as("iago").delete(`/users/${yorick.id}`));
    const full = expectSuccess(await s.as("iago").get(`/users/${yorick.id}`)).user.full_name;
    const id = await send("hamlet", denmark, "alas", `alas @**${full}**`);
    const html = expectSuccess(await s.as("othello").get(`/messages/${id}`)).message.content;
    expect(html).toContain(`<span class="user-mention silent" data-user-id="${yorick.id}">${full}</span>`);
    // A deactivated namesake does not make an active user's name ambiguous.
    const namesake = await s.createUser("yorick2");
    expectSuccess(await s.as("iago").patch(`/users/${namesake.id}`, { full_name: full }));
    const again = await send("hamlet", denmark, "alas", `alas @**${full}**`);
    expect(expectSuccess(await s.as("othello").get(`/messages/${again}`)).message.content).toContain(
      `<span class="user-mention" data-user-id="${namesake.id}">@${full}</span>`,
    );
  });

  test("GET /messages by message_ids (FL 300): the readable ones matching the narrow, oldest first; not with an anchor", async () => {
    const a = await send("hamlet", denmark, "by ids", "one");
    const b = await send("hamlet", denmark, "by ids", "two");
    const other = await send("hamlet", denmark, "elsewhere", "three");
    const hidden = await send("iago", secret, "private", "not for othello");
    const res = expectSuccess(await s.as("othello").get("/messages", { message_ids: [other, b, a, hidden, b, 999999] }));
    expectSchema(GetMessagesByIdsResponse, res);
    expect(res.anchor).toBeUndefined();
    expect(res.messages.map((m: any) => m.id)).toEqual([a, b, other]);
    const narrowed = expectSuccess(await s.as("othello").get("/messages", { message_ids: [a, b, other], narrow: [["stream", "Denmark"], ["topic", "by ids"]] }));
    expect(narrowed.messages.map((m: any) => m.id)).toEqual([a, b]);
    const refused = expectError(await s.as("othello").get("/messages", { message_ids: [a], anchor: "newest", num_before: 1 }), 400, "INCOMPATIBLE_PARAMETERS",
      "Unsupported parameter combination: num_before, num_after, anchor, message_ids, include_anchor, use_first_unread_anchor");
    expect(refused.parameters).toBe("num_before, num_after, anchor, message_ids, include_anchor, use_first_unread_anchor");
    // Counts of zero are no combination.
    expect(expectSuccess(await s.as("othello").get("/messages", { message_ids: [a], num_before: 0, num_after: 0 })).messages.length).toBe(1);
  });

  test("GET /messages/{id}/history: the empty topic as the display name unless allow_empty_topic_name (FL 334)", async () => {
    const id = await send("hamlet", denmark, "(no topic)", "history words");
    expectSuccess(await s.as("hamlet").patch(`/messages/${id}`, { topic: "named later" }));
    const legacy = expectSuccess(await s.as("hamlet").get(`/messages/${id}/history`)).message_history;
    expect(legacy.map((e: any) => [e.topic, e.prev_topic])).toEqual([["general chat", undefined], ["named later", "general chat"]]);
    const modern = expectSuccess(await s.as("hamlet").get(`/messages/${id}/history`, { allow_empty_topic_name: true })).message_history;
    expect(modern.map((e: any) => [e.topic, e.prev_topic])).toEqual([["", undefined], ["named later", ""]]);
  });

  test("GET /messages/{id}/history marks what a content edit changed, as Zulip's content_html_diff does", async () => {
    const id = await send("hamlet", denmark, "diffed", "content before edit");
    expectSuccess(await s.as("hamlet").patch(`/messages/${id}`, { content: "content after edit" }));
    expectSuccess(await s.as("hamlet").patch(`/messages/${id}`, { topic: "diffed and moved" }));
    const history = expectSuccess(await s.as("othello").get(`/messages/${id}/history`));
    expectSchema(MessageHistoryResponse, history);
    const [original, edited, moved] = history.message_history;
    expect(original.content_html_diff).toBeUndefined();
    // Zulip's own test of highlight_html_differences expects exactly this.
    expect(edited.content_html_diff).toBe(
      '<div><p>content <span class="highlight_text_inserted">after</span> <span class="highlight_text_deleted">before</span> edit</p></div>',
    );
    expect(moved.content_html_diff).toBeUndefined();
  });

  test("edit history visibility follows message_edit_history_visibility_policy", async () => {
    const id = await send("hamlet", denmark, "history policy", "v1");
    expectSuccess(await s.as("hamlet").patch(`/messages/${id}`, { content: "v2" }));
    expectSuccess(await s.as("hamlet").patch(`/messages/${id}`, { topic: "history policy moved" }));
    // Through PATCH /realm, in the FL 358 form ("all", "moves", "none").
    const setPolicy = async (value: "all" | "moves" | "none") => expectSuccess(await s.as("iago").patch("/realm", { message_edit_history_visibility_policy: value }));
    await setPolicy("moves");
    const movesOnly = expectSuccess(await s.as("othello").get(`/messages/${id}`)).message.edit_history;
    expect(movesOnly).toHaveLength(1);
    expect(movesOnly[0].prev_content).toBeUndefined();
    expect(movesOnly[0].prev_topic).toBe("history policy");
    await setPolicy("none");
    expect(expectSuccess(await s.as("othello").get(`/messages/${id}`)).message.edit_history).toBeUndefined();
    expectError(await s.as("othello").get(`/messages/${id}/history`), 400, "BAD_REQUEST");
    await setPolicy("all");
    expect(expectSuccess(await s.as("othello").get(`/messages/${id}`)).message.edit_history).toHaveLength(2);
    // Clients from before FL 358 still set it with allow_edit_history.
    expectSuccess(await s.as("iago").patch("/realm", { allow_edit_history: false }));
    expect(expectSuccess(await s.as("othello").get(`/messages/${id}`)).message.edit_history).toBeUndefined();
    expect((await register(s.as("othello"))).realm_message_edit_history_visibility_policy).toBe("none");
    expectSuccess(await s.as("iago").patch("/realm", { allow_edit_history: true }));
  });

  test("@**all** in a channel of more than 15 subscribers needs can_mention_many_users_group", async () => {
    const extra = [];
    for (let i = 0; i < 12; i++) extra.push(await s.createUser(`extra${i}`));
    const ids = [...["iago", "hamlet", "othello", "cordelia"].map((n) => (s.users as any)[n].id), ...extra.map((u) => u.id)];
    expectSuccess(await s.as("iago").post("/users/me/subscriptions", { subscriptions: [{ name: "crowd" }], principals: ids }));
    expectError(await s.as("hamlet").post("/messages", { type: "stream", to: "crowd", topic: "t", content: "@**all** hello" }), 400, "BAD_REQUEST", "You do not have permission to use channel wildcard mentions in this channel.");
    await send("hamlet", "crowd", "t", "@_**all** silent is fine");
    await send("iago", "crowd", "t", "@**all** from an administrator");
  });

  test("moving into a private channel takes the messages away from those who cannot read it", async () => {
    const id = await send("hamlet", denmark, "leak?", "sensitive after all");
    recorded.clear();
    expectSuccess(await s.as("hamlet").patch(`/messages/${id}`, { stream_id: secret, propagate_mode: "change_one", send_notification_to_new_thread: false }));
    expectError(await s.as("othello").get(`/messages/${id}`), 400, "BAD_REQUEST", "Invalid message(s)");
    expect(await fetchIds("othello", [{ operator: "search", operand: "sensitive" }])).toEqual([]);
    const deletes = ofType("delete_message").filter((e) => e.userIds.includes(s.users.othello.id));
    expect(deletes[0].event).toMatchObject({ message_ids: [id], stream_id: denmark });
    expect(ofType("update_message").flatMap((e) => e.userIds)).not.toContain(s.users.othello.id);
    expect(expectSuccess(await s.as("hamlet").get(`/messages/${id}`)).message.stream_id).toBe(secret);
  });

  test("a move to another channel follows Zulip's rules for rows and events", async () => {
    const { hamlet, othello, polonius, cordelia, iago } = s.users;
    const store = s.server.h.store;
    const north = await s.createChannel("iago", "Far north", ["iago", "hamlet", "cordelia"]);
    const id = await send("hamlet", denmark, "travel", "going north");
    recorded.clear();
    expectSuccess(await s.as("hamlet").patch(`/messages/${id}`, { stream_id: north, propagate_mode: "change_one", send_notification_to_new_thread: false, send_notification_to_old_thread: false }));
    // Othello, not subscribed to the public destination, loses his row but still reads it there and hears of the move.
    expect(getUserFlags(store, othello.id, id)).toBeUndefined();
    expect(expectSuccess(await s.as("othello").get(`/messages/${id}`)).message.stream_id).toBe(north);
    const updates = ofType("update_message");
    expect(updates.find((e) => e.userIds.includes(othello.id))?.event.flags).toEqual(["read"]);
    // Polonius is a guest: the messages leave his view.
    const deletes = ofType("delete_message");
    expect(deletes.flatMap((e) => e.userIds).sort()).toEqual([polonius.id]);
    expect(deletes[0].event).toMatchObject({ message_ids: [id], stream_id: denmark, topic: "travel" });
    // The destination's history is public: its subscribers get no rows, only the event.
    expect(getUserFlags(store, cordelia.id, id)).toBeUndefined();
    expect(updates.find((e) => e.userIds.includes(cordelia.id))?.event.flags).toEqual(["read"]);
    expect(getUserFlags(store, hamlet.id, id)).toBeDefined();
    expect(getUserFlags(store, iago.id, id)).toBeDefined();

    // Protected history: the destination's subscribers get (read) rows; everyone else loses access.
    const vault = await s.createChannel("iago", "Strong room", ["iago", "hamlet", "cordelia"], { invite_only: true, history_public_to_subscribers: false });
    const other = await send("hamlet", denmark, "travel", "into the vault");
    recorded.clear();
    expectSuccess(await s.as("hamlet").patch(`/messages/${other}`, { stream_id: vault, propagate_mode: "change_one", send_notification_to_new_thread: false, send_notification_to_old_thread: false }));
    expect(getUserFlags(store, cordelia.id, other)).toBe(MessageFlag.read);
    expect(getUserFlags(store, othello.id, other)).toBeUndefined();
    expect(ofType("delete_message").flatMap((e) => e.userIds).sort((a, b) => a - b)).toEqual([othello.id, polonius.id].sort((a, b) => a - b));
    expectError(await s.as("othello").get(`/messages/${other}`), 400, "BAD_REQUEST", "Invalid message(s)");
  });

  test("a move out of a channel with protected history tells nobody who could not read the messages there", async () => {
    const { othello } = s.users;
    const crypt = await s.createChannel("iago", "Crypt", ["iago", "hamlet"], { invite_only: true, history_public_to_subscribers: false });
    const daylight = await s.createChannel("iago", "Daylight", ["iago", "hamlet"]);
    const id = await send("hamlet", crypt, "old secrets", "from before othello joined");
    expectSuccess(await s.as("iago").post("/users/me/subscriptions", { subscriptions: [{ name: "Crypt" }], principals: [othello.id] }));
    recorded.clear();
    expectSuccess(await s.as("hamlet").patch(`/messages/${id}`, { stream_id: daylight, propagate_mode: "change_one", send_notification_to_new_thread: false, send_notification_to_old_thread: false }));
    const told = [...ofType("update_message"), ...ofType("delete_message")].flatMap((e) => e.userIds);
    expect(told).toContain(s.users.hamlet.id);
    expect(told).not.toContain(othello.id);
  });

  test("a channel's own message permissions add to the organization's (delete any, move within)", async () => {
    const { othello } = s.users;
    const room = await s.createChannel("iago", "Permission room", ["iago", "hamlet", "othello"]);
    const id = await send("hamlet", room, "mine", "hamlet's words");
    expectError(await s.as("othello").delete(`/messages/${id}`), 400, "BAD_REQUEST", "You don't have permission to delete this message");
    const onlyOthello = JSON.stringify({ new: { direct_members: [othello.id], direct_subgroups: [] } });
    expectSuccess(await s.as("iago").patch(`/streams/${room}`, { can_delete_any_message_group: onlyOthello, can_move_messages_within_channel_group: onlyOthello }));
    const other = await send("hamlet", room, "mine", "more words");
    expectSuccess(await s.as("othello").patch(`/messages/${other}`, { topic: "moved by othello", propagate_mode: "change_one", send_notification_to_old_thread: false, send_notification_to_new_thread: false }));
    expectSuccess(await s.as("othello").delete(`/messages/${id}`));
    // Only in that channel.
    const elsewhere = await send("hamlet", denmark, "mine", "in Denmark");
    expectError(await s.as("othello").delete(`/messages/${elsewhere}`), 400, "BAD_REQUEST", "You don't have permission to delete this message");
  });
});
