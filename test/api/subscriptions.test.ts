import { getRealm, putRealm } from "../../src/store/realm";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectSchema, expectSuccess, startTestServer, type CastName, type Params, type TestServer } from "../kit";
import { register, verifyAction } from "../kit/events";
import { GetStreamsResponse, GetSubscriptionsResponse, SubscribeResponse, Subscription, UnsubscribeResponse } from "../../src/schemas/channels";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const EVERYONE: CastName[] = ["desdemona", "iago", "shiva", "hamlet", "othello", "cordelia", "polonius"];
let counter = 0;
/** A channel name unique to this test file run. */
const fresh = (prefix: string) => `${prefix} ${++counter}`;

async function subscribe(who: CastName, names: string[], params: Params = {}) {
  return s.as(who).post("/users/me/subscriptions", { subscriptions: names.map((name) => ({ name })), ...params });
}

async function mySubscriptions(who: CastName, params: Params = {}): Promise<any[]> {
  const body = expectSuccess(await s.as(who).get("/users/me/subscriptions", params));
  expectSchema(GetSubscriptionsResponse, body);
  return body.subscriptions;
}

async function channelId(who: CastName, name: string): Promise<number> {
  return expectSuccess(await s.as(who).get("/get_stream_id", { stream: name })).stream_id;
}

describe("POST /users/me/subscriptions", () => {
  test("creates a missing channel and subscribes the caller; keys are user IDs (FL 289)", async () => {
    const name = fresh("Denmark");
    const res = await s.as("hamlet").post("/users/me/subscriptions", {
      subscriptions: [{ name, description: "A **Scandinavian** country\nin Europe" }],
    });
    const body = expectSuccess(res);
    expectSchema(SubscribeResponse, body);
    expect(body).toEqual({ result: "success", msg: "", subscribed: { [String(s.users.hamlet.id)]: [name] }, already_subscribed: {}, new_subscription_messages_sent: true });
    const sub = (await mySubscriptions("hamlet", { include_subscribers: true })).find((c) => c.name === name);
    expectSchema(Subscription, sub);
    expect(sub).toMatchObject({
      description: "A **Scandinavian** country in Europe",
      rendered_description: "<p>A <strong>Scandinavian</strong> country in Europe</p>",
      invite_only: false,
      is_web_public: false,
      history_public_to_subscribers: true,
      creator_id: s.users.hamlet.id,
      subscribers: [s.users.hamlet.id],
      subscriber_count: 1,
      first_message_id: null,
      stream_weekly_traffic: null,
      message_retention_days: null,
      topics_policy: "inherit",
      is_muted: false,
      in_home_view: true,
      pin_to_top: false,
      desktop_notifications: null,
      stream_post_policy: 1,
      can_administer_channel_group: { direct_members: [s.users.hamlet.id], direct_subgroups: [] },
    });
    expect(sub.color).toMatch(/^#[0-9a-f]{6}$/);
  });

  test("each user's channels get distinct palette colors", async () => {
    const names = [fresh("Color"), fresh("Color"), fresh("Color")];
    expectSuccess(await subscribe("cordelia", names));
    const colors = (await mySubscriptions("cordelia")).filter((c) => names.includes(c.name)).map((c) => c.color);
    expect(new Set(colors).size).toBe(3);
  });

  test("already_subscribed, and principals as user IDs or emails", async () => {
    const name = fresh("Verona");
    expectSuccess(await subscribe("hamlet", [name]));
    const body = expectSuccess(await subscribe("hamlet", [name], { principals: [s.users.hamlet.email, s.users.othello.email] }));
    expectSchema(SubscribeResponse, body);
    expect(body.subscribed).toEqual({ [String(s.users.othello.id)]: [name] });
    expect(body.already_subscribed).toEqual({ [String(s.users.hamlet.id)]: [name] });
    expect((await mySubscriptions("othello")).map((c) => c.name)).toContain(name);
  });

  test("unknown or deactivated principals are 400 BAD_REQUEST, and nothing is written", async () => {
    const name = fresh("Nowhere");
    expectError(await subscribe("hamlet", [name], { principals: [99999] }), 400, "BAD_REQUEST", "User not authorized to execute queries on behalf of '99999'");
    expectError(await subscribe("hamlet", [name], { principals: ["nobody@zulip.test"] }), 400, "BAD_REQUEST");
    const gone = await s.createUser("yorick");
    expectSuccess(await s.as("iago").delete(`/users/${gone.id}`));
    expectError(await subscribe("hamlet", [name], { principals: [gone.id] }), 400, "BAD_REQUEST");
    expectError(await s.as("hamlet").get("/get_stream_id", { stream: name }), 400, "BAD_REQUEST", `Invalid channel name '${name}'`);
  });

  test("name and description limits", async () => {
    expectError(await subscribe("hamlet", ["   "]), 400, "BAD_REQUEST", "Channel name can't be empty.");
    expectError(await subscribe("hamlet", ["x".repeat(61)]), 400, "BAD_REQUEST", "Channel name too long (limit: 60 characters).");
    expectSuccess(await subscribe("hamlet", ["y".repeat(60)]));
    expectError(await subscribe("hamlet", ["bad\u0000name"]), 400, "BAD_REQUEST", /Invalid character in channel name/);
    const long = await s.as("hamlet").post("/users/me/subscriptions", { subscriptions: [{ name: fresh("Long"), description: "d".repeat(1025) }] });
    expectError(long, 400, "BAD_REQUEST", "Channel description too long (limit: 1024 characters).");
    expectError(await s.as("hamlet").post("/users/me/subscriptions", { subscriptions: "Denmark" }), 400, "BAD_REQUEST");
    expectError(await s.as("hamlet").post("/users/me/subscriptions", {}), 400, "REQUEST_VARIABLE_MISSING");
  });

  test("the description is rendered without raw HTML or script links", async () => {
    const name = fresh("Sneaky");
    await s.as("hamlet").post("/users/me/subscriptions", {
      subscriptions: [{ name, description: '<script>alert(1)</script> <img src=x onerror=alert(1)> [x](javascript:alert(1)) https://zulip.com' }],
    });
    const sub = (await mySubscriptions("hamlet")).find((c) => c.name === name);
    expect(sub.rendered_description).not.toContain("<script");
    expect(sub.rendered_description).not.toContain("<img");
    expect(sub.rendered_description).not.toContain('href="javascript');
    expect(sub.rendered_description).toContain('<a href="https://zulip.com" target="_blank" rel="noopener noreferrer">');
  });

  test("creation settings: private, retention (owners), default channel and push default (admins), web-public refused", async () => {
    const secret = fresh("Secret");
    expectSuccess(await subscribe("hamlet", [secret], { invite_only: true, history_public_to_subscribers: true, topics_policy: "disable_empty_topic" }));
    const sub = (await mySubscriptions("hamlet")).find((c) => c.name === secret);
    expect(sub).toMatchObject({ invite_only: true, history_public_to_subscribers: true, topics_policy: "disable_empty_topic" });
    const protectedName = fresh("Protected");
    expectSuccess(await subscribe("hamlet", [protectedName], { invite_only: true }));
    expect((await mySubscriptions("hamlet")).find((c) => c.name === protectedName).history_public_to_subscribers).toBe(false);

    expectError(await subscribe("hamlet", [fresh("Web")], { is_web_public: true }), 400, "BAD_REQUEST", "Web-public channels are not enabled.");
    expectError(await subscribe("hamlet", [fresh("Kept")], { message_retention_days: 30 }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
    expectError(await subscribe("hamlet", [fresh("Def")], { is_default_stream: true }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    expectError(await subscribe("hamlet", [fresh("Push")], { default_push_notifications: true }), 400, "UNAUTHORIZED_PRINCIPAL");
    expectError(await subscribe("desdemona", [fresh("Kept")], { message_retention_days: 0 }), 400, "BAD_REQUEST", "Bad value for 'message_retention_days': 0");
    expectError(await subscribe("iago", [fresh("PrivDef")], { is_default_stream: true, invite_only: true }), 400, "BAD_REQUEST");

    const kept = fresh("Kept");
    expectSuccess(await subscribe("desdemona", [kept], { message_retention_days: "unlimited" }));
    const short = fresh("Short");
    expectSuccess(await subscribe("desdemona", [short], { message_retention_days: 7 }));
    const inherit = fresh("Inherit");
    expectSuccess(await subscribe("desdemona", [inherit], { message_retention_days: "realm_default" }));
    const own = await mySubscriptions("desdemona");
    expect(own.find((c) => c.name === kept).message_retention_days).toBe(-1);
    expect(own.find((c) => c.name === short).message_retention_days).toBe(7);
    expect(own.find((c) => c.name === inherit).message_retention_days).toBeNull();

    const def = fresh("Default");
    expectSuccess(await subscribe("iago", [def], { is_default_stream: true, default_push_notifications: true }));
    const streams = expectSuccess(await s.as("iago").get("/streams", { include_default: true }));
    expectSchema(GetStreamsResponse, streams);
    const listed = streams.streams.find((c: any) => c.name === def);
    expect(listed).toMatchObject({ is_default: true, default_push_notifications: true });
    expect((await mySubscriptions("iago")).find((c) => c.name === def).push_notifications).toBe(true);
  });

  test("initial group settings are validated and kept; ignored for existing channels", async () => {
    const groups = expectSuccess(await s.as("hamlet").get("/user_groups")).user_groups;
    const id = (name: string) => groups.find((g: any) => g.name === name).id;
    const name = fresh("Moderated");
    expectSuccess(
      await subscribe("hamlet", [name], {
        can_send_message_group: id("role:moderators"),
        can_remove_subscribers_group: { direct_members: [s.users.othello.id], direct_subgroups: [id("role:administrators")] },
        can_add_subscribers_group: { direct_members: [], direct_subgroups: [id("role:members")] },
      }),
    );
    const sub = (await mySubscriptions("hamlet")).find((c) => c.name === name);
    expect(sub.can_send_message_group).toBe(id("role:moderators"));
    expect(sub.stream_post_policy).toBe(4);
    expect(sub.can_remove_subscribers_group).toEqual({ direct_members: [s.users.othello.id], direct_subgroups: [id("role:administrators")] });
    // A single subgroup and no members is stored as that group's ID, as Zulip does.
    expect(sub.can_add_subscribers_group).toBe(id("role:members"));
    // Existing channel: the initial settings are ignored.
    expectSuccess(await subscribe("othello", [name], { can_send_message_group: id("role:everyone"), invite_only: true }));
    const again = (await mySubscriptions("othello")).find((c) => c.name === name);
    expect(again).toMatchObject({ can_send_message_group: id("role:moderators"), invite_only: false });

    expectError(await subscribe("hamlet", [fresh("Bad")], { can_send_message_group: 9999 }), 400, "BAD_REQUEST", "Invalid user group");
    expectError(await subscribe("hamlet", [fresh("Bad")], { can_send_message_group: id("role:internet") }), 400, "BAD_REQUEST");
    expectError(await subscribe("hamlet", [fresh("Bad")], { can_subscribe_group: id("role:everyone") }), 400, "BAD_REQUEST");
    expectError(await subscribe("hamlet", [fresh("Bad")], { can_send_message_group: { direct_members: [424242], direct_subgroups: [] } }), 400, "BAD_REQUEST");
    expectError(
      await subscribe("hamlet", [fresh("Bad")], { invite_only: true, can_create_topic_group: id("role:members") }),
      400,
      "BAD_REQUEST",
      /can_create_topic_group/,
    );
  });
});

describe("announce", () => {
  test("Notification Bot announces new public channels in the announcements channel", async () => {
    const lobby = fresh("Announcements");
    expectSuccess(await subscribe("iago", [lobby], { principals: [s.users.iago.id, s.users.othello.id] }));
    const lobbyId = await channelId("iago", lobby);
    // No PATCH /realm yet: set the organization setting in the store, as an administrator would.
    const store = s.server.h.store;
    await store.commit(() => {
      const realm = getRealm(store)!;
      putRealm(store, { ...realm, settings: { ...realm.settings, new_stream_announcements_stream_id: lobbyId } });
    });
    const name = fresh("Announced");
    expectSuccess(await subscribe("hamlet", [name], { announce: true }));
    expectSuccess(await subscribe("hamlet", [fresh("Quiet private")], { announce: true, invite_only: true }));
    expectSuccess(await subscribe("hamlet", [fresh("Not announced")]));
    const narrow = JSON.stringify([{ operator: "channel", operand: lobbyId }, { operator: "topic", operand: "new channels" }]);
    const body = expectSuccess(await s.as("othello").get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow, apply_markdown: false }));
    expect(body.messages.map((m: any) => m.content)).toEqual([`@_**King Hamlet|${s.users.hamlet.id}** created a new channel #**${name}**.`]);
    expect(body.messages[0].sender_email).toBe("notification-bot@zulip.com");
  });
});

describe("new-subscription messages", () => {
  test("users subscribed by someone else get a direct message from Notification Bot", async () => {
    const a = fresh("Told");
    const b = fresh("Told too");
    expectSuccess(await subscribe("hamlet", [a, b]));
    const newOnly = fresh("Brand new");
    expectSuccess(await subscribe("hamlet", [a, b, newOnly], { principals: [s.users.cordelia.id, s.users.hamlet.id] }));
    // FL 397: the answer says whether the messages went out, only when they were asked for (the default).
    expect(expectSuccess(await subscribe("hamlet", [a], { principals: [s.users.shiva.id] })).new_subscription_messages_sent).toBe(true);
    expect("new_subscription_messages_sent" in expectSuccess(await subscribe("hamlet", [b], { principals: [s.users.shiva.id], send_new_subscription_messages: false }))).toBe(false);
    const dms = async (who: CastName) => {
      const narrow = JSON.stringify([{ operator: "is", operand: "dm" }]);
      const body = expectSuccess(await s.as(who).get("/messages", { anchor: "newest", num_before: 20, num_after: 0, narrow, apply_markdown: false }));
      return body.messages.filter((m: any) => m.sender_email === "notification-bot@zulip.com").map((m: any) => m.content);
    };
    const mention = `@_**King Hamlet|${s.users.hamlet.id}**`;
    expect(await dms("cordelia")).toContain(`${mention} subscribed you to the following channels:\n\n* #**${a}**\n* #**${b}**`);
    expect((await dms("cordelia")).join("\n")).not.toContain(newOnly);
    expect(await dms("shiva")).toEqual([`${mention} subscribed you to #**${a}**.`]);
    expect(await dms("hamlet")).toEqual([]);
  });

  test("past max_bulk_new_subscription_messages newly subscribed users, none is told and the answer says so (FL 397)", async () => {
    const limit = expectSuccess(await s.as("hamlet").post("/register", { fetch_event_types: JSON.stringify(["realm"]) })).max_bulk_new_subscription_messages;
    expect(limit).toBe(100);
    const people = [];
    for (let i = 0; i < limit; i++) people.push(await s.createUser(`crowd${counter}x${i}`));
    const crowd = people.map((u) => u.id);
    const latecomerUser = await s.createUser(`crowd${counter}late`);
    const latecomer = latecomerUser.id;
    const channel = fresh("Crowded");
    expectSuccess(await subscribe("hamlet", [channel], { principals: [s.users.hamlet.id, crowd[0]] }));
    const lastMessageId = async () => expectSuccess(await s.as("iago").get("/messages", { anchor: "newest", num_before: 1, num_after: 0 })).messages[0]?.id ?? 0;
    const before = await lastMessageId();
    // Counted are the users the request newly subscribes, not those named: 101 named, 1 already in, 100 new.
    const atLimit = expectSuccess(await subscribe("iago", [channel], { principals: [...crowd, s.users.hamlet.id] }));
    expect(atLimit.new_subscription_messages_sent).toBe(true);
    expect(Object.keys(atLimit.subscribed)).toHaveLength(limit - 1);
    const other = fresh("Too crowded");
    expectSuccess(await subscribe("iago", [other]));
    const overLimit = expectSuccess(await subscribe("iago", [other], { principals: [...crowd, latecomer] }));
    expect(Object.keys(overLimit.subscribed)).toHaveLength(limit + 1);
    expect(overLimit.new_subscription_messages_sent).toBe(false);
    // Neither the over-limit request's users nor anyone else got a message about it.
    const narrow = JSON.stringify([{ operator: "is", operand: "dm" }]);
    const fromNotificationBot = async (who: typeof latecomerUser) =>
      expectSuccess(await s.as(who).get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow, apply_markdown: false })).messages.filter((m: any) => m.sender_email === "notification-bot@zulip.com");
    expect(await fromNotificationBot(latecomerUser)).toEqual([]);
    const told = await fromNotificationBot(people[1]);
    expect(told.map((m: any) => m.content)).toEqual([`@_**Iago|${s.users.iago.id}** subscribed you to #**${channel}**.`]);
    expect(told[0].id).toBeGreaterThan(before);
  });
});

describe("permissions", () => {
  test("guests cannot create channels, see or join public channels they are not in", async () => {
    const name = fresh("Public");
    expectSuccess(await subscribe("hamlet", [name]));
    expectError(await subscribe("polonius", [fresh("GuestMade")]), 400, "BAD_REQUEST", "Insufficient permission");
    expectError(await subscribe("polonius", [name]), 400, "BAD_REQUEST", `Unable to access channel (${name}).`);
    const streams = expectSuccess(await s.as("polonius").get("/streams")).streams;
    expect(streams.map((c: any) => c.name)).not.toContain(name);
    expectError(await s.as("polonius").get("/get_stream_id", { stream: name }), 400, "BAD_REQUEST");
    // A member may add the guest; then the guest sees it.
    expectSuccess(await subscribe("hamlet", [name], { principals: [s.users.polonius.id] }));
    expect(expectSuccess(await s.as("polonius").get("/streams")).streams.map((c: any) => c.name)).toContain(name);
    // Guests cannot subscribe others.
    expectError(await subscribe("polonius", [name], { principals: [s.users.cordelia.id] }), 400, "BAD_REQUEST", "Insufficient permission");
  });

  test("private channels are invisible to non-subscribers; authorization_errors_fatal=false lists them", async () => {
    const name = fresh("Hidden");
    expectSuccess(await subscribe("hamlet", [name], { invite_only: true }));
    const id = await channelId("hamlet", name);
    for (const who of ["othello", "polonius", "shiva"] as CastName[]) {
      expect(expectSuccess(await s.as(who).get("/streams", { include_all: true })).streams.map((c: any) => c.stream_id)).not.toContain(id);
      expectError(await s.as(who).get(`/streams/${id}`), 400, "BAD_REQUEST", "Invalid channel ID");
      expectError(await s.as(who).get(`/streams/${id}/members`), 400, "BAD_REQUEST", "Invalid channel ID");
    }
    // Administrators see the metadata (Zulip's rule) but are not subscribed.
    expect(expectSuccess(await s.as("iago").get("/streams", { include_all: true })).streams.map((c: any) => c.stream_id)).toContain(id);
    expect(expectSuccess(await s.as("iago").get(`/streams/${id}/members`)).subscribers).toEqual([s.users.hamlet.id]);

    expectError(await subscribe("othello", [name]), 400, "BAD_REQUEST", `Unable to access channel (${name}).`);
    const open = fresh("Open");
    const res = await subscribe("othello", [name, open], { authorization_errors_fatal: false });
    const body = expectSuccess(res);
    expectSchema(SubscribeResponse, body);
    expect(body.unauthorized).toEqual([name]);
    expect(body.subscribed).toEqual({ [String(s.users.othello.id)]: [open] });
    // Subscribers may add others to a private channel (the realm's can_add_subscribers_group is members).
    expectSuccess(await subscribe("hamlet", [name], { principals: [s.users.othello.id] }));
    expect(expectSuccess(await s.as("othello").get(`/streams/${id}`)).stream.name).toBe(name);
  });

  test("can_subscribe_group lets its members join a private channel", async () => {
    const groups = expectSuccess(await s.as("hamlet").get("/user_groups")).user_groups;
    const members = groups.find((g: any) => g.name === "role:members").id;
    const name = fresh("Joinable");
    expectSuccess(await subscribe("hamlet", [name], { invite_only: true, can_subscribe_group: members }));
    const id = await channelId("hamlet", name);
    // Members of the group have content access: they see it and may join…
    expect(expectSuccess(await s.as("cordelia").get(`/streams/${id}`)).stream.invite_only).toBe(true);
    expectSuccess(await subscribe("cordelia", [name]));
    // …but not add others (that is can_add_subscribers_group or the realm setting with content access… which they now have).
    expectError(await subscribe("polonius", [name]), 400, "BAD_REQUEST");
    // Guests reach nothing they are not subscribed to, even when a group names them.
    const guestNamed = fresh("Guest named");
    expectSuccess(await subscribe("hamlet", [guestNamed], { invite_only: true, can_subscribe_group: { direct_members: [s.users.polonius.id], direct_subgroups: [] } }));
    expectError(await subscribe("polonius", [guestNamed]), 400, "BAD_REQUEST", `Unable to access channel (${guestNamed}).`);
  });

  test("can_add_subscribers_group members add others without being subscribed (FL 349)", async () => {
    const name = fresh("Curated");
    expectSuccess(await subscribe("hamlet", [name], { invite_only: true, can_add_subscribers_group: { direct_members: [s.users.othello.id], direct_subgroups: [] } }));
    const body = expectSuccess(await subscribe("othello", [name], { principals: [s.users.cordelia.id] }));
    expect(body.subscribed).toEqual({ [String(s.users.cordelia.id)]: [name] });
    expect((await mySubscriptions("othello")).map((c) => c.name)).not.toContain(name);
    // Someone outside the group, not subscribed, cannot.
    expectError(await subscribe("shiva", [name], { principals: [s.users.hamlet.id] }), 400, "BAD_REQUEST", `Unable to access channel (${name}).`);
  });
});

describe("DELETE /users/me/subscriptions", () => {
  test("removed / not_removed, and STREAM_DOES_NOT_EXIST with the field stream", async () => {
    const a = fresh("Leave");
    const b = fresh("Never");
    expectSuccess(await subscribe("hamlet", [a]));
    expectSuccess(await subscribe("othello", [b]));
    const body = expectSuccess(await s.as("hamlet").delete("/users/me/subscriptions", { subscriptions: [a, b] }));
    expectSchema(UnsubscribeResponse, body);
    expect(body).toMatchObject({ removed: [a], not_removed: [b] });
    const missing = expectError(await s.as("hamlet").delete("/users/me/subscriptions", { subscriptions: ["no such channel"] }), 400, "STREAM_DOES_NOT_EXIST", "Channel 'no such channel' does not exist");
    expect(missing.stream).toBe("no such channel");
    // A private channel one cannot see looks missing too.
    const hidden = fresh("HiddenLeave");
    expectSuccess(await subscribe("iago", [hidden], { invite_only: true }));
    expectError(await s.as("hamlet").delete("/users/me/subscriptions", { subscriptions: [hidden] }), 400, "STREAM_DOES_NOT_EXIST");
  });

  test("removing others: administrators yes, members no, bot owners their bots", async () => {
    const name = fresh("Crowd");
    expectSuccess(await subscribe("hamlet", [name], { principals: [s.users.hamlet.id, s.users.othello.id, s.users.cordelia.id] }));
    expectError(await s.as("cordelia").delete("/users/me/subscriptions", { subscriptions: [name], principals: [s.users.othello.id] }), 400, "BAD_REQUEST", "Insufficient permission");
    // The creator administers the channel (can_administer_channel_group), which includes removing subscribers (FL 349).
    expect(expectSuccess(await s.as("hamlet").delete("/users/me/subscriptions", { subscriptions: [name], principals: [s.users.cordelia.id] })).removed).toEqual([name]);
    expect(expectSuccess(await s.as("iago").delete("/users/me/subscriptions", { subscriptions: [name], principals: [s.users.othello.email] })).removed).toEqual([name]);
    const bot = expectSuccess(await s.as("cordelia").post("/bots", { full_name: "Cordelia bot", short_name: fresh("cbot").replace(" ", "") }));
    expectSuccess(await subscribe("cordelia", [name], { principals: [s.users.cordelia.id, bot.user_id] }));
    expect(expectSuccess(await s.as("cordelia").delete("/users/me/subscriptions", { subscriptions: [name], principals: [bot.user_id] })).removed).toEqual([name]);
    expectError(await s.as("cordelia").delete("/users/me/subscriptions", { subscriptions: [name], principals: [424242] }), 400, "BAD_REQUEST");
    // can_remove_subscribers_group names who else may remove people.
    const groups = expectSuccess(await s.as("hamlet").get("/user_groups")).user_groups;
    const moderators = groups.find((g: any) => g.name === "role:moderators").id;
    const open = fresh("Moderated crowd");
    expectSuccess(await subscribe("hamlet", [open], { principals: [s.users.hamlet.id, s.users.othello.id], can_remove_subscribers_group: moderators }));
    expectError(await s.as("cordelia").delete("/users/me/subscriptions", { subscriptions: [open], principals: [s.users.othello.id] }), 400, "BAD_REQUEST", "Insufficient permission");
    expect(expectSuccess(await s.as("shiva").delete("/users/me/subscriptions", { subscriptions: [open], principals: [s.users.othello.id] })).removed).toEqual([open]);
  });

  test("re-subscribing keeps the personal color", async () => {
    const name = fresh("Return");
    expectSuccess(await subscribe("shiva", [name]));
    const id = await channelId("shiva", name);
    expectSuccess(await s.as("shiva").post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: id, property: "color", value: "#123abc" }] }));
    expectSuccess(await s.as("shiva").delete("/users/me/subscriptions", { subscriptions: [name] }));
    expectSuccess(await subscribe("shiva", [name]));
    expect((await mySubscriptions("shiva")).find((c) => c.stream_id === id).color).toBe("#123abc");
  });
});

describe("subscription properties", () => {
  test("bulk and single updates, in_home_view as the inverse of is_muted", async () => {
    const name = fresh("Props");
    expectSuccess(await subscribe("othello", [name]));
    const id = await channelId("othello", name);
    expectSuccess(
      await s.as("othello").post("/users/me/subscriptions/properties", {
        subscription_data: [
          { stream_id: id, property: "color", value: "#ABCDEF" },
          { stream_id: id, property: "pin_to_top", value: true },
          { stream_id: id, property: "in_home_view", value: false },
          { stream_id: id, property: "desktop_notifications", value: true },
        ],
      }),
    );
    let sub = (await mySubscriptions("othello")).find((c) => c.stream_id === id);
    expect(sub).toMatchObject({ color: "#abcdef", pin_to_top: true, is_muted: true, in_home_view: false, desktop_notifications: true });
    expectSuccess(await s.as("othello").post(`/users/me/subscriptions/${id}`, { property: "is_muted", value: false }));
    expectSuccess(await s.as("othello").post(`/users/me/subscriptions/${id}`, { property: "color", value: "#000000" }));
    sub = (await mySubscriptions("othello")).find((c) => c.stream_id === id);
    expect(sub).toMatchObject({ is_muted: false, in_home_view: true, color: "#000000" });
  });

  test("validation errors change nothing", async () => {
    const name = fresh("Strict");
    expectSuccess(await subscribe("othello", [name]));
    const id = await channelId("othello", name);
    const post = (data: unknown) => s.as("othello").post("/users/me/subscriptions/properties", { subscription_data: data });
    expectError(await post([{ stream_id: id, property: "pin_to_top", value: true }, { stream_id: id, property: "color", value: "red" }]), 400, "BAD_REQUEST", "color is not a valid hex color code");
    expectError(await post([{ stream_id: id, property: "is_muted", value: "yes" }]), 400, "BAD_REQUEST", "is_muted is not a boolean");
    expectError(await post([{ stream_id: id, property: "frobnicate", value: true }]), 400, "BAD_REQUEST", "Unknown subscription property: frobnicate");
    expectError(await post([{ stream_id: 999999, property: "pin_to_top", value: true }]), 400, "BAD_REQUEST", "Invalid channel ID");
    const other = fresh("NotMine");
    expectSuccess(await subscribe("hamlet", [other]));
    const otherId = await channelId("hamlet", other);
    expectError(await post([{ stream_id: otherId, property: "pin_to_top", value: true }]), 400, "BAD_REQUEST", `Not subscribed to channel ID ${otherId}`);
    expectError(await post([{ stream_id: id, property: "pin_to_top" }]), 400, "BAD_REQUEST");
    expect((await mySubscriptions("othello")).find((c) => c.stream_id === id).pin_to_top).toBe(false);
  });
});

describe("events (state + events stay consistent)", () => {
  test("creating a public channel: stream create to all non-guests, subscription add to the creator, peer_add to the rest", async () => {
    const name = fresh("Evented");
    const r = await verifyAction(s, async () => {
      expectSuccess(await subscribe("hamlet", [name]));
    }, { registerParams: { include_subscribers: true } });
    expect(r.types.hamlet).toEqual(["stream/create", "subscription/add"]);
    for (const v of ["desdemona", "iago", "shiva", "othello", "cordelia"]) expect(r.types[v]).toEqual(["stream/create", "subscription/peer_add"]);
    expect(r.types.polonius).toEqual([]);
  });

  test("creating a default channel also sends default_streams to non-guests", async () => {
    const name = fresh("Default evented");
    const r = await verifyAction(s, async () => {
      expectSuccess(await subscribe("iago", [name], { is_default_stream: true }));
    }, { viewers: ["iago", "hamlet", "polonius"] });
    expect(r.types.iago).toEqual(["stream/create", "subscription/add", "default_streams"]);
    expect(r.types.hamlet).toEqual(["stream/create", "subscription/peer_add", "default_streams"]);
    expect(r.types.polonius).toEqual([]);
  });

  test("creating a private channel reaches only its subscribers and the administrators", async () => {
    const name = fresh("PrivateEvents");
    const r = await verifyAction(s, async () => {
      expectSuccess(await subscribe("hamlet", [name], { invite_only: true, principals: [s.users.hamlet.id, s.users.cordelia.id] }));
    });
    expect(r.types.hamlet).toEqual(["stream/create", "subscription/add"]);
    expect(r.types.cordelia).toEqual(["stream/create", "subscription/add"]);
    for (const v of ["desdemona", "iago"]) expect(r.types[v]).toEqual(["stream/create", "subscription/peer_add"]);
    for (const v of ["shiva", "othello", "polonius"]) expect(r.types[v]).toEqual([]);
  });

  test("joining an existing channel; a guest added sees it appear", async () => {
    const name = fresh("Joined");
    expectSuccess(await subscribe("hamlet", [name]));
    const r = await verifyAction(s, async () => {
      expectSuccess(await subscribe("hamlet", [name], { principals: [s.users.othello.id, s.users.polonius.id], send_new_subscription_messages: false }));
    }, { registerParams: { include_subscribers: true } });
    expect(r.types.othello).toEqual(["subscription/add"]);
    expect(r.types.polonius).toEqual(["stream/create", "subscription/add"]);
    expect(r.types.hamlet).toEqual(["subscription/peer_add"]);
  });

  test("unsubscribing: remove to the user, peer_remove to others; leaving a private channel hides it", async () => {
    const pub = fresh("Quit");
    const priv = fresh("QuitPrivate");
    expectSuccess(await subscribe("hamlet", [pub], { principals: [s.users.hamlet.id, s.users.othello.id] }));
    expectSuccess(await subscribe("hamlet", [priv], { invite_only: true, principals: [s.users.hamlet.id, s.users.othello.id] }));
    const r = await verifyAction(s, async () => {
      expectSuccess(await s.as("othello").delete("/users/me/subscriptions", { subscriptions: [pub, priv] }));
    }, { registerParams: { include_subscribers: true } });
    expect(r.types.othello).toEqual(["subscription/remove", "subscription/remove", "stream/delete"]);
    expect(r.types.hamlet).toEqual(["subscription/peer_remove", "subscription/peer_remove"]);
    expect(r.types.cordelia).toEqual(["subscription/peer_remove"]);
    expect(r.types.polonius).toEqual([]);
  });

  test("properties: is_muted sends both is_muted and in_home_view updates, to the user only", async () => {
    const name = fresh("Muted");
    expectSuccess(await subscribe("cordelia", [name]));
    const id = await channelId("cordelia", name);
    const r = await verifyAction(s, async () => {
      expectSuccess(
        await s.as("cordelia").post("/users/me/subscriptions/properties", {
          subscription_data: [
            { stream_id: id, property: "is_muted", value: true },
            { stream_id: id, property: "pin_to_top", value: true },
          ],
        }),
      );
    });
    expect(r.events.cordelia.map((e) => [e.property, e.value])).toEqual([
      ["in_home_view", false],
      ["is_muted", true],
      ["pin_to_top", true],
    ]);
    for (const v of EVERYONE.filter((v) => v !== "cordelia")) expect(r.types[v]).toEqual([]);
  });

  test("register: subscriptions, never_subscribed, unsubscribed and streams follow what each user may see", async () => {
    const pub = fresh("Listed");
    const priv = fresh("ListedPrivate");
    expectSuccess(await subscribe("hamlet", [pub, priv], { invite_only: false }));
    expectSuccess(await subscribe("hamlet", [fresh("x"), priv].slice(1)));
    expectSuccess(await subscribe("iago", [fresh("Other")]));
    const privName = fresh("ReallyPrivate");
    expectSuccess(await subscribe("iago", [privName], { invite_only: true }));
    const hamlet = await register(s.as("hamlet"), { include_subscribers: true });
    expect(hamlet.subscriptions.map((c: any) => c.name)).toContain(pub);
    expect(hamlet.never_subscribed.map((c: any) => c.name)).not.toContain(privName);
    expect(hamlet.streams.map((c: any) => c.name)).not.toContain(privName);
    const iago = await register(s.as("iago"), { include_subscribers: true });
    expect(iago.never_subscribed.map((c: any) => c.name)).toContain(pub);
    expect(iago.streams.map((c: any) => c.name)).toContain(privName);
    const guest = await register(s.as("polonius"));
    expect(guest.streams.map((c: any) => c.name)).not.toContain(pub);
    // Without notification_settings_null the nulls become the user's defaults.
    const plain = await register(s.as("hamlet"), { client_capabilities: {} });
    expect(plain.subscriptions.every((c: any) => typeof c.desktop_notifications === "boolean")).toBe(true);
  });
});

describe("PATCH /users/me/subscriptions (the older add-and-remove call)", () => {
  test("removes and adds in one request, with colors", async () => {
    const { expectSuccess: ok, expectError: err } = await import("../kit");
    const t2 = await (await import("../kit")).startTestServer();
    try {
      ok(await t2.as("hamlet").post("/users/me/subscriptions", { subscriptions: [{ name: "Verona" }] }));
      const body = ok(await t2.as("hamlet").patch("/users/me/subscriptions", { delete: ["Verona"], add: [{ name: "Denmark", color: "#e79ab5", description: "A Scandinavian country" }] }));
      expect(body.removed).toEqual(["Verona"]);
      expect(body.subscribed).toEqual({ [String(t2.users.hamlet.id)]: ["Denmark"] });
      const subs = ok(await t2.as("hamlet").get("/users/me/subscriptions")).subscriptions;
      expect(subs.map((x: any) => [x.name, x.color])).toEqual([["Denmark", "#e79ab5"]]);
      expect(subs[0].description).toBe("A Scandinavian country");
      err(await t2.as("hamlet").patch("/users/me/subscriptions", { add: [{ name: "Elsinore", color: "red" }] }), 400, "BAD_REQUEST", "Invalid color");
      expect(ok(await t2.as("hamlet").get("/users/me/subscriptions")).subscriptions.length).toBe(1);
      // A bad addition must not leave the removal half-applied.
      err(await t2.as("hamlet").patch("/users/me/subscriptions", { delete: ["Denmark"], add: [{ name: "" }] }), 400, "BAD_REQUEST");
      expect(ok(await t2.as("hamlet").get("/users/me/subscriptions")).subscriptions.map((x: any) => x.name)).toEqual(["Denmark"]);
      err(await t2.as("hamlet").patch("/users/me/subscriptions", { delete: ["Nowhere"], add: [{ name: "Elsinore" }] }), 400, "STREAM_DOES_NOT_EXIST");
      expect(ok(await t2.as("hamlet").get("/users/me/subscriptions")).subscriptions.map((x: any) => x.name)).toEqual(["Denmark"]);
    } finally {
      await t2.stop();
    }
  });
});

describe("principals by email", () => {
  test("a hidden real address is not found (the answer confirms nothing); the placeholder works", async () => {
    const hidden = await s.createUser("hiddenprincipal");
    expectSuccess(await s.as(hidden).patch("/settings", { email_address_visibility: 4 }));
    expectError(
      await s.as("hamlet").post("/users/me/subscriptions", { subscriptions: [{ name: "Denmark" }], principals: [hidden.email] }),
      400,
      "BAD_REQUEST",
      `User not authorized to execute queries on behalf of '${hidden.email}'`,
    );
    const placeholder = `user${hidden.id}@${new URL(s.url).hostname}`;
    expect(expectSuccess(await s.as("hamlet").post("/users/me/subscriptions", { subscriptions: [{ name: "Denmark" }], principals: [placeholder] })).subscribed).toHaveProperty(String(hidden.id));
  });
});

describe("subscription edges found in review", () => {
  test("an archived channel takes subscribers as a live one (FL 362), a private one only from who may join it; adding and removing one channel in one call is refused before any write", async () => {
    const archived = fresh("Gone");
    expectSuccess(await subscribe("iago", [archived]));
    const id = await channelId("iago", archived);
    expectSuccess(await s.as("iago").delete(`/streams/${id}`));
    expect(expectSuccess(await s.as("hamlet").post("/users/me/subscriptions", { subscriptions: [{ name: archived }] })).subscribed).toEqual({ [String(s.users.hamlet.id)]: [archived] });
    const secret = fresh("Gone private");
    expectSuccess(await subscribe("iago", [secret], { invite_only: true }));
    expectSuccess(await s.as("iago").delete(`/streams/${await channelId("iago", secret)}`));
    expectError(await s.as("hamlet").post("/users/me/subscriptions", { subscriptions: [{ name: secret }] }), 400, "BAD_REQUEST", `Unable to access channel (${secret}).`);
    const res = expectSuccess(await s.as("hamlet").post("/users/me/subscriptions", { subscriptions: [{ name: secret }], authorization_errors_fatal: false }));
    expect(res.subscribed).toEqual({});
    expect(res.unauthorized).toEqual([secret]);

    const both = fresh("Both");
    expectSuccess(await subscribe("hamlet", [both]));
    expectError(await s.as("hamlet").patch("/users/me/subscriptions", { add: [{ name: both }], delete: [both] }), 400, "BAD_REQUEST");
    const subs = expectSuccess(await s.as("hamlet").get("/users/me/subscriptions")).subscriptions.map((x: any) => x.name);
    expect(subs).toContain(both);
  });

  test("a member may create a channel with message_retention_days=realm_default", async () => {
    expectSuccess(await s.as("hamlet").post("/users/me/subscriptions", { subscriptions: [{ name: fresh("Default keep") }], message_retention_days: JSON.stringify("realm_default") }));
  });
});
