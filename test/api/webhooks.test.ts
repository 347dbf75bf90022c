/**
 * Incoming webhooks: Zulip's JSON formatter at /api/v1/external/json, called the way
 * services call Zulip's webhook URLs (the bot's key in the URL, the payload as the body).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type ApiResponse, expectError, expectSchema, expectSuccess, startTestServer, type TestServer, type TestUser } from "../kit";
import { auth } from "../kit/process";
import { RegisterResponse } from "../../src/schemas/register";

let s: TestServer;
let denmark: number;
let bot: TestUser;

beforeAll(async () => {
  s = await startTestServer();
  denmark = await s.createChannel("iago", "Denmark", ["hamlet"]);
  bot = await s.createBot("hamlet", { full_name: "Hook", short_name: "hook", bot_type: 2 });
});
afterAll(() => s.stop());

const hook = (query: string, body: string, contentType = "application/json") =>
  fetch(`${s.url}/api/v1/external/json?${query}`, { method: "POST", headers: { "content-type": contentType }, body });
/** A raw fetch's response in the shape expectSuccess/expectError check, with its real HTTP status. */
const api = async (r: Response): Promise<ApiResponse> => ({ status: r.status, body: await r.json(), headers: r.headers });
const newest = async (who: "hamlet" | "iago", narrow: unknown[]) =>
  expectSuccess(await s.as(who).get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow, apply_markdown: "false" })).messages[0];

describe("JSON formatter webhook", () => {
  test("posts the payload as a code block to the channel and topic in the URL", async () => {
    const res = await hook(`api_key=${bot.apiKey}&stream=Denmark&topic=alerts`, JSON.stringify({ status: "down", host: "élsinore", checks: [1, 2] }));
    expect(res.status).toBe(200);
    expect((await res.json()).result).toBe("success");
    const m = await newest("hamlet", [{ operator: "channel", operand: denmark }]);
    expect(m).toMatchObject({ sender_id: bot.id, subject: "alerts", client: "ZulipJSONWebhook" });
    expect(m.content).toBe('```json\n{\n  "status": "down",\n  "host": "\\u00e9lsinore",\n  "checks": [\n    1,\n    2\n  ]\n}\n```');
  });

  test("the topic defaults to JSON; a channel ID works; curl's form-encoded body is still the payload", async () => {
    expectSuccess(await api(await hook(`api_key=${bot.apiKey}&stream=${denmark}`, '{"a":1}', "application/x-www-form-urlencoded")));
    const m = await newest("hamlet", [{ operator: "channel", operand: denmark }]);
    expect(m.subject).toBe("JSON");
    expect(m.content).toBe('```json\n{\n  "a": 1\n}\n```');
  });

  test("without a channel, the bot's owner gets a direct message", async () => {
    expect((await hook(`api_key=${bot.apiKey}`, "[true]")).status).toBe(200);
    const m = await newest("hamlet", [{ operator: "dm", operand: [bot.id] }]);
    expect(m).toMatchObject({ sender_id: bot.id, type: "private", content: "```json\n[\n  true\n]\n```" });
  });

  test("errors: bad key, malformed JSON, unknown channel (accepted, as in Zulip)", async () => {
    const bad = await hook("api_key=wrong&stream=Denmark", "{}");
    expect(bad.status).toBe(401);
    expect((await bad.json()).code).toBe("INVALID_API_KEY");
    const malformed = await hook(`api_key=${bot.apiKey}&stream=Denmark`, "{nope");
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).msg).toBe("Malformed JSON");
    expect((await hook(`api_key=${bot.apiKey}&stream=Nowhere`, "{}")).status).toBe(200);
    expect((await hook("stream=Denmark", "{}")).status).toBe(401);
    // Basic credentials work too.
    const basic = await fetch(`${s.url}/api/v1/external/json?stream=Denmark`, {
      method: "POST",
      headers: { ...auth(s.users.hamlet.email, s.users.hamlet.apiKey), "content-type": "application/json" },
      body: "{}",
    });
    expect(basic.status).toBe(200);
    expectError(await api(await fetch(`${s.url}/api/v1/external/nope?api_key=${bot.apiKey}`, { method: "POST", body: "{}" })), 404, "NOT_FOUND");
  });

  test("the owner hears from the Notification Bot of a missing or empty channel, at most once per five minutes", async () => {
    const watcher = expectSuccess(await s.as("hamlet").post("/bots", { full_name: "Watcher", short_name: "watcher", bot_type: 2 }));
    const watcherEmail = expectSuccess(await s.as("hamlet").get(`/users/${watcher.user_id}`)).user.email;
    const lastDm = () => newest("hamlet", [{ operator: "is", operand: "dm" }]);
    expectSuccess(await api(await hook(`api_key=${watcher.api_key}&stream=Atlantis`, "{}")));
    const warning = await lastDm();
    expect(warning.sender_email).toContain("notification-bot");
    expect(warning.content).toBe(
      `Your bot \`${watcherEmail}\` tried to send a message to channel #**Atlantis**, but that channel does not exist. Click [here](#channels/new) to create it.`,
    );
    // Again at once: accepted, and no second warning.
    expectSuccess(await api(await hook(`api_key=${watcher.api_key}&stream=Atlantis`, "{}")));
    expect((await lastDm()).id).toBe(warning.id);
    // A channel ID that does not exist is an error for the service.
    expectError(await api(await hook(`api_key=${watcher.api_key}&stream=999999`, "{}")), 400, "BAD_REQUEST", "Channel with ID '999999' does not exist");
    // So is a private channel that neither the bot nor its owner is in: never silently dropped.
    await s.createChannel("iago", "Vault", ["iago"], { invite_only: true });
    expectError(await api(await hook(`api_key=${watcher.api_key}&stream=Vault`, "{}")), 400, "STREAM_DOES_NOT_EXIST");
    expectError(await api(await hook(`api_key=${watcher.api_key}&stream=%20`, "{}")), 400, "BAD_REQUEST", "Channel name can't be empty.");

    // A channel without subscribers gets the message, and the owner a warning.
    const lonely = expectSuccess(await s.as("hamlet").post("/bots", { full_name: "Lonely", short_name: "lonely", bot_type: 2 }));
    const lonelyEmail = expectSuccess(await s.as("hamlet").get(`/users/${lonely.user_id}`)).user.email;
    const empty = await s.createChannel("iago", "Empty", ["iago"]);
    expectSuccess(await s.as("iago").delete("/users/me/subscriptions", { subscriptions: ["Empty"] }));
    expectSuccess(await api(await hook(`api_key=${lonely.api_key}&stream=Empty&topic=echo`, '{"x":1}')));
    expect(await newest("iago", [{ operator: "channel", operand: empty }])).toMatchObject({ sender_id: lonely.user_id, subject: "echo" });
    expect((await lastDm()).content).toBe(
      `Your bot \`${lonelyEmail}\` tried to send a message to channel #**Empty**. The channel exists but does not have any subscribers.`,
    );
  });

  test("an incoming-webhook bot's key may post, but reads nothing (a leaked webhook URL must not)", async () => {
    const client = s.as(bot);
    expectSuccess(await client.post("/messages", { type: "stream", to: denmark, topic: "t", content: "posted by the hook" }));
    for (const res of [await client.get("/messages", { anchor: "newest", num_before: 1, num_after: 0 }), await client.get("/users"), await client.post("/register", {})]) {
      expectError(res, 401, "UNAUTHORIZED", "This API is not available to incoming webhook bots.");
    }
    // The poll short path refuses it too.
    const poll = await client.get("/events", { queue_id: "x", last_event_id: -1 });
    expect(poll.status).toBe(401);
    expectError(poll, 401, "UNAUTHORIZED", "This API is not available to incoming webhook bots.");
  });

  test("a bot posts where its owner is subscribed, private channels included; deep payloads are refused", async () => {
    const secret = await s.createChannel("hamlet", "Secret", ["hamlet"], { invite_only: true });
    expect((await hook(`api_key=${bot.apiKey}%20&stream=Secret&topic=inside`, '{"ok":true}')).status).toBe(200);
    expect((await newest("hamlet", [{ operator: "channel", operand: secret }])).content).toBe('```json\n{\n  "ok": true\n}\n```');
    const deep = await hook(`api_key=${bot.apiKey}&stream=Denmark`, "[".repeat(20_000) + "]".repeat(20_000));
    expect(deep.status).toBe(400);
    expect((await deep.json()).msg).toBe("Malformed JSON");
    // The server is still whole: the next payload posts. (How fast the refusal is
    // belongs in a benchmark, not here.)
    expect((await hook(`api_key=${bot.apiKey}&stream=Secret&topic=after`, '{"after":1}')).status).toBe(200);
  });

  test("an incoming-webhook bot cannot upload through tus either", async () => {
    const res = await fetch(`${s.url}/api/v1/tus`, {
      method: "POST",
      headers: {
        ...auth(bot.email, bot.apiKey),
        "tus-resumable": "1.0.0",
        "upload-length": "4",
        "upload-metadata": `filename ${Buffer.from("a.txt").toString("base64")}`,
      },
    });
    expect(res.status).toBe(401);
  });

  test("register lists the integrations", async () => {
    const state = expectSuccess(await s.as("hamlet").post("/register", {}));
    expect(state.realm_incoming_webhook_bots).toEqual([
      { name: "json", display_name: "JSON formatter", all_event_types: null, config_options: [], url_options: [] },
      { name: "slack_incoming", display_name: "Slack-compatible webhook", all_event_types: null, config_options: [], url_options: [] },
    ]);
    expectSchema(RegisterResponse, state);
  });
});

describe("Slack-compatible webhook", () => {
  const slack = (query: string, body: string, contentType = "application/json") =>
    fetch(`${s.url}/api/v1/external/slack_incoming?api_key=${bot.apiKey}&stream=Denmark&${query}`, { method: "POST", headers: { "content-type": contentType }, body });
  const last = () => newest("hamlet", [{ operator: "channel", operand: denmark }]);
  /** Posts a payload to topic "ci" and checks the message it became. */
  const expectRendered = async (payload: unknown, content: string) => {
    expect((await slack("topic=ci", JSON.stringify(payload))).status).toBe(200);
    expect((await last()).content).toBe(content);
  };

  test("text: Slack's links and emphasis become Zulip's Markdown; the channel names the topic", async () => {
    expect((await slack("", JSON.stringify({ channel: "#deploys", icon_emoji: ":rocket:", text: "*Deployed* _v2_ to <https://example.com/app|production>" }))).status).toBe(200);
    expect(await last()).toMatchObject({ subject: "deploys", content: ":rocket: **Deployed** *v2* to [production](https://example.com/app)" });
    // The form Slack's own clients post: the JSON in a `payload` field; `topic` wins over the channel.
    const form = new URLSearchParams({ payload: JSON.stringify({ channel: "@someone", text: "from a form" }) }).toString();
    expect((await slack("topic=forms", form, "application/x-www-form-urlencoded")).status).toBe(200);
    expect(await last()).toMatchObject({ subject: "forms", content: "from a form" });
  });

  test("blocks and attachments render as Zulip renders them", async () => {
    const payload = {
      blocks: [
        { type: "header", text: { type: "plain_text", text: "Build 42" } },
        { type: "section", text: { type: "mrkdwn", text: "All *green*" }, fields: [{ type: "mrkdwn", text: "a" }, { type: "mrkdwn", text: "b|c" }, { type: "plain_text", text: "d" }] },
        { type: "divider" },
        { type: "actions", elements: [] },
      ],
      attachments: [{ title: "Logs", title_link: "https://ci.example/42", fields: [{ title: "Took", value: "3 min" }, { title: "Runner" }], footer: "CI", ts: 1700000000 }],
    };
    await expectRendered(
      payload,
      "## Build 42\n\nAll **green**\n\n| | |\n|-|-|\n| a | b c |\n| d |  |\n\n----\n\n## [Logs](https://ci.example/42)\n\n**Took**: 3 min\n**Runner**\n\nCI\n\n<time:2023-11-14T22:13:20+00:00>",
    );
  });

  // Expected output worked out from Zulip's render_block (zerver/webhooks/slack_incoming).
  test("context and image blocks render as Zulip renders them", async () => {
    const payload = {
      blocks: [
        // Context: each element on its own paragraph (Slack packs them on one line); blank ones dropped.
        {
          type: "context",
          elements: [
            { type: "mrkdwn", text: "Deployed by *ci*" },
            { type: "image", image_url: "https://ci.example/avatar.png", alt_text: "ci avatar" },
            { type: "plain_text", text: "  " },
            { type: "plain_text", text: "in 3 min" },
          ],
        },
        // A context block without elements says nothing.
        { type: "context", elements: [] },
        // Image: a link named by the alt text, or by the title when there is one.
        { type: "image", image_url: "https://ci.example/graph.png", alt_text: "graph" },
        { type: "image", image_url: "https://ci.example/map.png", alt_text: "map", title: { type: "plain_text", text: "Coverage map" } },
      ],
    };
    await expectRendered(
      payload,
      "Deployed by **ci**\n\n[ci avatar](https://ci.example/avatar.png)\n\nin 3 min\n\n[graph](https://ci.example/graph.png)\n\n[Coverage map](https://ci.example/map.png)",
    );
  });

  // Expected output worked out from Zulip's render_attachment (zerver/webhooks/slack_incoming).
  test("attachments: pretext after the title, the image as an unnamed link before the footer", async () => {
    const payload = {
      attachments: [
        { pretext: "Nightly run", text: "3 failures", image_url: "https://ci.example/chart.png" },
        { footer: "CI", image_url: "https://ci.example/report.png", pretext: "See below", title: "Report", title_link: "https://ci.example/report" },
        // Empty pieces are left out, as Zulip leaves out every falsy field.
        { pretext: "", image_url: "", title: "Quiet" },
      ],
    };
    await expectRendered(
      payload,
      "Nightly run\n\n3 failures\n\n[](https://ci.example/chart.png)\n\n## [Report](https://ci.example/report)\n\nSee below\n\n[](https://ci.example/report.png)\n\nCI\n\n## Quiet",
    );
  });

  test("nothing to say posts nothing; bad payloads get clear errors", async () => {
    const before = (await last()).id;
    expect((await slack("", JSON.stringify({ text: "" }))).status).toBe(200);
    expect((await last()).id).toBe(before);
    // Past authentication, errors come in Slack's shape, as Zulip answers them.
    const missing = await slack("", "", "application/x-www-form-urlencoded");
    expect({ status: missing.status, body: await missing.json() }).toEqual({ status: 400, body: { ok: false, error: "Missing 'payload' argument" } });
    const badType = await slack("", JSON.stringify({ blocks: [{ type: "video" }] }));
    expect({ status: badType.status, body: await badType.json() }).toEqual({ status: 400, body: { ok: false, error: 'Invalid payload["blocks"][0]["type"]' } });
    const malformed = await slack("", "{oops");
    expect({ status: malformed.status, body: await malformed.json() }).toEqual({ status: 400, body: { ok: false, error: "Malformed JSON" } });
    const badUrl = await slack("", JSON.stringify({ blocks: [{ type: "image", image_url: "javascript:alert(1)", alt_text: "x" }] }));
    expect(await badUrl.json()).toEqual({ ok: false, error: 'payload["blocks"][0]["image_url"] is not a URL' });
    const badTs = await slack("", JSON.stringify({ attachments: [{ text: "x", ts: "soon" }] }));
    expect(await badTs.json()).toEqual({ ok: false, error: 'payload["attachments"][0]["ts"] is not an integer' });
    // A wrong key is still Zulip's own error.
    const wrongKey = await fetch(`${s.url}/api/v1/external/slack_incoming?api_key=wrong&stream=Denmark`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect((await wrongKey.json()).result).toBe("error");
    expect((await last()).id).toBe(before);
  });

  test("hostile payloads: near-matches of Slack's link syntax stay fast, out-of-range values are refused, never a 500", async () => {
    // Near-misses of the mailto and link patterns, many kilobytes long (Zulip's own patterns took minutes on these).
    const nearMailto = "<a@b" + ".b".repeat(8000);
    expect((await slack("topic=hostile", JSON.stringify({ text: nearMailto }))).status).toBe(200);
    expect((await last()).content.length).toBeGreaterThan(0);
    const nearLinks = "<a.co/".repeat(8000);
    expect((await slack("topic=hostile", JSON.stringify({ text: nearLinks }))).status).toBe(200);
    // Bounds: a list indent, a time, a URL with a lone surrogate.
    const list = { blocks: [{ type: "rich_text", elements: [{ type: "rich_text_list", style: "bullet", indent: 1e9, elements: [] }] }] };
    expect(await (await slack("", JSON.stringify(list))).json()).toEqual({ ok: false, error: 'payload["blocks"][0]["elements"][0]["indent"] is too large' });
    for (const ts of [1e20, "1e300", -1e16]) {
      expect(await (await slack("", JSON.stringify({ attachments: [{ text: "x", ts }] }))).json()).toEqual({ ok: false, error: 'payload["attachments"][0]["ts"] is out of range' });
    }
    expect((await slack("topic=hostile", JSON.stringify({ attachments: [{ image_url: "bad \ud800" }] }))).status).toBe(200);
    expect((await last()).content).toBe("[](bad%20%EF%BF%BD)");
  });

  // Expected output worked out from Zulip's newest renderer (zerver/data_import/slack_message_conversion.py).
  test("the newest Zulip renderer: rich text, formatting per piece, URLs checked, timestamps as times, `ok`", async () => {
    const richText = {
      type: "rich_text",
      elements: [
        {
          type: "rich_text_section",
          elements: [
            { type: "text", text: "Deploy ", style: { bold: true } },
            { type: "text", text: "done", style: { italic: true, code: true } },
            { type: "text", text: " by " },
            { type: "user", user_id: "U123" },
            { type: "text", text: " " },
            { type: "emoji", name: "tada" },
            { type: "text", text: " see " },
            { type: "link", url: "https://ci.example/run", text: "the run" },
            { type: "broadcast", range: "here" },
          ],
        },
        { type: "rich_text_list", style: "bullet", indent: 1, elements: [{ type: "rich_text_section", elements: [{ type: "text", text: "one" }] }, { type: "rich_text_section", elements: [{ type: "text", text: "two" }] }] },
        { type: "rich_text_quote", elements: [{ type: "text", text: "quoted" }] },
        { type: "rich_text_preformatted", elements: [{ type: "text", text: "x = 1" }] },
      ],
    };
    const payload = {
      blocks: [
        richText,
        // Headers keep Slack's markers as they are; sections convert them.
        { type: "header", text: { type: "plain_text", text: "*Release*" } },
        { type: "section", text: { type: "mrkdwn", text: "~old~ _new_ <mailto:ops@example.com|ops@example.com>" }, accessory: { type: "image", image_url: "not a url", alt_text: "dropped" } },
        // Types Zulip knows but does not show.
        { type: "file", external_id: "x" },
        { type: "table", rows: [] },
        { type: "call", call_id: "c" },
      ],
      attachments: [{ text: "*attached*", image_url: "https://ci.example/a b.png", ts: "1700000000.987" }],
    };
    const res = await slack("topic=rich", JSON.stringify(payload));
    expect({ status: res.status, body: await res.json() }).toEqual({ status: 200, body: { result: "success", msg: "", ok: true } });
    expect((await last()).content).toBe(
      [
        "**Deploy** *`done`* by @**Slack user U123** :tada: see [the run](https://ci.example/run)@**all**\n   - one\n   - two\n```quote\nquoted\n```\n```text\nx = 1\n```",
        "## *Release*",
        "~~old~~ *new* mailto:ops@example.com",
        "**attached**\n\n[](https://ci.example/a%20b.png)\n\n<time:2023-11-14T22:13:20+00:00>",
      ].join("\n\n"),
    );
  });
});
