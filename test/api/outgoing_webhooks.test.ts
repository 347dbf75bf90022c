/**
 * Outgoing-webhook bots (bot type 3): a mention in a channel or a direct message to
 * the bot is posted to the bot's URL — here a real HTTP server on loopback — and what
 * it answers comes back as the bot's message; failures reach the conversation and
 * the bot's owner, as Zulip's outgoing_webhooks worker reports them.
 */
import { createServer, type AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { expectError, expectSchema, expectSuccess, startTestServer, type TestServer, type TestUser } from "../kit";
import { register, verifyAction } from "../kit/events";
import { RegisterResponse } from "../../src/schemas/register";
import { drainOutgoingWebhooks } from "../../src/actions/outgoing_webhooks";
import { connectionLookup, isInternalAddressUrl } from "../../src/actions/outgoing_webhook_http";

let s: TestServer;
let denmark: number;
/** What the bot's server got, and what it answers next (status, body). */
let received: { contentType: string; userAgent: string; body: string }[] = [];
let answer: { status: number; body: string } = { status: 200, body: "{}" };
let receiver: ReturnType<typeof Bun.serve>;
/** A loopback URL nothing listens on: every call to it is a connection error. */
let deadUrl: string;

beforeAll(async () => {
  // The bot's server here is on loopback, which a default server refuses to call (last test).
  s = await startTestServer({ env: { HEARTH_OUTGOING_WEBHOOKS_TO_PRIVATE_NETWORKS: "allow" } });
  denmark = await s.createChannel("iago", "Denmark", ["hamlet", "othello"]);
  receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      received.push({ contentType: request.headers.get("content-type") ?? "", userAgent: request.headers.get("user-agent") ?? "", body: await request.text() });
      return new Response(answer.body, { status: answer.status, headers: { "content-type": "application/json" } });
    },
  });
  const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  deadUrl = `http://127.0.0.1:${closed.port}/gone`;
  closed.stop(true);
});
afterAll(async () => {
  await s.stop();
  receiver.stop(true);
});
beforeEach(() => {
  received = [];
  answer = { status: 200, body: "{}" };
});

const hookUrl = (path = "/hook") => `http://127.0.0.1:${receiver.port}${path}`;

async function outgoingBot(short: string, fields: Record<string, unknown> = {}): Promise<TestUser & { created: Record<string, any> }> {
  return s.createBot("hamlet", { full_name: `${short} bot`, short_name: short, bot_type: 3, payload_url: JSON.stringify(hookUrl()), ...fields });
}

/** Sends as `who`, then waits for the outgoing calls it started (and their replies). */
async function send(who: "hamlet" | "othello" | TestUser, params: Record<string, unknown>): Promise<number> {
  const id = expectSuccess(await s.as(who).post("/messages", params)).id as number;
  await drainOutgoingWebhooks(s.server.h);
  return id;
}

async function newest(who: "hamlet" | "othello", narrow: unknown[]): Promise<any> {
  return expectSuccess(await s.as(who).get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow, apply_markdown: "false" })).messages[0];
}

describe("creating an outgoing-webhook bot", () => {
  test("its service (URL, interface, a token) is in realm_bots and the realm_bot add event", async () => {
    let created: TestUser | undefined;
    const r = await verifyAction(s, async () => void (created = await outgoingBot("creator", { interface_type: 2 })), { viewers: ["hamlet", "iago", "othello"] });
    expect(r.types.hamlet).toContain("realm_bot/add");
    expect(r.types.othello).not.toContain("realm_bot/add");
    const state = await register(s.as("hamlet"));
    expectSchema(RegisterResponse, state);
    // FL 474: the bot object is its ID, defaults and services; its type is in its user object.
    const bot = state.realm_bots.find((b: any) => b.user_id === created!.id);
    expect(bot).toMatchObject({ services: [{ base_url: hookUrl(), interface: 2 }] });
    expect(state.realm_users.find((u: any) => u.user_id === created!.id)).toMatchObject({ full_name: "creator bot", bot_type: 3 });
    expect(bot.services[0].token).toMatch(/^[A-Za-z0-9]{32}$/);
    // The token is a secret of its own, not the bot's API key.
    expect(bot.services[0].token).not.toBe(created!.apiKey);
  });

  test("a missing or non-http URL and an unknown interface are refused, and no bot is made", async () => {
    const before = expectSuccess(await s.as("hamlet").get("/bots")).bots.length;
    expectError(await s.as("hamlet").post("/bots", { full_name: "No URL", short_name: "nourl", bot_type: 3 }), 400, "BAD_REQUEST", "payload_url is not a URL");
    expectError(await s.as("hamlet").post("/bots", { full_name: "FTP", short_name: "ftp", bot_type: 3, payload_url: JSON.stringify("ftp://127.0.0.1/x") }), 400, "BAD_REQUEST", "payload_url is not a URL");
    expectError(await s.as("hamlet").post("/bots", { full_name: "Odd", short_name: "odd", bot_type: 3, payload_url: JSON.stringify(hookUrl()), interface_type: 3 }), 400, "BAD_REQUEST", "Invalid interface type");
    expect(expectSuccess(await s.as("hamlet").get("/bots")).bots.length).toBe(before);
  });
});

describe("calls and replies", () => {
  test("a mention in a channel posts Zulip's payload; the answer's content is the bot's reply in that topic", async () => {
    const bot = await outgoingBot("echo");
    const token = (await register(s.as("hamlet"), { fetch_event_types: ["realm_bot"] })).realm_bots.find((b: any) => b.user_id === bot.id).services[0].token;
    answer = { status: 200, body: JSON.stringify({ content: "pong from **echo**" }) };
    const id = await send("othello", { type: "stream", to: "Denmark", topic: "ping", content: "@**echo bot** ping [1,2]" });
    expect(received).toHaveLength(1);
    expect(received[0].contentType).toStartWith("application/json");
    const call = JSON.parse(received[0].body);
    expect(call).toMatchObject({ data: "@**echo bot** ping [1,2]", bot_email: bot.email, bot_full_name: "echo bot", token, trigger: "mention" });
    expect(call.message).toMatchObject({ id, sender_id: s.users.othello.id, content: "@**echo bot** ping [1,2]", content_type: "text/x-markdown", type: "stream", stream_id: denmark, display_recipient: "Denmark", subject: "ping" });
    expect(call.message.rendered_content).toContain('class="user-mention"');
    expect(typeof call.message.avatar_url).toBe("string");
    expect(call.message.flags).toBeUndefined();
    const reply = await newest("othello", [{ operator: "channel", operand: denmark }, { operator: "topic", operand: "ping" }]);
    expect(reply).toMatchObject({ sender_id: bot.id, content: "pong from **echo**", client: "OutgoingWebhookResponse" });
  });

  test("a direct message triggers `direct_message` and is answered in the same conversation; the older response_string works", async () => {
    const bot = await outgoingBot("dmbot");
    answer = { status: 200, body: JSON.stringify({ response_string: "hello back" }) };
    await send("othello", { type: "direct", to: JSON.stringify([bot.id, s.users.hamlet.id]), content: "hi there" });
    expect(JSON.parse(received[0].body)).toMatchObject({ trigger: "direct_message", data: "hi there" });
    const reply = await newest("othello", [{ operator: "dm", operand: [bot.id, s.users.hamlet.id] }]);
    expect(reply).toMatchObject({ sender_id: bot.id, content: "hello back", type: "private" });
  });

  test("no call for a message from a bot, for a silent mention or for a deactivated bot; no reply for response_not_required or an empty content", async () => {
    const bot = await outgoingBot("quiet");
    const generic = await s.createBot("othello", { full_name: "Plain", short_name: "plain", bot_type: 1 });
    expectSuccess(await s.as("iago").post("/users/me/subscriptions", { subscriptions: [{ name: "Denmark" }], principals: [generic.id] }));
    await send(generic, { type: "stream", to: "Denmark", topic: "loops", content: "@**quiet bot** from a bot" });
    await send("othello", { type: "stream", to: "Denmark", topic: "loops", content: "@_**quiet bot** silently" });
    expect(received).toHaveLength(0);
    for (const body of [JSON.stringify({ response_not_required: true, content: "ignored" }), JSON.stringify(""), JSON.stringify({ content: "  " })]) {
      answer = { status: 200, body };
      await send("othello", { type: "stream", to: "Denmark", topic: "quiet", content: "@**quiet bot** anything?" });
    }
    expect(received).toHaveLength(3);
    expect((await newest("othello", [{ operator: "channel", operand: denmark }, { operator: "topic", operand: "quiet" }])).sender_id).toBe(s.users.othello.id);
    expectSuccess(await s.as("hamlet").delete(`/bots/${bot.id}`));
    await send("othello", { type: "stream", to: "Denmark", topic: "quiet", content: "@**quiet bot** still there?" });
    expect(received).toHaveLength(3);
  });

  test("an error status: a Failure! reply where it was triggered and a direct message to the owner quoting the answer", async () => {
    const bot = await outgoingBot("broken");
    answer = { status: 500, body: "it's down" };
    const id = await send("othello", { type: "stream", to: "Denmark", topic: "errors", content: "@**broken bot** status?" });
    const failure = await newest("othello", [{ operator: "channel", operand: denmark }, { operator: "topic", operand: "errors" }]);
    expect(failure).toMatchObject({ sender_id: bot.id, content: "Failure! Third party responded with 500" });
    const notice = await newest("hamlet", [{ operator: "dm", operand: [bot.id] }]);
    expect(notice.sender_id).toBe(bot.id);
    expect(notice.content).toBe(
      `[A message](${s.url}/#narrow/channel/${denmark}-Denmark/topic/errors/near/${id}) to your bot @_**broken bot** triggered an outgoing webhook.\n` +
        "The webhook got a response with status code *500*.\nThe response contains the following payload:\n```\nb'it\\'s down'\n```",
    );
  });

  test("an answer that is not JSON: the error is the reply, and the owner is told what the server sent", async () => {
    const bot = await outgoingBot("garbled");
    answer = { status: 200, body: "<html>" };
    await send("othello", { type: "stream", to: "Denmark", topic: "garbled", content: "@**garbled bot** hi" });
    expect((await newest("othello", [{ operator: "channel", operand: denmark }, { operator: "topic", operand: "garbled" }])).content).toBe("Failure! Invalid JSON in response");
    const notice = await newest("hamlet", [{ operator: "dm", operand: [bot.id] }]);
    expect(notice.content).toEndWith(
      "triggered an outgoing webhook.\nThe outgoing webhook server attempted to send a message in Zulip, but that request resulted in the following error:\n> Invalid JSON in response\nThe response contains the following payload:\n```\n'<html>'\n```",
    );
  });

  test("an endless answer is read only up to its first MiB: cut short, it fails as invalid JSON", async () => {
    await outgoingBot("flood");
    answer = { status: 200, body: JSON.stringify({ content: "x".repeat(3 * 1024 * 1024) }) };
    await send("othello", { type: "stream", to: "Denmark", topic: "flood", content: "@**flood bot** talk" });
    expect((await newest("othello", [{ operator: "channel", operand: denmark }, { operator: "topic", operand: "flood" }])).content).toBe("Failure! Invalid JSON in response");
  });

  test("a server that does not answer: retried, then 'Bot is unavailable' and the owner told of a connection error", async () => {
    const bot = await outgoingBot("offline", { payload_url: JSON.stringify(deadUrl) });
    await send("othello", { type: "direct", to: JSON.stringify([bot.id]), content: "anyone home?" });
    const reply = await newest("othello", [{ operator: "dm", operand: [bot.id] }]);
    expect(reply).toMatchObject({ sender_id: bot.id, content: "Failure! Bot is unavailable" });
    const notice = await newest("hamlet", [{ operator: "dm", operand: [bot.id] }]);
    expect(notice.content).toEndWith("triggered an outgoing webhook.\nA connection error occurred. Is my bot server down?");
  });

  test("a server that hangs up in the middle of its answer: a connection error, retried, not a half answer", async () => {
    // Announces 1,000 bytes, sends a few, and closes the connection.
    const cutOff = createServer((socket) => {
      socket.once("data", () => socket.end('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"content": "half'));
    });
    await new Promise<void>((resolve) => cutOff.listen(0, "127.0.0.1", resolve));
    try {
      const port = (cutOff.address() as AddressInfo).port;
      const bot = await outgoingBot("cutoff", { payload_url: JSON.stringify(`http://127.0.0.1:${port}/hook`) });
      await send("othello", { type: "direct", to: JSON.stringify([bot.id]), content: "are you there?" });
      expect(await newest("othello", [{ operator: "dm", operand: [bot.id] }])).toMatchObject({ sender_id: bot.id, content: "Failure! Bot is unavailable" });
    } finally {
      cutOff.close();
    }
  });

  test("many calls at once: at most 8 made together, the others in turn, every one answered", async () => {
    let inFlight = 0;
    let most = 0;
    const slow = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch() {
        most = Math.max(most, ++inFlight);
        await Bun.sleep(30);
        inFlight--;
        return Response.json({ content: "done" });
      },
    });
    try {
      const bot = await outgoingBot("busy", { payload_url: JSON.stringify(`http://127.0.0.1:${slow.port}/hook`) });
      await Promise.all(Array.from({ length: 20 }, (_, i) => s.as("othello").post("/messages", { type: "direct", to: JSON.stringify([bot.id]), content: `job ${i}` })));
      await drainOutgoingWebhooks(s.server.h);
      const replies = expectSuccess(await s.as("othello").get("/messages", { anchor: "newest", num_before: 40, num_after: 0, narrow: [{ operator: "sender", operand: bot.id }] })).messages;
      expect(replies.filter((m: any) => m.content === "<p>done</p>")).toHaveLength(20);
      expect(most).toBeLessThanOrEqual(8);
      expect(most).toBeGreaterThan(1);
    } finally {
      slow.stop(true);
    }
  });

  test("the Slack interface: Slack's form fields, `text` as the reply, and direct messages refused", async () => {
    const bot = await outgoingBot("slacky", { interface_type: 2 });
    answer = { status: 200, body: JSON.stringify({ text: "from slack" }) };
    await send("othello", { type: "stream", to: "Denmark", topic: "slack", content: "@**slacky bot** hello" });
    expect(received[0].contentType).toStartWith("application/x-www-form-urlencoded");
    const form = new URLSearchParams(received[0].body);
    expect(Object.fromEntries(form)).toMatchObject({ team_id: "T1", team_domain: "127.0.0.1", channel_id: `C${denmark}`, channel_name: "Denmark", user_id: `U${s.users.othello.id}`, user_name: "Othello, the Moor of Venice", text: "@**slacky bot** hello", trigger_word: "mention", service_id: String(bot.id) });
    expect(form.get("token")).toMatch(/^[A-Za-z0-9]{32}$/);
    expect((await newest("othello", [{ operator: "channel", operand: denmark }, { operator: "topic", operand: "slack" }])).content).toBe("from slack");
    received = [];
    await send("othello", { type: "direct", to: JSON.stringify([bot.id]), content: "psst" });
    expect(received).toHaveLength(0);
    expect((await newest("othello", [{ operator: "dm", operand: [bot.id] }])).content).toBe("Failure! Slack outgoing webhooks don't support direct messages.");
  });
});

describe("PATCH /bots/{bot_id}", () => {
  test("a new URL and interface: realm_bot update with the services to the owner and administrators; later calls go there", async () => {
    const bot = await outgoingBot("mover");
    const r = await verifyAction(
      s,
      async () => {
        const res = expectSuccess(await s.as("hamlet").patch(`/bots/${bot.id}`, { service_payload_url: JSON.stringify(hookUrl("/moved")), service_interface: 1 }));
        expect(res).toMatchObject({ service_payload_url: hookUrl("/moved"), service_interface: 1, config_data: null });
      },
      { viewers: ["hamlet", "iago", "othello"] },
    );
    expect(r.types.hamlet).toEqual(["realm_bot/update"]);
    expect(r.types.iago).toEqual(["realm_bot/update"]);
    expect(r.types.othello).toEqual([]);
    expect(r.events.hamlet[0].bot.services[0]).toMatchObject({ base_url: hookUrl("/moved"), interface: 1 });
    await send("othello", { type: "direct", to: JSON.stringify([bot.id]), content: "where are you?" });
    expect(received).toHaveLength(1);
    // A bad URL, another user, or a bot without a service: refused, nothing changed.
    expectError(await s.as("hamlet").patch(`/bots/${bot.id}`, { service_payload_url: JSON.stringify("nope") }), 400, "BAD_REQUEST", "service_payload_url is not a URL");
    expectError(await s.as("othello").patch(`/bots/${bot.id}`, { service_payload_url: JSON.stringify(hookUrl("/stolen")) }), 400, "UNAUTHORIZED_PRINCIPAL");
    const plain = await s.createBot("hamlet", { full_name: "No service", short_name: "noservice", bot_type: 1 });
    expectError(await s.as("hamlet").patch(`/bots/${plain.id}`, { service_payload_url: JSON.stringify(hookUrl()) }), 400, "BAD_REQUEST", "This bot has no outgoing webhook service.");
    const state = await register(s.as("hamlet"), { fetch_event_types: ["realm_bot"] });
    expect(state.realm_bots.find((b: any) => b.user_id === bot.id).services[0].base_url).toBe(hookUrl("/moved"));
  });
});

describe("private networks", () => {
  test("by default a bot may not call loopback or private addresses: Zulip's proxy refusal, told to the conversation and the owner", async () => {
    const guarded = await startTestServer();
    try {
      await guarded.createChannel("iago", "Denmark", ["hamlet", "othello"]);
      for (const [i, host] of ["127.0.0.1", "[::1]", "[::ffff:127.0.0.1]", "localhost"].entries()) {
        const bot = await guarded.createBot("hamlet", { full_name: `Inward ${i}`, short_name: `inward${i}`, bot_type: 3, payload_url: JSON.stringify(`http://${host}:${receiver.port}/hook`) });
        expectSuccess(await guarded.as("othello").post("/messages", { type: "direct", to: JSON.stringify([bot.id]), content: "knock" }));
        await drainOutgoingWebhooks(guarded.server.h);
        const dm = (who: "othello" | "hamlet") => guarded.as(who).get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow: [{ operator: "dm", operand: [bot.id] }], apply_markdown: "false" });
        expect(expectSuccess(await dm("othello")).messages[0]).toMatchObject({ sender_id: bot.id, content: "Failure! Third party responded with 407" });
        expect(expectSuccess(await dm("hamlet")).messages[0].content).toEndWith("triggered an outgoing webhook.\nThe URL configured for the webhook is for a private or disallowed network.");
      }
      expect(received).toHaveLength(0);
    } finally {
      await guarded.stop();
    }
  });

  test("the connection's own resolver refuses a name that resolves to an internal address, so a name cannot change its answer after the check (DNS rebinding)", async () => {
    const resolve = (allowPrivate: boolean, all: boolean) =>
      new Promise<{ error: Error | null; address: unknown }>((done) => connectionLookup(allowPrivate)("localhost", { all }, (error, address) => done({ error, address })));
    for (const all of [true, false]) {
      const refused = await resolve(false, all);
      expect(refused.error?.message).toBe("localhost resolves to an internal address");
      const allowed = await resolve(true, all);
      expect(allowed.error).toBeNull();
      expect(JSON.stringify(allowed.address)).toMatch(/127\.0\.0\.1|::1/);
    }
  });

  test("the address forms that reach the server's own networks", async () => {
    for (const url of ["http://10.1.2.3/", "http://172.20.0.1/", "http://192.168.1.1/", "http://169.254.169.254/latest", "http://100.64.0.1/", "http://0.0.0.0/", "http://[::]/", "http://[fd00::1]/", "http://[fe80::1]/", "http://[::ffff:10.0.0.1]/", "http://[64:ff9b::7f00:1]/", "http://[::127.0.0.1]/"]) {
      expect(await isInternalAddressUrl(url)).toBe(true);
    }
    for (const url of ["http://93.184.216.34/", "http://[2606:4700::1111]/", "http://172.32.0.1/", "http://100.128.0.1/"]) {
      expect(await isInternalAddressUrl(url)).toBe(false);
    }
  });
});

describe("across a restart", () => {
  test("a call a stop cut short is made at the next start, and a finished one never again", async () => {
    const env = { HEARTH_OUTGOING_WEBHOOKS_TO_PRIVATE_NETWORKS: "allow" };
    // The bot's server holds its first call open until released; later calls are answered at once.
    let calls = 0;
    let release = () => {};
    const slow = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () => {
        calls++;
        const reply = () => new Response(JSON.stringify({ content: `answer to call ${calls}` }));
        return calls === 1 ? new Promise<Response>((resolve) => (release = () => resolve(reply()))) : reply();
      },
    });
    const first = await startTestServer({ env });
    const dataDir = first.dataDir;
    let later: TestServer | undefined;
    try {
      const { othello } = first.users;
      const bot = await first.createBot("hamlet", { full_name: "Slow bot", short_name: "slow", bot_type: 3, payload_url: JSON.stringify(`http://127.0.0.1:${slow.port}/`) });
      expectSuccess(await first.as("othello").post("/messages", { type: "direct", to: JSON.stringify([bot.id]), content: "are you there?" }));
      while (calls === 0) await Bun.sleep(5);
      await first.server.stop();
      release();
      const dm = async (server: TestServer) =>
        expectSuccess(await server.as(othello).get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow: [{ operator: "dm", operand: [bot.id] }], apply_markdown: "false" })).messages.map((m: any) => m.content);
      later = await startTestServer({ env, dataDir });
      await drainOutgoingWebhooks(later.server.h);
      expect(calls).toBe(2);
      expect(await dm(later)).toEqual(["are you there?", "answer to call 2"]);
      await later.server.stop();
      later = await startTestServer({ env, dataDir });
      await drainOutgoingWebhooks(later.server.h);
      expect(calls).toBe(2);
      expect(await dm(later)).toHaveLength(2);
    } finally {
      await later?.server.stop();
      slow.stop(true);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
