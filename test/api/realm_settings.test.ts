/** PATCH /realm: organization settings changed by administrators, with Zulip's realm events. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectSuccess, startTestServer, type TestServer } from "../kit";
import { register, verifyAction } from "../kit/events";

let s: TestServer;
let lobby: number;
let mods: number;
beforeAll(async () => {
  s = await startTestServer();
  lobby = await s.createChannel("iago", "Lobby", ["iago", "hamlet"]);
  mods = await s.createChannel("iago", "Moderators", ["iago"], { invite_only: true });
});
afterAll(() => s.stop());

describe("PATCH /realm", () => {
  test("administrators change settings; everyone gets realm update events; state and events agree", async () => {
    const r = await verifyAction(s, async () => {
      const changed = expectSuccess(
        await s.as("iago").patch("/realm", {
          name: "Elsinore Castle",
          description: "Something is rotten",
          mandatory_topics: true,
          allow_message_editing: false,
          message_content_edit_limit_seconds: JSON.stringify("unlimited"),
          waiting_period_threshold: 3,
          new_stream_announcements_stream_id: lobby,
          moderation_request_channel_id: mods,
          can_add_custom_emoji_group: JSON.stringify({ new: 6 }),
        }),
      );
      expect(changed).toMatchObject({ name: "Elsinore Castle", mandatory_topics: true, allow_message_editing: false, message_content_edit_limit_seconds: null });
    });
    const events = r.events.hamlet.filter((e: any) => e.type === "realm");
    expect(events).toContainEqual(expect.objectContaining({ op: "update", property: "name", value: "Elsinore Castle" }));
    expect(events).toContainEqual(expect.objectContaining({ op: "update", property: "moderation_request_channel_id", value: mods }));
    // Zulip's historical form for the message-editing settings, and for group settings.
    expect(events).toContainEqual(expect.objectContaining({ op: "update_dict", property: "default", data: { allow_message_editing: false } }));
    // The description as update_dict from FL 464.
    expect(events).toContainEqual(expect.objectContaining({ op: "update_dict", property: "default", data: { description: "Something is rotten" } }));
    expect(events.some((e: any) => e.op === "update" && e.property === "description")).toBe(false);
    expect(events).toContainEqual(expect.objectContaining({ op: "update_dict", property: "default", data: { can_add_custom_emoji_group: 6 } }));
    const state = await register(s.as("hamlet"));
    expect(state).toMatchObject({ realm_name: "Elsinore Castle", realm_mandatory_topics: true, realm_message_content_edit_limit_seconds: null, realm_can_add_custom_emoji_group: 6 });
    expect(expectSuccess(await s.anonymous().get("/server_settings")).realm_name).toBe("Elsinore Castle");

    // The settings take effect: editing is off now.
    const id = expectSuccess(await s.as("hamlet").post("/messages", { type: "stream", to: lobby, topic: "t", content: "hi" })).id;
    expectError(await s.as("hamlet").patch(`/messages/${id}`, { content: "changed" }), 400, "BAD_REQUEST", "Your organization has turned off message editing");

    // Setting what is already set announces nothing.
    const again = await verifyAction(s, async () => {
      expect(expectSuccess(await s.as("iago").patch("/realm", { mandatory_topics: true }))).toEqual({ result: "success", msg: "" });
    });
    expect(again.types.hamlet).toEqual([]);
    expectSuccess(await s.as("iago").patch("/realm", { allow_message_editing: true, mandatory_topics: false }));
  });

  test("register's can_create_*_streams follow the permission groups", async () => {
    expectSuccess(await s.as("iago").patch("/realm", { can_create_public_channel_group: JSON.stringify({ new: 6 }) }));
    const member = await register(s.as("hamlet"));
    expect(member).toMatchObject({ can_create_public_streams: false, can_create_private_streams: true, can_create_streams: true });
    expectError(await s.as("hamlet").post("/users/me/subscriptions", { subscriptions: [{ name: "Hamlet's public" }] }), 400, "BAD_REQUEST", "Insufficient permission");
    expect((await register(s.as("iago"))).can_create_public_streams).toBe(true);
    expectSuccess(await s.as("iago").patch("/realm", { can_create_public_channel_group: JSON.stringify({ new: 3 }) }));
  });

  test("default_code_block_language gives code blocks that name no language that language, as Zulip renders them", async () => {
    const render = async (content: string) => expectSuccess(await s.as("hamlet").post("/messages/render", { content })).rendered;
    expect(await render("```\nx = 1\n```")).toBe('<div class="codehilite"><pre><span></span><code>x = 1\n</code></pre></div>');
    // Announced as Zulip announces it; a fresh register agrees with the events.
    const r = await verifyAction(s, async () => {
      expectSuccess(await s.as("iago").patch("/realm", { default_code_block_language: "py" }));
    });
    expect(r.events.hamlet).toContainEqual(expect.objectContaining({ type: "realm", op: "update", property: "default_code_block_language", value: "py" }));
    expect((await register(s.as("hamlet"))).realm_default_code_block_language).toBe("py");
    // Only what a fence can name: it is written into every code block that names none.
    for (const bad of ['py" onclick="x', "a".repeat(101), "two words"]) {
      expectError(await s.as("iago").patch("/realm", { default_code_block_language: bad }), 400, "BAD_REQUEST", "Invalid default_code_block_language");
    }
    expect((await register(s.as("hamlet"))).realm_default_code_block_language).toBe("py");
    try {
      expect(await render("```\nx = 1\n```")).toBe('<div class="codehilite" data-code-language="Python"><pre><span></span><code>x = <span class="mi">1</span>\n</code></pre></div>');
      expect(await render("```js\nx = 1\n```")).toContain('data-code-language="JavaScript"');
    } finally {
      expectSuccess(await s.as("iago").patch("/realm", { default_code_block_language: "" }));
    }
    expect(await render("```\nx = 1\n```")).not.toContain("data-code-language");
  });

  test("members cannot; bad values are rejected and nothing is written", async () => {
    expectError(await s.as("hamlet").patch("/realm", { name: "Mine" }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    expectError(await s.as("iago").patch("/realm", { name: "x".repeat(41) }), 400, "BAD_REQUEST", "Organization name is too long.");
    expectError(await s.as("iago").patch("/realm", { moderation_request_channel_id: lobby }), 400, "BAD_REQUEST", "Moderation request channel must be private.");
    expectError(await s.as("iago").patch("/realm", { new_stream_announcements_stream_id: 9999 }), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await s.as("iago").patch("/realm", { message_content_edit_limit_seconds: JSON.stringify("soon") }), 400, "BAD_REQUEST");
    expectError(
      await s.as("iago").patch("/realm", { can_create_public_channel_group: JSON.stringify({ new: 2 }) }),
      400,
      "BAD_REQUEST",
      "'can_create_public_channel_group' setting cannot be set to 'role:everyone' group.",
    );
    // A failing value anywhere leaves every other change unwritten.
    expectError(await s.as("iago").patch("/realm", { description: "half", can_add_subscribers_group: JSON.stringify({ new: 6, old: 2 }) }), 400, "BAD_REQUEST");
    expect((await register(s.as("iago"))).realm_description).not.toBe("half");
  });
});

describe("POST /messages/{message_id}/report", () => {
  const newest = async (channel: number) =>
    expectSuccess(await s.as("iago").get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow: [{ operator: "channel", operand: channel }], apply_markdown: false })).messages[0];

  test("the Notification Bot posts the report in the moderation channel, worded as Zulip words it", async () => {
    const { hamlet, othello } = s.users;
    const hamletName = "King Hamlet";
    const othelloName = "Othello, the Moor of Venice";
    expectSuccess(await s.as("iago").patch("/realm", { moderation_request_channel_id: -1 }));
    const id = expectSuccess(await s.as("othello").post("/messages", { type: "stream", to: lobby, topic: "insults", content: "You are a ```fool```" })).id;
    expectError(await s.as("hamlet").post(`/messages/${id}/report`, { report_type: "harassment" }), 400, "BAD_REQUEST", "Moderation request channel must be specified to enable message reporting.");

    expectSuccess(await s.as("iago").patch("/realm", { moderation_request_channel_id: mods }));
    expectSuccess(await s.as("hamlet").post(`/messages/${id}/report`, { report_type: "harassment", description: "Rude." }));
    const report = await newest(mods);
    expect(report.sender_email).toContain("notification-bot");
    expect(report.subject).toBe(`${othelloName}'s moderation requests`);
    expect(report.content).toBe(
      [
        `@_**${hamletName}|${hamlet.id}** reported #**Lobby>insults@${id}** sent by @_**${othelloName}|${othello.id}**.`,
        "- Reason: **harassment**",
        "- Notes:",
        "```quote",
        "Rude.",
        "```",
        `\`\`\` spoiler **Message sent by @_**${othelloName}|${othello.id}****`,
        "You are a ```fool```",
        "```",
      ].join("\n"),
    );

    // A direct message between two people.
    const dm = expectSuccess(await s.as("othello").post("/messages", { type: "direct", to: [hamlet.id], content: "psst" })).id;
    expectSuccess(await s.as("hamlet").post(`/messages/${dm}/report`, { report_type: "spam" }));
    expect((await newest(mods)).content.split("\n")[0]).toBe(`@_**${hamletName}|${hamlet.id}** reported a DM sent by @_**${othelloName}|${othello.id}**.`);
    // The report is in the private moderation channel: a member outside it cannot read it.
    expectError(await s.as("hamlet").get(`/messages/${(await newest(mods)).id}`), 400, "BAD_REQUEST", "Invalid message(s)");
  });

  test("a report about a user with a long name goes to a topic of at most 60 characters", async () => {
    const longName = await s.createUser("longname");
    expectSuccess(await s.as("iago").patch(`/users/${longName.id}`, { full_name: "L".repeat(90) }));
    expectSuccess(await s.as("iago").post("/users/me/subscriptions", { subscriptions: [{ name: "Lobby" }], principals: [longName.id] }));
    const id = expectSuccess(await s.as(longName).post("/messages", { type: "stream", to: lobby, topic: "t", content: "spam spam" })).id;
    expectSuccess(await s.as("hamlet").post(`/messages/${id}/report`, { report_type: "spam" }));
    const report = await newest(mods);
    expect([...report.subject].length).toBeLessThanOrEqual(60);
    expect(report.subject.startsWith("LLLL")).toBe(true);
  });

  test("bad reports are refused", async () => {
    const id = expectSuccess(await s.as("othello").post("/messages", { type: "stream", to: lobby, topic: "t", content: "hello" })).id;
    expectError(await s.as("hamlet").post(`/messages/${id}/report`, { report_type: "boring" }), 400, "BAD_REQUEST", "Invalid report_type: Value error, Not in the list of possible values");
    expectError(await s.as("hamlet").post(`/messages/${id}/report`, { report_type: "other" }), 400, "BAD_REQUEST", "An explanation is required.");
    expectError(await s.as("hamlet").post(`/messages/${id}/report`, { report_type: "spam", description: "x".repeat(1001) }), 400, "BAD_REQUEST");
    // A message the reporter cannot read.
    const hidden = expectSuccess(await s.as("iago").post("/messages", { type: "stream", to: mods, topic: "t", content: "secret" })).id;
    expectError(await s.as("hamlet").post(`/messages/${hidden}/report`, { report_type: "spam" }), 400, "BAD_REQUEST", "Invalid message(s)");
    // Not a key of the register's list, though an object's own property in JavaScript.
    expectError(await s.as("hamlet").post(`/messages/${id}/report`, { report_type: "constructor" }), 400, "BAD_REQUEST");
  });

  test("register lists the report types the endpoint accepts (FL 435)", async () => {
    const state = expectSuccess(await s.as("hamlet").post("/register", { fetch_event_types: JSON.stringify(["realm"]) }));
    expect(state.server_report_message_types).toEqual([
      { key: "spam", name: "Spam" },
      { key: "harassment", name: "Harassment" },
      { key: "inappropriate", name: "Inappropriate content" },
      { key: "norms", name: "Violates community norms" },
      { key: "other", name: "Other reason" },
    ]);
    const id = expectSuccess(await s.as("othello").post("/messages", { type: "stream", to: lobby, topic: "t", content: "each type" })).id;
    for (const { key } of state.server_report_message_types) {
      expectSuccess(await s.as("hamlet").post(`/messages/${id}/report`, { report_type: key, description: "Because." }));
    }
  });
});
