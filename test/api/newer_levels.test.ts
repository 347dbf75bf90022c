import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectSchema, expectSuccess, startTestServer, type TestServer } from "../kit";
import { SendMessageResponse } from "../../src/schemas/messages";

/** Additive pieces of feature levels above the advertised 371 (docs/api-coverage.md). */
let s: TestServer;
let denmark: number;
let odd: number;
let realmUrl: string;

beforeAll(async () => {
  s = await startTestServer();
  realmUrl = s.server.h.realmUrl();
  denmark = await s.createChannel("iago", "Denmark", ["iago", "hamlet", "othello"]);
  odd = await s.createChannel("iago", "a > b.c", ["iago", "hamlet"]);
});
afterAll(() => s.stop());

describe("POST /messages: message_url and message_link (FL 508)", () => {
  test("a channel message: the #narrow URL of the message and a Markdown link to it", async () => {
    const body = expectSuccess(await s.as("hamlet").post("/messages", { type: "channel", to: denmark, topic: "castle walls", content: "hi" }));
    expectSchema(SendMessageResponse, body);
    const url = `${realmUrl}/#narrow/channel/${denmark}-Denmark/topic/castle.20walls/near/${body.id}`;
    expect(body.message_url).toBe(url);
    expect(body.message_link).toBe(`[#Denmark > castle walls @ 💬](${url})`);
  });

  test("names that break the link syntax are escaped; the empty topic shows as general chat", async () => {
    const body = expectSuccess(await s.as("hamlet").post("/messages", { type: "channel", to: odd, topic: "", content: "hi" }));
    const url = `${realmUrl}/#narrow/channel/${odd}-a-.3E-b.2Ec/topic//near/${body.id}`;
    expect(body.message_url).toBe(url);
    expect(body.message_link).toBe(`[#a &gt; b.c > general chat @ 💬](${url})`);
  });

  test("a direct message: the link is the bare URL", async () => {
    const { hamlet, othello } = s.users;
    const body = expectSuccess(await s.as("hamlet").post("/messages", { type: "direct", to: JSON.stringify([othello.id]), content: "hi" }));
    expectSchema(SendMessageResponse, body);
    const ids = [hamlet.id, othello.id].sort((a, b) => a - b).join(",");
    expect(body.message_url).toBe(`${realmUrl}/#narrow/dm/${ids}/near/${body.id}`);
    expect(body.message_link).toBe(body.message_url);
  });
});

describe("GET /users/{user_id}/channels (FL 440)", () => {
  let secret: number;
  beforeAll(async () => {
    secret = await s.createChannel("iago", "secret", ["iago", "othello"], { invite_only: true });
  });

  test("a user's own subscriptions, all of them", async () => {
    const body = expectSuccess(await s.as("othello").get(`/users/${s.users.othello.id}/channels`));
    expect(body.subscribed_channel_ids).toEqual([denmark, secret].sort((a, b) => a - b));
  });

  test("another user's: only the channels the caller may see; an administrator sees private ones", async () => {
    expect(expectSuccess(await s.as("hamlet").get(`/users/${s.users.othello.id}/channels`)).subscribed_channel_ids).toEqual([denmark]);
    expect(expectSuccess(await s.as("polonius").get(`/users/${s.users.othello.id}/channels`)).subscribed_channel_ids).toEqual([]);
    expect(expectSuccess(await s.as("iago").get(`/users/${s.users.othello.id}/channels`)).subscribed_channel_ids).toEqual(
      [denmark, secret].sort((a, b) => a - b),
    );
  });

  test("unsubscribing removes the channel; bots may be asked about (FL 458)", async () => {
    expectSuccess(await s.as("hamlet").delete("/users/me/subscriptions", { subscriptions: JSON.stringify(["a > b.c"]) }));
    expect(expectSuccess(await s.as("othello").get(`/users/${s.users.hamlet.id}/channels`)).subscribed_channel_ids).toEqual([denmark]);
    const bot = await s.createBot("hamlet", { full_name: "Helper", short_name: "helper" });
    expectSuccess(await s.as("hamlet").post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "Denmark" }]), principals: JSON.stringify([bot.id]) }));
    expect(expectSuccess(await s.as("othello").get(`/users/${bot.id}/channels`)).subscribed_channel_ids).toEqual([denmark]);
  });

  test("errors: an unknown user, a malformed ID", async () => {
    expectError(await s.as("hamlet").get("/users/999999/channels"), 400, "BAD_REQUEST", "No such user");
    expectError(await s.as("hamlet").get("/users/abc/channels"), 400, "BAD_REQUEST");
  });
});
