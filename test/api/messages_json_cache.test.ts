import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, startTestServer, type CastName, type TestServer } from "../kit";
import { identiconPng } from "../../src/avatars/identicon";

/**
 * GET /messages keeps each message's decoded record and its serialized object without
 * flags (src/store/messages.ts getMessageShared, src/views/messages_json.ts), shared
 * between requests and viewers: every write that changes what a message shows must
 * show in the next read. Each test reads first (filling the caches), writes, then
 * reads again.
 */
let s: TestServer;
let channel: number;
beforeAll(async () => {
  s = await startTestServer();
  channel = await s.createChannel("iago", "cached", ["hamlet", "othello", "cordelia"]);
});
afterAll(() => s.stop());

const send = async (topic: string, content: string, who: CastName = "othello") =>
  expectSuccess(await s.as(who).post("/messages", { type: "stream", to: channel, topic, content })).id as number;

/** The message as `who` reads it through a topic narrow (the cached path). */
async function read(id: number, who: CastName = "hamlet", extra: Record<string, unknown> = {}): Promise<any> {
  const m = expectSuccess(await s.as(who).get("/messages", { anchor: id, num_before: 0, num_after: 0, ...extra })).messages as any[];
  return m.find((x) => x.id === id);
}

/** Through a narrow of its topic, newest first, as clients load a conversation. */
async function readInTopic(id: number, topic: string, who: CastName = "hamlet"): Promise<any> {
  const narrow = JSON.stringify([{ operator: "channel", operand: channel }, { operator: "topic", operand: topic }]);
  const m = expectSuccess(await s.as(who).get("/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow })).messages as any[];
  return m.find((x) => x.id === id);
}

describe("GET /messages after writes to what a message shows", () => {
  test("content edits, topic moves and channel moves", async () => {
    const id = await send("edits", "before");
    expect((await read(id)).content).toBe("<p>before</p>");
    expectSuccess(await s.as("othello").patch(`/messages/${id}`, { content: "after" }));
    const edited = await read(id);
    expect(edited.content).toBe("<p>after</p>");
    expect(edited.edit_history?.length).toBe(1);
    expect(typeof edited.last_edit_timestamp).toBe("number");
    expectSuccess(await s.as("othello").patch(`/messages/${id}`, { topic: "edits moved" }));
    expect((await read(id)).subject).toBe("edits moved");
    expect((await readInTopic(id, "edits moved")).subject).toBe("edits moved");
    expect(await readInTopic(id, "edits")).toBeUndefined();
    const other = await s.createChannel("iago", "cached elsewhere", ["hamlet", "othello", "cordelia"]);
    expectSuccess(await s.as("iago").patch(`/messages/${id}`, { stream_id: other }));
    const moved = await read(id);
    expect(moved.stream_id).toBe(other);
    expect(moved.display_recipient).toBe("cached elsewhere");
  });

  test("reactions, submessages and deletion", async () => {
    const id = await send("reactions", "react to me");
    expect((await read(id)).reactions).toEqual([]);
    expectSuccess(await s.as("hamlet").post(`/messages/${id}/reactions`, { emoji_name: "octopus" }));
    expect((await read(id)).reactions.map((r: any) => [r.emoji_name, r.user_id])).toEqual([["octopus", s.users.hamlet.id]]);
    expectSuccess(await s.as("hamlet").delete(`/messages/${id}/reactions`, { emoji_name: "octopus" }));
    expect((await read(id)).reactions).toEqual([]);
    const poll = await send("reactions", "/poll Which?\nOne\nTwo");
    const before = (await read(poll)).submessages.length;
    expectSuccess(await s.as("hamlet").post("/submessage", { message_id: poll, msg_type: "widget", content: JSON.stringify({ type: "vote", key: "canned,1", vote: 1 }) }));
    expect((await read(poll)).submessages.length).toBe(before + 1);
    expect(await readInTopic(id, "reactions")).toBeDefined();
    expectSuccess(await s.as("iago").delete(`/messages/${id}`));
    expect(await read(id)).toBeUndefined();
    expect(await readInTopic(id, "reactions")).toBeUndefined();
  });

  test("the sender's name, email visibility and avatar; a reacting user's name", async () => {
    const id = await send("senders", "who sent this", "cordelia");
    expectSuccess(await s.as("hamlet").post(`/messages/${id}/reactions`, { emoji_name: "octopus" }));
    const first = await read(id);
    expect(first.sender_full_name).toBe("Cordelia, Lear's daughter");
    expectSuccess(await s.as("cordelia").patch("/settings", { full_name: "Cordelia of Britain" }));
    expect((await read(id)).sender_full_name).toBe("Cordelia of Britain");
    expectSuccess(await s.as("hamlet").patch("/settings", { full_name: "Hamlet of Denmark" }));
    expect((await read(id)).reactions[0].user.full_name).toBe("Hamlet of Denmark");
    // Everyone (1) shows the real address; members only (3 is admins) hides it.
    expectSuccess(await s.as("cordelia").patch("/settings", { email_address_visibility: 1 }));
    expect((await read(id)).sender_email).toBe(s.users.cordelia.email);
    expectSuccess(await s.as("cordelia").patch("/settings", { email_address_visibility: 3 }));
    expect((await read(id)).sender_email).not.toBe(s.users.cordelia.email);
    const avatar = (await read(id)).avatar_url;
    expectSuccess(await s.as("cordelia").post("/users/me/avatar", { file: new File([identiconPng("cached", 64) as BlobPart], "me.png", { type: "image/png" }) }, { multipart: true }));
    const changed = (await read(id)).avatar_url;
    expect(changed).not.toBe(avatar);
    expect(changed).toBe(expectSuccess(await s.as("hamlet").get(`/users/${s.users.cordelia.id}`)).user.avatar_url);
  });

  test("a channel rename, linkifiers and the edit-history policy", async () => {
    const renamed = await s.createChannel("iago", "to rename", ["hamlet", "othello"]);
    const id = expectSuccess(await s.as("othello").post("/messages", { type: "stream", to: renamed, topic: "issue #12", content: "see" })).id as number;
    const first = await read(id);
    expect(first.display_recipient).toBe("to rename");
    expect(first.topic_links).toEqual([]);
    expectSuccess(await s.as("iago").patch(`/streams/${renamed}`, { new_name: "renamed" }));
    expect((await read(id)).display_recipient).toBe("renamed");
    const filter = expectSuccess(await s.as("iago").post("/realm/filters", { pattern: "#(?P<id>[0-9]+)", url_template: "https://example.com/{id}" })).id;
    expect((await read(id)).topic_links).toEqual([{ text: "#12", url: "https://example.com/12" }]);
    expectSuccess(await s.as("iago").delete(`/realm/filters/${filter}`));
    expect((await read(id)).topic_links).toEqual([]);
    expectSuccess(await s.as("othello").patch(`/messages/${id}`, { content: "seen" }));
    expect((await read(id)).edit_history?.length).toBe(1);
    expectSuccess(await s.as("desdemona").patch("/realm", { message_edit_history_visibility_policy: "none" }));
    expect((await read(id)).edit_history).toBeUndefined();
    expectSuccess(await s.as("desdemona").patch("/realm", { message_edit_history_visibility_policy: "all" }));
    expect((await read(id)).edit_history?.length).toBe(1);
  });

  test("each viewer's own flags, and the request's options", async () => {
    const id = await send("flags", "**bold** and @**Othello, the Moor of Venice**", "cordelia");
    // Othello is mentioned, hamlet not, iago never received it.
    expect((await readInTopic(id, "flags", "othello")).flags).toEqual(["mentioned"]);
    expect((await readInTopic(id, "flags", "hamlet")).flags).toEqual([]);
    expect((await readInTopic(id, "flags", "iago")).flags).toEqual(["read", "historical"]);
    expectSuccess(await s.as("hamlet").post("/messages/flags", { messages: JSON.stringify([id]), op: "add", flag: "starred" }));
    expect((await readInTopic(id, "flags", "hamlet")).flags).toEqual(["starred"]);
    expect((await readInTopic(id, "flags", "othello")).flags).toEqual(["mentioned"]);
    // The same message raw and rendered, one after the other.
    const raw = await read(id, "hamlet", { apply_markdown: false });
    expect(raw.content).toBe("**bold** and @**Othello, the Moor of Venice**");
    expect(raw.content_type).toBe("text/x-markdown");
    const html = await read(id, "hamlet");
    expect(html.content).toContain("<strong>bold</strong>");
    expect(html.content_type).toBe("text/html");
  });

  test("the empty topic's display name follows the realm setting for clients without FL 334", async () => {
    const id = await send("", "no topic");
    expect((await read(id, "hamlet", { allow_empty_topic_name: true })).subject).toBe("");
    const shown = (await read(id, "hamlet")).subject;
    expect(shown).not.toBe("");
    expectSuccess(await s.as("desdemona").patch("/realm", { empty_topic_display_name: "no subject" }));
    expect((await read(id, "hamlet")).subject).toBe("no subject");
    expect((await read(id, "hamlet", { allow_empty_topic_name: true })).subject).toBe("");
  });

  test("search highlights are added per request", async () => {
    const id = await send("search", "a castle by the sea");
    await read(id);
    const narrow = JSON.stringify([{ operator: "search", operand: "castle" }]);
    const found = (expectSuccess(await s.as("hamlet").get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow })).messages as any[]).find((m) => m.id === id);
    expect(found.match_content).toContain('<span class="highlight">castle</span>');
    expect((await read(id)).match_content).toBeUndefined();
  });
});
