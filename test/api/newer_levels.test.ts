import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectSchema, expectSuccess, startTestServer, type TestServer } from "../kit";
import { SendMessageResponse } from "../../src/schemas/messages";
import { drainEvents, register, verifyAction } from "../kit/events";

/** Pieces of feature levels 417-508 (docs/feature-levels.md). */
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

  test("a sender who may not see the channel's metadata (a bot posting through its owner): the channel by ID alone, the bare URL", async () => {
    const study = await s.createChannel("iago", "Study", ["iago", "hamlet"], { invite_only: true });
    const bot = await s.createBot("hamlet", { full_name: "Scribe", short_name: "scribe" });
    const body = expectSuccess(await s.as(bot).post("/messages", { type: "channel", to: study, topic: "notes", content: "hi" }));
    const url = `${realmUrl}/#narrow/channel/${study}/topic/notes/near/${body.id}`;
    expect(body.message_url).toBe(url);
    expect(body.message_link).toBe(url);
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

describe("POST /channels/create (FL 417)", () => {
  const streamIdOf = async (name: string) => expectSuccess(await s.as("iago").get("/get_stream_id", { stream: name })).stream_id;

  test("a public channel with its subscribers by ID: the events of a subscribe that creates it", async () => {
    const { hamlet, othello } = s.users;
    let id = 0;
    const r = await verifyAction(
      s,
      async () => {
        const body = expectSuccess(
          await s.as("hamlet").post("/channels/create", {
            name: "Elsinore",
            description: "The **castle**",
            subscribers: JSON.stringify([hamlet.id, othello.id]),
            send_new_subscription_messages: false,
          }),
        );
        id = body.id;
      },
      { registerParams: { include_subscribers: true } },
    );
    expect(id).toBe(await streamIdOf("Elsinore"));
    expect(r.types.hamlet).toEqual(["stream/create", "subscription/add"]);
    expect(r.types.othello).toEqual(["stream/create", "subscription/add"]);
    for (const v of ["desdemona", "iago", "shiva", "cordelia"]) expect(r.types[v]).toEqual(["stream/create", "subscription/peer_add"]);
    expect(r.types.polonius).toEqual([]);
    const stream = expectSuccess(await s.as("othello").get(`/streams/${id}`)).stream;
    expect(stream).toMatchObject({ name: "Elsinore", description: "The **castle**", invite_only: false, creator_id: hamlet.id });
    expect(expectSuccess(await s.as("othello").get(`/streams/${id}/members`)).subscribers.sort()).toEqual([hamlet.id, othello.id].sort());
  });

  test("the creator is not subscribed unless named; a private channel with its settings reaches only the administrators then", async () => {
    let id = 0;
    const r = await verifyAction(s, async () => {
      id = expectSuccess(
        await s.as("hamlet").post("/channels/create", { name: "Vault", subscribers: "[]", invite_only: true, history_public_to_subscribers: true, topics_policy: "disable_empty_topic" }),
      ).id;
    });
    expect(r.types.hamlet).toEqual(["stream/create"]);
    for (const v of ["desdemona", "iago"]) expect(r.types[v]).toEqual(["stream/create"]);
    for (const v of ["othello", "shiva", "cordelia", "polonius"]) expect(r.types[v]).toEqual([]);
    const stream = expectSuccess(await s.as("iago").get(`/streams/${id}`)).stream;
    expect(stream).toMatchObject({ invite_only: true, history_public_to_subscribers: true, topics_policy: "disable_empty_topic" });
    expect(expectSuccess(await s.as("iago").get(`/streams/${id}/members`)).subscribers).toEqual([]);
  });

  test("errors: a name taken (archived channels included), a bad name, unknown subscribers, permissions, missing subscribers", async () => {
    expectError(await s.as("hamlet").post("/channels/create", { name: "Denmark", subscribers: "[]" }), 400, "BAD_REQUEST", "Channel 'Denmark' already exists");
    const old = await s.createChannel("iago", "Old times", ["iago"]);
    expectSuccess(await s.as("iago").delete(`/streams/${old}`));
    expectError(await s.as("hamlet").post("/channels/create", { name: "old TIMES", subscribers: "[]" }), 400, "BAD_REQUEST", "Channel 'old TIMES' already exists");
    expectError(await s.as("hamlet").post("/channels/create", { name: "  ", subscribers: "[]" }), 400, "BAD_REQUEST");
    expectError(
      await s.as("hamlet").post("/channels/create", { name: "Ghosts", subscribers: "[999999]" }),
      400,
      "BAD_REQUEST",
      "User not authorized to execute queries on behalf of '999999'",
    );
    expectError(await s.as("polonius").post("/channels/create", { name: "Ghosts", subscribers: "[]" }), 400, "BAD_REQUEST", "Insufficient permission");
    expectError(await s.as("hamlet").post("/channels/create", { name: "Ghosts", subscribers: "[]", is_default_stream: true }), 400, "UNAUTHORIZED_PRINCIPAL");
    expectError(await s.as("hamlet").post("/channels/create", { name: "Ghosts" }), 400, "REQUEST_VARIABLE_MISSING");
    expect(expectSuccess(await s.as("iago").get("/streams", { include_all: true })).streams.some((c: any) => c.name === "Ghosts")).toBe(false);
  });
});

const newestIds = async (who: string, narrow: unknown) =>
  expectSuccess(await s.as(who as any).get("/messages", { anchor: "newest", num_before: 100, num_after: 0, narrow: JSON.stringify(narrow) })).messages.map((m: any) => m.id);
const sendTo = async (who: string, channelId: number, content: string) =>
  expectSuccess(await s.as(who as any).post("/messages", { type: "channel", to: channelId, topic: "narrows", content })).id as number;

describe("narrow operator mentions (FL 446)", () => {
  test("personal, visible mentions only (not silent or wildcard ones), of any user, negated too; an unknown user is a bad narrow", async () => {
    const { othello } = s.users;
    const personal = await sendTo("hamlet", denmark, `hello @**Othello, the Moor of Venice|${othello.id}**`);
    const silent = await sendTo("hamlet", denmark, `hello @_**Othello, the Moor of Venice|${othello.id}**`);
    const wildcard = await sendTo("hamlet", denmark, "hello @**all**");
    const byName = await sendTo("iago", denmark, "and @**Othello, the Moor of Venice** again");
    const mentions = [{ operator: "channel", operand: denmark }, { operator: "mentions", operand: othello.id }];
    expect(await newestIds("hamlet", mentions)).toEqual([personal, byName]);
    expect(await newestIds("othello", [{ operator: "mentions", operand: String(othello.id) }])).toEqual([personal, byName]);
    expect(await newestIds("othello", [{ operator: "mentions", operand: "me" }])).toEqual([personal, byName]);
    const negated = await newestIds("hamlet", [{ operator: "channel", operand: denmark }, { operator: "mentions", operand: othello.id, negated: true }]);
    expect(negated).toContain(silent);
    expect(negated).toContain(wildcard);
    expect(negated).not.toContain(personal);

    const matched = expectSuccess(await s.as("cordelia").get("/messages/matches_narrow", { msg_ids: JSON.stringify([personal, silent]), narrow: JSON.stringify([{ operator: "mentions", operand: othello.id }]) }));
    expect(Object.keys(matched.messages)).toEqual([String(personal)]);
    const flagged = expectSuccess(
      await s.as("othello").post("/messages/flags/narrow", {
        anchor: "newest", num_before: 100, num_after: 0, op: "add", flag: "starred",
        narrow: JSON.stringify([{ operator: "mentions", operand: othello.id }]),
      }),
    );
    expect(flagged.updated_count).toBe(2);
    expect(await newestIds("othello", [{ operator: "is", operand: "starred" }])).toEqual([personal, byName]);
    expectError(await s.as("hamlet").get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow: JSON.stringify([{ operator: "mentions", operand: 999999 }]) }), 400, "BAD_NARROW", "Invalid narrow operator: unknown user in mentions");
  });

  test("an event queue registered with the narrow gets only the messages that mention the user", async () => {
    const { othello } = s.users;
    const state = await register(s.as("cordelia"), { event_types: JSON.stringify(["message"]), narrow: JSON.stringify([["mentions", othello.id]]), all_public_streams: true });
    await sendTo("hamlet", denmark, `hi @_**Othello, the Moor of Venice|${othello.id}**`);
    const wanted = await sendTo("hamlet", denmark, `hi @**Othello, the Moor of Venice|${othello.id}**`);
    const events = await drainEvents(s.as("cordelia"), state.queue_id);
    expect(events.map((e) => e.message.id)).toEqual([wanted]);
  });
});

describe("narrow channels:archived (FL 489)", () => {
  test("messages of the archived channels the viewer may read, their history included; negated; a bad operand", async () => {
    const bygone = await s.createChannel("iago", "Bygone", ["iago", "hamlet"]);
    const hidden = await s.createChannel("iago", "Hidden past", ["iago"], { invite_only: true });
    const inBygone = await sendTo("hamlet", bygone, "before the end");
    const inHidden = await sendTo("iago", hidden, "secret history");
    const live = await sendTo("hamlet", denmark, "still here");
    expect(await newestIds("cordelia", [{ operator: "channels", operand: "archived" }])).toEqual([]);
    expectSuccess(await s.as("iago").delete(`/streams/${bygone}`));
    expectSuccess(await s.as("iago").delete(`/streams/${hidden}`));
    expect(await newestIds("cordelia", [{ operator: "channels", operand: "archived" }])).toEqual([inBygone]);
    expect(await newestIds("iago", [{ operator: "channels", operand: "archived" }])).toEqual([inBygone, inHidden]);
    expect(await newestIds("hamlet", [["streams", "archived"]])).toEqual([inBygone]);
    const negated = await newestIds("hamlet", [{ operator: "channels", operand: "archived", negated: true }]);
    expect(negated).toContain(live);
    expect(negated).not.toContain(inBygone);
    expectError(await s.as("hamlet").get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow: JSON.stringify([["channels", "bogus"]]) }), 400, "BAD_NARROW");
  });
});

describe("GET /messages anchor=date with anchor_date (FL 445)", () => {
  test("anchors at the first message sent on or after the date, else at the newest; naive times are UTC", async () => {
    const calendar = await s.createChannel("iago", "Calendar", ["iago", "hamlet"]);
    const before = await sendTo("hamlet", calendar, "yesterday");
    const sentAt = expectSuccess(await s.as("hamlet").get(`/messages/${before}`)).message.timestamp as number;
    const boundary = sentAt + 1;
    while (Date.now() / 1000 < boundary) await Bun.sleep(50);
    const after = await sendTo("hamlet", calendar, "today");
    const later = await sendTo("hamlet", calendar, "tomorrow");
    const fetch = (date: unknown, extra: Record<string, unknown> = {}) =>
      s.as("hamlet").get("/messages", { anchor: "date", anchor_date: date, num_before: 1, num_after: 1, narrow: JSON.stringify([{ operator: "channel", operand: calendar }]), ...extra });

    const iso = new Date(boundary * 1000).toISOString();
    for (const date of [iso, iso.replace("Z", ""), iso.replace(/\.000Z$/, "+00:00"), new Date(boundary * 1000 + 2 * 3600_000).toISOString().replace(/\.000Z$/, "+02:00")]) {
      const body = expectSuccess(await fetch(date));
      expect({ date, anchor: body.anchor, found_anchor: body.found_anchor, ids: body.messages.map((m: any) => m.id) }).toEqual({ date, anchor: after, found_anchor: true, ids: [before, after, later] });
    }
    // Before every message: the oldest message of all is the anchor, and this channel's come after it.
    const early = expectSuccess(await fetch("2001-01-01", { num_after: 5 }));
    expect(early.messages.map((m: any) => m.id)).toEqual([before, after, later]);
    expect(early.found_oldest).toBe(true);
    // After every message: the newest.
    const future = expectSuccess(await fetch("2999-01-01T00:00:00Z", { num_before: 2, num_after: 0 }));
    expect(future.messages.map((m: any) => m.id)).toEqual([after, later]);
    expect(future.found_newest).toBe(true);
  });

  test("errors: no anchor_date, a date that is not ISO 8601; other anchors ignore it", async () => {
    expectError(await s.as("hamlet").get("/messages", { anchor: "date", num_before: 1, num_after: 0 }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'anchor_date' argument");
    expectError(await s.as("hamlet").get("/messages", { anchor: "date", anchor_date: "yesterday", num_before: 1, num_after: 0 }), 400, "BAD_REQUEST", "Invalid anchor_date");
    expectError(await s.as("hamlet").get("/messages", { anchor: "date", anchor_date: "2024-13-45", num_before: 1, num_after: 0 }), 400, "BAD_REQUEST", "Invalid anchor_date");
    expectSuccess(await s.as("hamlet").get("/messages", { anchor: "newest", anchor_date: "2024-01-01", num_before: 1, num_after: 0 }));
  });
});
