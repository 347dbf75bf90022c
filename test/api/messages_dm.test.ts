import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectSchema, expectSuccess, recordPublished, startTestServer, type TestServer } from "../kit";
import { getRealm, putRealm } from "../../src/store/realm";
import { systemGroupId } from "../../src/store/user_groups";
import { register } from "../kit/events";
import { GetMessageResponse, GetMessagesResponse, MessageHistoryResponse, ReadReceiptsResponse, RenderResponse, SendMessageResponse, UpdateFlagsForNarrowResponse, UpdateFlagsResponse, UpdateMessageResponse } from "../../src/schemas/messages";

let s: TestServer;
let recorded: ReturnType<typeof recordPublished>;

beforeAll(async () => {
  s = await startTestServer();
  recorded = recordPublished(s);
});
afterAll(() => s.stop());

/** Organization settings changed directly in the store (their admin endpoints belong to other capabilities). */
const setRealm = (settings: Record<string, unknown>) =>
  s.server.h.store.commit(() => {
    const realm = getRealm(s.server.h.store)!;
    putRealm(s.server.h.store, { ...realm, settings: { ...realm.settings, ...settings } });
  });

function eventsOfType(type: string) {
  return recorded.events.filter((e) => e.event.type === type);
}

async function sendDm(from: Parameters<TestServer["as"]>[0], to: unknown, content: string, extra: Record<string, unknown> = {}) {
  const res = await s.as(from).post("/messages", { type: "direct", to, content, ...extra });
  expectSchema(SendMessageResponse, expectSuccess(res));
  return res.body.id as number;
}

describe("direct messages", () => {
  test("send to user IDs, fetch, flags per recipient, events per flag set", async () => {
    recorded.clear();
    const { hamlet, othello, cordelia } = s.users;
    const q1 = (await register(s.as("hamlet"), { event_types: ["message"] })).queue_id;
    const othellosQueue = (await register(s.as("othello"), { event_types: ["message"] })).queue_id;
    const id = await sendDm("hamlet", [othello.id], "Hello @**Othello, the Moor of Venice** :smile:", { local_id: "1.01", queue_id: q1, read_by_sender: true });
    const msgEvents = eventsOfType("message");
    // Othello (mentioned, unread) and Hamlet (read, with local id) get different events.
    const toOthello = msgEvents.find((e) => e.userIds.includes(othello.id))!;
    expect(toOthello.event.flags).toEqual(["mentioned"]);
    expect(toOthello.event.local_message_id).toBeUndefined();
    const toHamlet = msgEvents.find((e) => e.userIds.includes(hamlet.id))!;
    expect(toHamlet.userIds).toEqual([hamlet.id]);
    expect(toHamlet.event.flags).toEqual(["read"]);
    // local_id reaches only the queue that sent the message.
    expect(toHamlet.event.perQueue).toEqual({ [q1]: { local_message_id: "1.01" } });
    expect(msgEvents.some((e) => e.userIds.includes(cordelia.id))).toBe(false);

    const res = await s.as("othello").get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow: [{ operator: "dm", operand: [hamlet.id] }] });
    const body = expectSuccess(res);
    expectSchema(GetMessagesResponse, body);
    expect(body.found_newest).toBe(true);
    expect(body.found_oldest).toBe(true);
    const m = body.messages.at(-1);
    expect(m.id).toBe(id);
    expect(m.type).toBe("private");
    expect(m.subject).toBe("");
    expect(m.flags).toEqual(["mentioned"]);
    expect(m.display_recipient.map((u: any) => u.id).sort()).toEqual([hamlet.id, othello.id].sort());
    expect(m.content).toContain('<span class="user-mention" data-user-id="' + othello.id + '">@Othello, the Moor of Venice</span>');
    expect(m.content).toContain('class="emoji emoji-1f642"'); // Zulip's :smile:

    // Cordelia cannot see it.
    expectError(await s.as("cordelia").get(`/messages/${id}`), 400, "BAD_REQUEST", "Invalid message(s)");
    const single = expectSuccess(await s.as("othello").get(`/messages/${id}`));
    expectSchema(GetMessageResponse, single);
    expect(single.raw_content).toBe("Hello @**Othello, the Moor of Venice** :smile:");
    // Naming someone else's queue carries no local id to it.
    recorded.clear();
    await sendDm("hamlet", [othello.id], "again", { local_id: "1.02", queue_id: othellosQueue });
    expect(eventsOfType("message").length).toBeGreaterThan(0);
    expect(eventsOfType("message").every((e) => Object.keys(e.event.perQueue ?? {}).length === 0)).toBe(true);
  });

  test("to as emails (JSON list, bare email, comma-separated), legacy type private, group and self DMs", async () => {
    const { hamlet, othello, cordelia } = s.users;
    await sendDm("hamlet", JSON.stringify([othello.email]), "by email list");
    const res = await s.as("hamlet").post("/messages", { type: "private", to: othello.email, content: "bare email" });
    expectSuccess(res);
    const group = await sendDm("hamlet", `${othello.email},${cordelia.email}`, "group dm");
    const self = await sendDm("hamlet", [hamlet.id], "note to self");
    const mine = expectSuccess(await s.as("hamlet").get("/messages", { anchor: self, num_before: 0, num_after: 0 }));
    expect(mine.messages[0].flags).toContain("read");
    expect(mine.messages[0].display_recipient).toHaveLength(1);
    // Legacy narrow: pm-with with comma-separated emails (zulip-terminal).
    const legacy = expectSuccess(
      await s.as("cordelia").get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow: JSON.stringify([["pm-with", `${hamlet.email},${othello.email}`]]) }),
    );
    expect(legacy.messages.map((m: any) => m.id)).toEqual([group]);
    const inc = expectSuccess(
      await s.as("othello").get("/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow: [{ operator: "dm-including", operand: cordelia.id }] }),
    );
    expect(inc.messages.map((m: any) => m.id)).toEqual([group]);
    const priv = expectSuccess(await s.as("othello").get("/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow: [["is", "private"]] }));
    expect(priv.messages.length).toBeGreaterThanOrEqual(4);
  });

  test("errors: unknown recipient, empty content, long content truncated", async () => {
    expectError(await s.as("hamlet").post("/messages", { type: "direct", to: [99999], content: "x" }), 400, "BAD_REQUEST");
    expectError(await s.as("hamlet").post("/messages", { type: "direct", to: ["nobody@zulip.test"], content: "x" }), 400, "BAD_REQUEST", "Invalid email 'nobody@zulip.test'");
    expectError(await s.as("hamlet").post("/messages", { type: "direct", to: [s.users.othello.id], content: "   " }), 400, "BAD_REQUEST", "Message must not be empty");
    expectError(await s.as("hamlet").post("/messages", { type: "direct", content: "x" }), 400, "REQUEST_VARIABLE_MISSING");
    const id = await sendDm("hamlet", [s.users.othello.id], "a".repeat(10050));
    const got = expectSuccess(await s.as("hamlet").get(`/messages/${id}`));
    expect(got.raw_content.length).toBeLessThanOrEqual(10000);
    expect(got.raw_content.endsWith("[message truncated]")).toBe(true);
  });

  test("raw HTML is escaped; widget_content=null (what the Python bots send) is no widget", async () => {
    const res = await s.as("hamlet").post("/messages", { type: "private", to: JSON.stringify([s.users.othello.id]), content: "<script>alert(1)</script> [x](javascript:alert(1))", widget_content: "null" });
    const body = expectSuccess(res);
    expect(body.ignored_parameters_unsupported).toBeUndefined();
    const got = expectSuccess(await s.as("othello").get(`/messages/${body.id}`));
    expect(got.message.submessages).toEqual([]);
    expect(got.message.content).not.toContain("<script");
    expect(got.message.content).not.toContain('href="javascript');
    expect(got.message.content).toContain("&lt;script&gt;");
  });

  test("anchors: first_unread, use_first_unread_anchor, oldest, include_anchor, caps", async () => {
    const { cordelia, othello } = s.users;
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push(await sendDm("cordelia", [othello.id], `count ${i}`));
    const narrow = [{ operator: "dm", operand: [cordelia.id] }];
    await s.as("othello").post("/messages/flags", { messages: ids.slice(0, 2), op: "add", flag: "read" });
    const fu = expectSuccess(await s.as("othello").get("/messages", { anchor: "first_unread", num_before: 1, num_after: 1, narrow }));
    expect(fu.anchor).toBe(ids[2]);
    expect(fu.found_anchor).toBe(true);
    expect(fu.messages.map((m: any) => m.id)).toEqual([ids[1], ids[2], ids[3]]);
    const legacy = expectSuccess(await s.as("othello").get("/messages", { anchor: 0, use_first_unread_anchor: true, num_before: 0, num_after: 0, narrow }));
    expect(legacy.anchor).toBe(ids[2]);
    const oldest = expectSuccess(await s.as("othello").get("/messages", { anchor: "oldest", num_before: 0, num_after: 2, narrow }));
    expect(oldest.messages.map((m: any) => m.id)).toEqual([ids[0], ids[1]]);
    expect(oldest.found_oldest).toBe(true);
    expect(oldest.found_newest).toBe(false);
    const excl = expectSuccess(await s.as("othello").get("/messages", { anchor: ids[2], include_anchor: false, num_before: 1, num_after: 1, narrow }));
    expect(excl.messages.map((m: any) => m.id)).toEqual([ids[1], ids[3]]);
    expect(excl.found_anchor).toBe(false);
    const big = expectSuccess(await s.as("othello").get("/messages", { anchor: "10000000000000000", num_before: 2, num_after: 0, narrow }));
    expect(big.messages.map((m: any) => m.id)).toEqual([ids[3], ids[4]]);
    expectError(await s.as("othello").get("/messages", { anchor: "newest", num_before: 5000, num_after: 1 }), 400, "BAD_REQUEST");
    expectError(await s.as("othello").get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow: [["bogus", "x"]] }), 400, "BAD_NARROW");
  });

  test("flags: messages answer, editable flags only, events with message_details", async () => {
    const { othello, hamlet } = s.users;
    const id = await sendDm("hamlet", [othello.id], "flag me");
    recorded.clear();
    const res = await s.as("othello").post("/messages/flags", { messages: [id], op: "add", flag: "starred" });
    expectSchema(UpdateFlagsResponse, expectSuccess(res));
    expect(res.body.messages).toEqual([id]);
    const ev = eventsOfType("update_message_flags");
    expect(ev).toHaveLength(1);
    expect(ev[0].userIds).toEqual([othello.id]);
    expect(ev[0].event).toMatchObject({ op: "add", flag: "starred", messages: [id], all: false });
    const starred = expectSuccess(await s.as("othello").get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow: [{ operator: "is", operand: "starred" }] }));
    expect(starred.messages.map((m: any) => m.id)).toEqual([id]);
    expectError(await s.as("othello").post("/messages/flags", { messages: [id], op: "add", flag: "mentioned" }), 400, "BAD_REQUEST", "Flag not editable: 'mentioned'");
    expectError(await s.as("othello").post("/messages/flags", { messages: [id], op: "add", flag: "bogus" }), 400, "BAD_REQUEST", "Invalid flag: 'bogus'");
    expectError(await s.as("cordelia").post("/messages/flags", { messages: [id], op: "add", flag: "read" }), 400, "BAD_REQUEST", "Invalid message(s)");
    await s.as("othello").post("/messages/flags", { messages: [id], op: "add", flag: "read" });
    recorded.clear();
    expectSuccess(await s.as("othello").post("/messages/flags", { messages: [id], op: "remove", flag: "read" }));
    const removal = eventsOfType("update_message_flags")[0].event as any;
    expect(removal.message_details[String(id)]).toEqual({ type: "private", user_ids: [hamlet.id] });
  });

  test("flags/narrow and mark_all_as_read", async () => {
    const { othello, iago } = s.users;
    const a = await sendDm("iago", [othello.id], "one");
    const b = await sendDm("iago", [othello.id], "two");
    const res = await s.as("othello").post("/messages/flags/narrow", {
      anchor: "oldest",
      num_before: 0,
      num_after: 1000,
      narrow: JSON.stringify([{ operator: "dm", operand: [iago.id] }]),
      op: "add",
      flag: "read",
    });
    const body = expectSuccess(res);
    expectSchema(UpdateFlagsForNarrowResponse, body);
    expect(body).toMatchObject({ processed_count: 2, updated_count: 2, first_processed_id: a, last_processed_id: b, found_oldest: true, found_newest: true });
    await sendDm("iago", [othello.id], "three");
    recorded.clear();
    expectSuccess(await s.as("othello").post("/mark_all_as_read"));
    expect(eventsOfType("update_message_flags")[0].event).toMatchObject({ op: "add", flag: "read", all: true });
    const unread = expectSuccess(await s.as("othello").get("/messages", { anchor: "newest", num_before: 100, num_after: 0, narrow: [{ operator: "is", operand: "unread" }] }));
    expect(unread.messages).toEqual([]);
  });

  test("edit content within the window, history, events with per-user flags", async () => {
    const { othello, hamlet } = s.users;
    const id = await sendDm("hamlet", [othello.id], "first version");
    recorded.clear();
    const res = await s.as("hamlet").patch(`/messages/${id}`, { content: "second @**Othello, the Moor of Venice**" });
    expectSchema(UpdateMessageResponse, expectSuccess(res));
    const ev = eventsOfType("update_message");
    expect(ev.map((e) => e.userIds).flat().sort()).toEqual([hamlet.id, othello.id].sort());
    const forOthello = ev.find((e) => e.userIds.includes(othello.id))!.event as any;
    expect(forOthello.flags).toContain("mentioned");
    expect(forOthello).toMatchObject({ message_id: id, message_ids: [id], orig_content: "first version", rendering_only: false });
    const got = expectSuccess(await s.as("othello").get(`/messages/${id}`));
    expect(got.message.edit_history).toHaveLength(1);
    expect(got.message.flags).toContain("mentioned");
    const hist = expectSuccess(await s.as("othello").get(`/messages/${id}/history`));
    expectSchema(MessageHistoryResponse, hist);
    expect(hist.message_history.map((e: any) => e.content)).toEqual(["first version", "second @**Othello, the Moor of Venice**"]);
    expectError(await s.as("othello").patch(`/messages/${id}`, { content: "hijack" }), 400, "BAD_REQUEST", "You don't have permission to edit this message");
    // zulip-js sends PATCH parameters in the query string.
    expectSuccess(await s.as("hamlet").patch(`/messages/${id}`, { content: "third" }, { query: true }));
  });

  test("reactions, read receipts, delete", async () => {
    const { othello, hamlet } = s.users;
    const id = await sendDm("hamlet", [othello.id], "react to me");
    recorded.clear();
    expectSuccess(await s.as("othello").post(`/messages/${id}/reactions`, { emoji_name: "thumbs_up" }));
    expect(eventsOfType("reaction")[0].event).toMatchObject({ op: "add", emoji_code: "1f44d", reaction_type: "unicode_emoji", user_id: othello.id });
    expect([...eventsOfType("reaction")[0].userIds].sort()).toEqual([hamlet.id, othello.id].sort());
    expectError(await s.as("othello").post(`/messages/${id}/reactions`, { emoji_name: "thumbs_up" }), 400, "REACTION_ALREADY_EXISTS");
    expectSuccess(await s.as("hamlet").post(`/messages/${id}/reactions`, { emoji_name: "octopus", emoji_code: "1f419", reaction_type: "unicode_emoji" }));
    expectError(await s.as("hamlet").post(`/messages/${id}/reactions`, { emoji_name: "no_such_emoji_name" }), 400, "BAD_REQUEST");
    const got = expectSuccess(await s.as("hamlet").get(`/messages/${id}`));
    expect(got.message.reactions.map((r: any) => r.emoji_name).sort()).toEqual(["octopus", "thumbs_up"]);
    expectSuccess(await s.as("othello").delete(`/messages/${id}/reactions`, { emoji_name: "thumbs_up" }));
    expectError(await s.as("othello").delete(`/messages/${id}/reactions`, { emoji_name: "thumbs_up" }), 400, "REACTION_DOES_NOT_EXIST");

    expectSuccess(await s.as("othello").post("/messages/flags", { messages: [id], op: "add", flag: "read" }));
    // On by default (an invitation-only organization, as in Zulip).
    const rr = expectSuccess(await s.as("hamlet").get(`/messages/${id}/read_receipts`));
    expectSchema(ReadReceiptsResponse, rr);
    expect(rr.user_ids).toEqual([othello.id]);
    await setRealm({ enable_read_receipts: false });
    expectError(await s.as("hamlet").get(`/messages/${id}/read_receipts`), 400, "BAD_REQUEST", "Read receipts are disabled in this organization.");
    await setRealm({ enable_read_receipts: true });

    expectError(await s.as("othello").delete(`/messages/${id}`), 400, "BAD_REQUEST");
    recorded.clear();
    expectSuccess(await s.as("hamlet").delete(`/messages/${id}`));
    expect(eventsOfType("delete_message")[0].event).toMatchObject({ message_type: "private", message_ids: [id] });
    expectError(await s.as("hamlet").get(`/messages/${id}`), 400, "BAD_REQUEST", "Invalid message(s)");
  });

  test("search with highlighting, sender narrow, render, typing, /me", async () => {
    const { othello, hamlet } = s.users;
    const id = await sendDm("hamlet", [othello.id], "The Elephant walks");
    const res = expectSuccess(
      await s.as("othello").get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow: [{ operator: "search", operand: "eleph" }, { operator: "sender", operand: hamlet.email }] }),
    );
    expect(res.messages.map((m: any) => m.id)).toEqual([id]);
    expect(res.messages[0].match_content).toBe('<p>The <span class="highlight">Elephant</span> walks</p>');
    const none = expectSuccess(await s.as("othello").get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow: [["search", "giraffe"]] }));
    expect(none.messages).toEqual([]);
    const r = expectSuccess(await s.as("hamlet").post("/messages/render", { content: "**bold**" }));
    expectSchema(RenderResponse, r);
    expect(r.rendered).toBe("<p><strong>bold</strong></p>");
    // Zulip's forms that clients parse: <del>, <time>, underscores kept.
    expect(expectSuccess(await s.as("hamlet").post("/messages/render", { content: "~~old~~ at <time:2017-06-05T22:30:00Z> in my_file_name" })).rendered).toBe(
      '<p><del>old</del> at <time datetime="2017-06-05T22:30:00Z">2017-06-05T22:30:00Z</time> in my_file_name</p>',
    );
    // FL 451/503: a time that is not ISO 8601 (a Unix timestamp among them) stays as its escaped text.
    expect(expectSuccess(await s.as("hamlet").post("/messages/render", { content: "at <time:1496701800> and <time:<i>>" })).rendered).toBe("<p>at &lt;time:1496701800&gt; and &lt;time:&lt;i&gt;&gt;</p>");
    expect(expectSuccess(await s.as("hamlet").post("/messages/render", { content: "$$e^{i\\pi} + 1 = 0$$" })).rendered).toStartWith('<p><span class="katex">');
    // Pygments' name for the language, which code playgrounds (pygments_language) match.
    expect(expectSuccess(await s.as("hamlet").post("/messages/render", { content: "```py\nx = 1\n```" })).rendered).toContain('data-code-language="Python"');
    recorded.clear();
    expectSuccess(await s.as("hamlet").post("/typing", { op: "start", to: JSON.stringify([othello.id]) }));
    const typing = eventsOfType("typing")[0];
    expect(typing.event).toMatchObject({ op: "start", message_type: "direct", sender: { user_id: hamlet.id } });
    expect([...typing.userIds].sort()).toEqual([hamlet.id, othello.id].sort());
    const me = await sendDm("hamlet", [othello.id], "/me waves");
    expect(expectSuccess(await s.as("othello").get(`/messages/${me}`)).message.is_me_message).toBe(true);
    recorded.clear();
    expectSuccess(await s.as("hamlet").post(`/messages/${me}/typing`, { op: "start" }));
    expect(eventsOfType("typing_edit_message")[0].userIds).toEqual([othello.id]);
    // The endpoint's name before FL 361, the message ID in the body.
    recorded.clear();
    expectSuccess(await s.as("hamlet").post("/message_edit_typing", { op: "stop", message_id: me }));
    expect(eventsOfType("typing_edit_message")[0]).toMatchObject({ userIds: [othello.id], event: { op: "stop", message_id: me } });
    expectError(await s.as("hamlet").post("/message_edit_typing", { op: "stop" }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'message_id' argument");
  });

  test("emoji typed as characters; emoticons for senders with translate_emoticons (render, send, edit)", async () => {
    const { hamlet, othello } = s.users;
    const emoji = (code: string, name: string) => `<span aria-label="${name.replace(/_/g, " ")}" class="emoji emoji-${code}" role="img" title="${name.replace(/_/g, " ")}">:${name}:</span>`;
    const render = async (content: string) => expectSuccess(await s.as("hamlet").post("/messages/render", { content })).rendered;
    const contentOf = async (id: number) => expectSuccess(await s.as("othello").get(`/messages/${id}`)).message.content;
    // Under Zulip's name for the character (with or without the variation selector); a
    // bare ❤ (shown as text) and a code span stay as typed.
    expect(await render("🙂 ❤️ ❤ `🙂`")).toBe(`<p>${emoji("1f642", "smile")} ${emoji("2764", "heart")} ❤ <code>🙂</code></p>`);
    expect(await render("ok :)")).toBe("<p>ok :)</p>");
    expectSuccess(await s.as("hamlet").patch("/settings", { translate_emoticons: true }));
    try {
      // Only standing alone: not inside a word or a URL, not against bold text.
      expect(await render("ok :) a:)b http://example.com/x **b**:)")).toBe(
        `<p>ok ${emoji("1f642", "smile")} a:)b <a href="http://example.com/x">http://example.com/x</a> <strong>b</strong>:)</p>`,
      );
      const id = await sendDm("hamlet", [othello.id], "<3 ;)");
      expect(await contentOf(id)).toBe(`<p>${emoji("2764", "heart")} ${emoji("1f609", "wink")}</p>`);
      expectSuccess(await s.as("hamlet").patch(`/messages/${id}`, { content: ":D (:" }));
      expect(await contentOf(id)).toBe(`<p>${emoji("1f600", "grinning")} ${emoji("1f642", "smile")}</p>`);
      // The sender's setting decides: othello's messages keep their emoticons.
      expect(await contentOf(await sendDm("othello", [hamlet.id], ":P"))).toBe("<p>:P</p>");
    } finally {
      expectSuccess(await s.as("hamlet").patch("/settings", { translate_emoticons: false }));
    }
    expect(await render("ok :)")).toBe("<p>ok :)</p>");
  });

  // zulip-js posts through isomorphic-fetch + form-data streams, which only Node
  // sends correctly (under Bun the body becomes "[object FormData]"), so the real
  // client runs in a Node child process, as its users run it.
  test("zulip-js end to end (in Node)", async () => {
    const { hamlet, othello } = s.users;
    const script = `
      const zulipInit = require("zulip-js");
      (async () => {
        const hamlet = await zulipInit(${JSON.stringify({ username: hamlet.email, apiKey: hamlet.apiKey, realm: s.url })});
        const othello = await zulipInit(${JSON.stringify({ username: othello.email, apiKey: othello.apiKey, realm: s.url })});
        const sent = await hamlet.messages.send({ type: "private", to: [${othello.id}], content: "from zulip-js" });
        const got = await othello.messages.retrieve({ anchor: "newest", num_before: 1, num_after: 0, narrow: [{ operator: "dm", operand: [${hamlet.id}] }] });
        const flagged = await othello.messages.flags.add({ flag: "read", messages: [sent.id] });
        const updated = await hamlet.messages.update({ message_id: sent.id, content: "edited by zulip-js" });
        const byId = await othello.messages.getById({ message_id: sent.id });
        const history = await othello.messages.getHistoryById({ message_id: sent.id });
        const reacted = await othello.reactions.add({ message_id: sent.id, emoji_name: "octopus" });
        const unreacted = await othello.reactions.remove({ message_id: sent.id, emoji_name: "octopus" });
        const rendered = await hamlet.messages.render({ content: "**zulip-js**" });
        const typing = await hamlet.typing.send({ to: [${othello.id}], op: "start" });
        const deleted = await hamlet.messages.deleteById({ message_id: sent.id });
        console.log(JSON.stringify({ sent, got, flagged, updated, byId, history, reacted, unreacted, rendered, typing, deleted }));
      })().catch((e) => { console.error(e); process.exit(1); });`;
    const proc = Bun.spawn(["node", "-e", script], { cwd: process.cwd(), stdout: "pipe", stderr: "pipe" });
    const out = await new Response(proc.stdout).text();
    expect(await proc.exited).toBe(0);
    const { sent, got, flagged, updated, byId, history, reacted, unreacted, rendered, typing, deleted } = JSON.parse(out);
    for (const r of [updated, byId, history, reacted, unreacted, rendered, typing, deleted]) expect(r).toMatchObject({ result: "success" });
    expect(byId.message.content).toBe("<p>edited by zulip-js</p>");
    expect(byId.raw_content).toBe("edited by zulip-js");
    expect(history.message_history).toHaveLength(2);
    expect(rendered.rendered).toBe("<p><strong>zulip-js</strong></p>");
    expect(sent).toMatchObject({ result: "success" });
    expect(got.result).toBe("success");
    expect(got.messages[0].id).toBe(sent.id);
    expect(flagged).toMatchObject({ result: "success", messages: [sent.id] });
    expectError(await s.as("othello").get(`/messages/${sent.id}`), 400, "BAD_REQUEST", "Invalid message(s)");
  });

  test("malformed requests get Zulip errors, never a 500", async () => {
    const c = s.as("hamlet");
    // num_before and num_after default to 0 since FL 300 (message_ids became the other way to choose).
    expect(expectSuccess(await c.get("/messages", { anchor: "newest", num_after: 0 })).messages).toEqual([]);
    const junk: [string, string, Record<string, unknown>][] = [
      ["GET", "/messages", { anchor: "banana", num_before: 1, num_after: 1 }],
      ["GET", "/messages", { anchor: "newest", num_before: -1, num_after: 1 }],
      ["GET", "/messages", { anchor: "newest", num_before: 1, num_after: 1, narrow: "{" }],
      ["GET", "/messages", { anchor: "newest", num_before: 1, num_after: 1, narrow: JSON.stringify({ a: 1 }) }],
      ["GET", "/messages", { anchor: "newest", num_before: 1, num_after: 1, narrow: JSON.stringify([[1, 2]]) }],
      ["GET", "/messages", { anchor: "newest", num_before: 1, num_after: 1, narrow: JSON.stringify([{ operator: "topic", operand: { x: 1 } }]) }],
      ["GET", "/messages", { anchor: "newest", num_before: 1, num_after: 1, narrow: JSON.stringify([{ operator: "dm", operand: [{}] }]) }],
      ["GET", "/messages", { anchor: "newest", num_before: 1, num_after: 1, narrow: JSON.stringify([{ operator: "id", operand: "x" }]) }],
      ["GET", "/messages/abc", {}],
      ["GET", "/messages/99999999", {}],
      ["POST", "/messages", { type: "bogus", to: "x", content: "y" }],
      ["POST", "/messages", { type: "direct", to: JSON.stringify({ a: 1 }), content: "y" }],
      ["POST", "/messages", { type: "channel", to: JSON.stringify([1, 2]), content: "y" }],
      ["POST", "/messages", { type: "channel", to: "nowhere", topic: "t", content: "y" }],
      ["PATCH", "/messages/99999999", { content: "x" }],
      ["PATCH", "/messages/1", { propagate_mode: "sideways" }],
      ["POST", "/messages/flags", { messages: "[\"a\"]", op: "add", flag: "read" }],
      ["POST", "/messages/flags", { messages: [1], op: "toggle", flag: "read" }],
      ["POST", "/messages/flags/narrow", { anchor: "newest", num_before: 1, num_after: 0, op: "add", flag: "mentioned" }],
      ["POST", "/messages/1/reactions", { emoji_name: "smile", reaction_type: "weird" }],
      ["DELETE", "/messages/1/reactions", {}],
      ["POST", "/typing", { op: "start" }],
      ["POST", "/typing", { op: "start", type: "channel", stream_id: 999999, topic: "x" }],
      ["GET", "/users/me/999999/topics", {}],
      ["POST", "/streams/999999/delete_topic", { topic_name: "x" }],
      ["POST", "/mark_topic_as_read", { stream_id: 999999, topic_name: "x" }],
      ["GET", "/messages/matches_narrow", { msg_ids: "nope" }],
    ];
    for (const [method, path, params] of junk) {
      const res = await c.request(method, path, params);
      expect({ path, params, status: res.status, result: res.body.result }).toEqual({ path, params, status: 400, result: "error" });
    }
  });

  test("read_by_sender defaults by client: chat apps read, scripts unread", async () => {
    const post = (ua: string) =>
      fetch(`${s.url}/api/v1/messages`, {
        method: "POST",
        headers: {
          authorization: "Basic " + Buffer.from(`${s.users.hamlet.email}:${s.users.hamlet.apiKey}`).toString("base64"),
          "content-type": "application/x-www-form-urlencoded",
          "user-agent": ua,
        },
        body: new URLSearchParams({ type: "private", to: JSON.stringify([s.users.othello.id]), content: "x" }),
      }).then((r) => r.json() as Promise<any>);
    const app = await post("ZulipMobile/27.1 (Android 14)");
    const script = await post("ZulipPython/0.9.1 (Linux)");
    const flags = async (id: number) => expectSuccess(await s.as("hamlet").get(`/messages/${id}`)).message.flags;
    expect(await flags(app.id)).toEqual(["read"]);
    expect(await flags(script.id)).toEqual([]);
    expect(expectSuccess(await s.as("hamlet").get(`/messages/${app.id}`)).message.client).toBe("ZulipMobile");
  });

  test("direct message policies: permission and initiator groups", async () => {
    const h = s.server.h;
    const { othello, iago, hamlet, cordelia } = s.users;
    const admins = systemGroupId(h.store, "role:administrators");
    const everyone = systemGroupId(h.store, "role:everyone");
    await setRealm({ direct_message_permission_group: admins });
    expectError(await s.as("hamlet").post("/messages", { type: "direct", to: [othello.id], content: "x" }), 400, "BAD_REQUEST", "This conversation does not include any users who can authorize it.");
    await sendDm("hamlet", [iago.id], "an admin authorizes this");
    await sendDm("hamlet", [hamlet.id], "self is always fine");
    await setRealm({ direct_message_permission_group: everyone, direct_message_initiator_group: admins });
    expectError(await s.as("cordelia").post("/messages", { type: "direct", to: [iago.id, othello.id], content: "x" }), 400, "BAD_REQUEST", "You do not have permission to initiate direct message conversations.");
    await sendDm("othello", [hamlet.id], "existing conversation");
    await setRealm({ direct_message_initiator_group: everyone });
    expect(cordelia.id).toBeGreaterThan(0);
  });

  test("typing respects receives_typing_notifications and send_private_typing_notifications", async () => {
    const { othello, hamlet } = s.users;
    expectSuccess(await s.as("othello").patch("/settings", { receives_typing_notifications: false }));
    recorded.clear();
    expectSuccess(await s.as("hamlet").post("/typing", { op: "start", to: JSON.stringify([othello.id]) }));
    expect(eventsOfType("typing")[0].userIds).toEqual([hamlet.id]);
    expectSuccess(await s.as("othello").patch("/settings", { receives_typing_notifications: true }));
    expectSuccess(await s.as("hamlet").patch("/settings", { send_private_typing_notifications: false }));
    recorded.clear();
    expectSuccess(await s.as("hamlet").post("/typing", { op: "start", to: JSON.stringify([othello.id]) }));
    expect(eventsOfType("typing")).toEqual([]);
    expectSuccess(await s.as("hamlet").patch("/settings", { send_private_typing_notifications: true }));
  });

  test("muting a user marks that sender's unread messages read, no one else's", async () => {
    const { othello, cordelia } = s.users;
    const fromCordelia = await sendDm("cordelia", [othello.id], "mute me");
    const fromHamlet = await sendDm("hamlet", [othello.id], "not me");
    expectSuccess(await s.as("othello").post(`/users/me/muted_users/${cordelia.id}`));
    const flags = async (id: number) => expectSuccess(await s.as("othello").get(`/messages/${id}`)).message.flags;
    expect(await flags(fromCordelia)).toContain("read");
    expect(await flags(fromHamlet)).not.toContain("read");
    expectSuccess(await s.as("othello").delete(`/users/me/muted_users/${cordelia.id}`));
  });
});

describe("input found in review", () => {
  test("content with a NUL byte is refused; leading blank lines are dropped", async () => {
    const { othello } = s.users;
    expectError(await s.as("hamlet").post("/messages", { type: "direct", to: [othello.id], content: "a\0b" }), 400, "BAD_REQUEST", "Message must not contain null bytes");
    const id = expectSuccess(await s.as("hamlet").post("/messages", { type: "direct", to: [othello.id], content: "\n\nhello" })).id;
    expect(expectSuccess(await s.as("hamlet").get(`/messages/${id}`)).raw_content).toBe("hello");
  });

  test("narrow operands: has:constructor and non-numeric IDs are BAD_NARROW; anchors at either end report found_oldest/found_newest", async () => {
    for (const narrow of [[{ operator: "has", operand: "constructor" }], [{ operator: "id", operand: "" }], [{ operator: "with", operand: [1] }]]) {
      expectError(await s.as("hamlet").get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow }), 400, "BAD_NARROW");
    }
    expect(expectSuccess(await s.as("hamlet").get("/messages", { anchor: 0, num_before: 0, num_after: 1 })).found_oldest).toBe(true);
    expect(expectSuccess(await s.as("hamlet").get("/messages", { anchor: "10000000000000000", num_before: 1, num_after: 0 })).found_newest).toBe(true);
  });
});
