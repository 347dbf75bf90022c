/** Messages meeting the per-user and organization features: alert words, topic visibility, linkifiers, custom emoji, muting. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectSuccess, recordPublished, startTestServer, type TestServer } from "../kit";
import { verifyAction } from "../kit/events";
import { identiconPng } from "../../src/avatars/identicon";

let s: TestServer;
let denmark: number;
beforeAll(async () => {
  s = await startTestServer();
  denmark = await s.createChannel("iago", "Denmark", ["iago", "hamlet", "othello", "cordelia"]);
});
afterAll(() => s.stop());

async function send(from: "iago" | "hamlet" | "othello" | "cordelia", content: string, topic = "castle"): Promise<number> {
  return expectSuccess(await s.as(from).post("/messages", { type: "stream", to: denmark, topic, content })).id;
}
async function fetchOne(who: "hamlet" | "othello", id: number, params: Record<string, unknown> = {}) {
  return expectSuccess(await s.as(who).get("/messages", { anchor: id, num_before: 0, num_after: 0, ...params })).messages[0];
}
async function idsIn(who: "hamlet" | "othello", narrow: unknown[]) {
  return expectSuccess(await s.as(who).get("/messages", { anchor: "newest", num_before: 100, num_after: 0, narrow })).messages.map((m: any) => m.id);
}

describe("alert words and messages", () => {
  test("has_alert_word for the word's owner only, whole words only; is:alerted; edits update the flag", async () => {
    expectSuccess(await s.as("hamlet").post("/users/me/alert_words", { alert_words: ["ghost"] }));
    const hit = await send("othello", "I saw a Ghost!");
    const miss = await send("othello", "ghostly matters");
    const own = await send("hamlet", "my ghost");
    expect((await fetchOne("hamlet", hit)).flags).toContain("has_alert_word");
    expect((await fetchOne("othello", hit)).flags).not.toContain("has_alert_word");
    expect((await fetchOne("hamlet", miss)).flags).not.toContain("has_alert_word");
    expect((await fetchOne("hamlet", own)).flags).not.toContain("has_alert_word");
    expect(await idsIn("hamlet", [{ operator: "is", operand: "alerted" }])).toEqual([hit]);
    expectSuccess(await s.as("othello").patch(`/messages/${hit}`, { content: "I saw nothing" }));
    expect((await fetchOne("hamlet", hit)).flags).not.toContain("has_alert_word");
  });
});

describe("topic visibility in narrows", () => {
  test("is:followed and is:muted follow user_topics and channel muting", async () => {
    const followed = await send("iago", "follow me", "plans");
    const muted = await send("iago", "mute me", "noise");
    expectSuccess(await s.as("hamlet").post("/user_topics", { stream_id: denmark, topic: "plans", visibility_policy: 3 }));
    expectSuccess(await s.as("hamlet").post("/user_topics", { stream_id: denmark, topic: "noise", visibility_policy: 1 }));
    expect(await idsIn("hamlet", [{ operator: "is", operand: "followed" }])).toEqual([followed]);
    expect(await idsIn("hamlet", [{ operator: "is", operand: "muted" }])).toEqual([muted]);
    // Muting the channel mutes every topic except unmuted and followed ones.
    expectSuccess(await s.as("hamlet").post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: denmark, property: "is_muted", value: true }] }));
    const all = await idsIn("hamlet", [{ operator: "is", operand: "muted" }]);
    expect(all).toContain(muted);
    expect(all).not.toContain(followed);
    expect(all.length).toBeGreaterThan(2);
    expectSuccess(await s.as("hamlet").post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: denmark, property: "is_muted", value: false }] }));
  });
});

describe("linkifiers in messages", () => {
  test("content and topic links follow the organization's linkifiers", async () => {
    expectSuccess(await s.as("iago").post("/realm/filters", { pattern: "#(?P<id>[0-9]+)", url_template: "https://tracker.example/issues/{id}" }));
    const id = await send("othello", "fixed in #42", "issue #7");
    const m = await fetchOne("hamlet", id, { apply_markdown: true });
    expect(m.content).toContain('href="https://tracker.example/issues/42"');
    expect(m.topic_links).toEqual([{ text: "#7", url: "https://tracker.example/issues/7" }]);
    // Renaming the topic: the update_message event carries the new topic's links.
    const published = recordPublished(s);
    expectSuccess(await s.as("othello").patch(`/messages/${id}`, { topic: "issue #8", propagate_mode: "change_one" }));
    const [update] = published.ofType("update_message");
    expect(update.event.topic_links).toEqual([{ text: "#8", url: "https://tracker.example/issues/8" }]);
  });
});

describe("custom emoji in messages", () => {
  test(":name: renders the organization's emoji; reactions by name or ID", async () => {
    const file = new File([identiconPng("parrot", 32) as BlobPart], "p.png", { type: "image/png" });
    expectSuccess(await s.as("iago").post("/realm/emoji/parrot", { file }, { multipart: true }));
    const emojiId = Object.values(expectSuccess(await s.as("hamlet").get("/realm/emoji")).emoji).find((e: any) => e.name === "parrot") as any;
    const id = await send("othello", "party :parrot: time");
    const m = await fetchOne("hamlet", id, { apply_markdown: true });
    expect(m.content).toContain(`<img alt=":parrot:" class="emoji" src="/user_avatars/1/emoji/images/${emojiId.id}.png" title="parrot">`);
    expectSuccess(await s.as("hamlet").post(`/messages/${id}/reactions`, { emoji_name: "parrot", reaction_type: "realm_emoji" }));
    expectSuccess(await s.as("cordelia").post(`/messages/${id}/reactions`, { emoji_name: "parrot", emoji_code: emojiId.id, reaction_type: "realm_emoji" }));
    const reactions = (await fetchOne("hamlet", id)).reactions;
    expect(reactions).toEqual([
      expect.objectContaining({ emoji_name: "parrot", emoji_code: emojiId.id, reaction_type: "realm_emoji", user_id: s.users.hamlet.id }),
      expect.objectContaining({ emoji_name: "parrot", emoji_code: emojiId.id, reaction_type: "realm_emoji", user_id: s.users.cordelia.id }),
    ]);
    expectError(await s.as("hamlet").post(`/messages/${id}/reactions`, { emoji_name: "nope", reaction_type: "realm_emoji" }), 400, "BAD_REQUEST", "Emoji 'nope' does not exist");
    expectSuccess(await s.as("hamlet").delete(`/messages/${id}/reactions`, { emoji_name: "parrot", reaction_type: "realm_emoji" }));
  });

  test("a bare name means the custom emoji first (Zulip's get_emoji_data); a deactivated one can still get votes", async () => {
    const file = new File([identiconPng("owl", 32) as BlobPart], "o.png", { type: "image/png" });
    expectSuccess(await s.as("iago").post("/realm/emoji/owl", { file }, { multipart: true }));
    const owl = Object.values(expectSuccess(await s.as("hamlet").get("/realm/emoji")).emoji).find((e: any) => e.name === "owl") as any;
    const id = await send("othello", "night");
    // No reaction_type: the name picks the custom emoji, and "zulip" Zulip's own.
    expectSuccess(await s.as("hamlet").post(`/messages/${id}/reactions`, { emoji_name: "owl" }));
    expectSuccess(await s.as("hamlet").post(`/messages/${id}/reactions`, { emoji_name: "zulip" }));
    expectSuccess(await s.as("iago").delete(`/realm/emoji/owl`));
    // Deactivated: a new reaction with it is refused, a vote for the existing one counts.
    const other = await send("othello", "day");
    expectError(await s.as("cordelia").post(`/messages/${other}/reactions`, { emoji_name: "owl", emoji_code: owl.id, reaction_type: "realm_emoji" }), 400, "BAD_REQUEST", "This custom emoji has been deactivated.");
    expectSuccess(await s.as("cordelia").post(`/messages/${id}/reactions`, { emoji_name: "owl", emoji_code: owl.id, reaction_type: "realm_emoji" }));
    // A vote takes the existing reaction's name, whatever name the client sent.
    expectSuccess(await s.as("othello").post(`/messages/${id}/reactions`, { emoji_name: "not_the_name", emoji_code: owl.id, reaction_type: "realm_emoji" }));
    expect((await fetchOne("hamlet", id)).reactions.map((r: any) => [r.emoji_name, r.emoji_code, r.reaction_type, r.user_id])).toEqual([
      ["owl", owl.id, "realm_emoji", s.users.hamlet.id],
      ["zulip", "zulip", "zulip_extra_emoji", s.users.hamlet.id],
      ["owl", owl.id, "realm_emoji", s.users.cordelia.id],
      ["owl", owl.id, "realm_emoji", s.users.othello.id],
    ]);
  });
});

describe("muting a user", () => {
  test("marks the muted user's messages read for the muter, with the events that say so", async () => {
    const unread = [await send("cordelia", "one"), await send("cordelia", "two")];
    const r = await verifyAction(s, () => s.as("othello").post(`/users/me/muted_users/${s.users.cordelia.id}`), { viewers: ["othello", "hamlet"] });
    expect(r.types.othello).toEqual(["muted_users", "update_message_flags/add"]);
    expect(r.types.hamlet).toEqual([]);
    for (const id of unread) expect((await fetchOne("othello", id)).flags).toContain("read");
    expect((await fetchOne("hamlet", unread[0])).flags).not.toContain("read");
  });
});

describe("automatic topic visibility (Zulip's defaults: follow topics you start, follow where mentioned)", () => {
  test("two sends at once that both start a topic: the policy is set once, and only that send reports it", async () => {
    const sent = await Promise.all(["one", "two"].map(async (content) => expectSuccess(await s.as("cordelia").post("/messages", { type: "stream", to: denmark, topic: "race to start", content }))));
    expect(sent.map((body) => body.automatic_new_visibility_policy).filter((policy) => policy !== undefined)).toEqual([3]);
  });

  test("starting a topic follows it, with automatic_new_visibility_policy; a later message does not repeat it", async () => {
    const first = expectSuccess(await s.as("cordelia").post("/messages", { type: "stream", to: denmark, topic: "new idea", content: "hear me" }));
    expect(first.automatic_new_visibility_policy).toBe(3);
    const again = expectSuccess(await s.as("cordelia").post("/messages", { type: "stream", to: denmark, topic: "new idea", content: "again" }));
    expect(again.automatic_new_visibility_policy).toBeUndefined();
    const topics = expectSuccess(await s.as("cordelia").post("/register", { fetch_event_types: ["user_topic"] })).user_topics;
    expect(topics).toContainEqual(expect.objectContaining({ stream_id: denmark, topic_name: "new idea", visibility_policy: 3 }));
    // Replying in someone else's topic does not follow it (policy: on initiation).
    const reply = expectSuccess(await s.as("othello").post("/messages", { type: "stream", to: denmark, topic: "new idea", content: "ok" }));
    expect(reply.automatic_new_visibility_policy).toBeUndefined();
  });

  test("a mentioned user follows the topic; users who turned it off do not", async () => {
    expectSuccess(await s.as("iago").patch("/settings", { automatically_follow_topics_where_mentioned: false }));
    expectSuccess(await s.as("cordelia").post("/messages", { type: "stream", to: denmark, topic: "mentions", content: "@**King Hamlet** and @**Iago** look" }));
    const followed = async (who: "hamlet" | "iago") =>
      (expectSuccess(await s.as(who).post("/register", { fetch_event_types: ["user_topic"] })).user_topics as any[]).some((t) => t.topic_name === "mentions" && t.visibility_policy === 3);
    expect(await followed("hamlet")).toBe(true);
    expect(await followed("iago")).toBe(false);
  });

  test("in a muted channel, sending unmutes the topic when not following (policy: on send)", async () => {
    expectSuccess(await s.as("othello").patch("/settings", { automatically_follow_topics_policy: 4 }));
    expectSuccess(await s.as("othello").post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: denmark, property: "is_muted", value: true }] }));
    const sent = expectSuccess(await s.as("othello").post("/messages", { type: "stream", to: denmark, topic: "quiet", content: "hello?" }));
    expect(sent.automatic_new_visibility_policy).toBe(2);
  });
});

describe("edits follow the same rules as sends", () => {
  test("group mention flags survive an edit that keeps the mention", async () => {
    expectSuccess(await s.as("iago").post("/user_groups/create", { name: "crew", description: "", members: [s.users.othello.id] }));
    const id = await send("iago", "@*crew* hello", "crew");
    expect((await fetchOne("othello", id)).flags).toContain("mentioned");
    expectSuccess(await s.as("iago").patch(`/messages/${id}`, { content: "@*crew* hello again" }));
    expect((await fetchOne("othello", id)).flags).toContain("mentioned");
  });

  test("a member cannot edit a message into @**all** in a big channel", async () => {
    const many = [];
    for (let i = 0; i < 16; i++) many.push((await s.createUser(`extra${i}`)).id);
    expectSuccess(await s.as("iago").post("/users/me/subscriptions", { subscriptions: [{ name: "Big" }], principals: [s.users.hamlet.id, ...many] }));
    const big = expectSuccess(await s.as("iago").get("/get_stream_id", { stream: "Big" })).stream_id;
    expectError(await s.as("hamlet").post("/messages", { type: "stream", to: big, topic: "t", content: "@**all** hi" }), 400, "BAD_REQUEST");
    const id = expectSuccess(await s.as("hamlet").post("/messages", { type: "stream", to: big, topic: "t", content: "hi" })).id;
    expectError(await s.as("hamlet").patch(`/messages/${id}`, { content: "@**all** hi" }), 400, "BAD_REQUEST");
  });

  test("messages in an archived channel cannot be edited or moved", async () => {
    const archived = await s.createChannel("iago", "Old times", ["iago", "hamlet"]);
    const id = expectSuccess(await s.as("hamlet").post("/messages", { type: "stream", to: archived, topic: "t", content: "before" })).id;
    expectSuccess(await s.as("iago").delete(`/streams/${archived}`));
    expectError(await s.as("hamlet").patch(`/messages/${id}`, { content: "after" }), 400, "BAD_REQUEST");
    expectError(await s.as("hamlet").patch(`/messages/${id}`, { topic: "moved" }), 400, "BAD_REQUEST");
  });
});

describe("details found in review", () => {
  test("every linkifier match in a message is linked", async () => {
    const id = await send("othello", "see #1, #2 and #3");
    const html = (await fetchOne("hamlet", id, { apply_markdown: true })).content;
    for (const n of [1, 2, 3]) expect(html).toContain(`href="https://tracker.example/issues/${n}"`);
  });

  test("a new topic of 40 emoji is sent once and followed, without an error", async () => {
    const topic = "😀".repeat(40);
    const sent = expectSuccess(await s.as("cordelia").post("/messages", { type: "stream", to: denmark, topic, content: "emoji topic" }));
    expect(sent.automatic_new_visibility_policy).toBe(3);
  });
});

describe("unread details in flag events", () => {
  test("marking unread: unmuted_stream_msg follows channel muting and topic visibility, as in Zulip", async () => {
    const channel = await s.createChannel("iago", "Elsinore", ["iago", "othello"]);
    const inTopic = async (topic: string) => expectSuccess(await s.as("iago").post("/messages", { type: "stream", to: channel, topic, content: "news" })).id;
    const plain = await inTopic("plain");
    const quiet = await inTopic("quiet");
    const loud = await inTopic("loud");
    expectSuccess(await s.as("othello").post("/user_topics", { stream_id: channel, topic: "quiet", visibility_policy: 1 }));
    expectSuccess(await s.as("othello").post("/user_topics", { stream_id: channel, topic: "loud", visibility_policy: 2 }));
    const ids = [plain, quiet, loud];
    const unmutedAfterMarkingUnread = async () => {
      expectSuccess(await s.as("othello").post("/messages/flags", { messages: ids, op: "add", flag: "read" }));
      const r = await verifyAction(s, async () => {
        expectSuccess(await s.as("othello").post("/messages/flags", { messages: ids, op: "remove", flag: "read" }));
      });
      const [event] = r.events.othello.filter((e: any) => e.type === "update_message_flags");
      return ids.map((id) => event.message_details[String(id)].unmuted_stream_msg);
    };
    expect(await unmutedAfterMarkingUnread()).toEqual([true, false, true]);
    // A muted channel counts only in topics unmuted (or followed) there.
    expectSuccess(await s.as("othello").post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: channel, property: "is_muted", value: true }] }));
    expect(await unmutedAfterMarkingUnread()).toEqual([false, false, true]);
  });
});
