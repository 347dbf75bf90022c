import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiClient, expectError, expectSchema, expectSuccess, startTestServer, type TestServer } from "../kit";
import { CreateBotResponse, CreateUserResponse, GetOwnUserResponse, GetUserResponse, GetUsersResponse } from "../../src/schemas/users";
import { Role } from "../../src/store/users";
import { drainEvents, register, verifyAction } from "../kit/events";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

describe("GET /users", () => {
  test("lists every account with the spec's User fields, system bots excluded", async () => {
    const body = expectSuccess(await s.as("hamlet").get("/users"));
    expectSchema(GetUsersResponse, body);
    const emails = body.members.map((m: any) => m.email);
    expect(emails).toContain(s.users.iago.email);
    expect(emails).not.toContain("notification-bot@zulip.com");
    const iago = body.members.find((m: any) => m.user_id === s.users.iago.id);
    expect(iago).toMatchObject({ role: 200, is_admin: true, is_owner: false, is_guest: false, is_bot: false, bot_type: null });
    expect("bot_owner_id" in iago).toBe(false);
    expect("is_deleted" in iago).toBe(false);
    expect("profile_data" in iago).toBe(false);
    const desdemona = body.members.find((m: any) => m.user_id === s.users.desdemona.id);
    expect(desdemona).toMatchObject({ role: 100, is_admin: true, is_owner: true });
    expect(body.members.find((m: any) => m.user_id === s.users.polonius.id)).toMatchObject({ role: 600, is_guest: true });
  });

  test("avatars are served by Hearth itself (never null); include_custom_profile_fields adds profile_data", async () => {
    const body = expectSuccess(await s.as("hamlet").get("/users", { client_gravatar: true, include_custom_profile_fields: true }));
    for (const m of body.members) {
      expect(m.avatar_url).toStartWith(`${s.url}/user_avatars/${m.user_id}/`);
      if (!m.is_bot) expect(m.profile_data).toEqual({});
    }
  });
});

describe("GET /users/me and /users/{id|email}", () => {
  test("own profile with max_message_id", async () => {
    const body = expectSuccess(await s.as("hamlet").get("/users/me"));
    expectSchema(GetOwnUserResponse, body);
    expect(body).toMatchObject({ user_id: s.users.hamlet.id, email: s.users.hamlet.email, full_name: "King Hamlet", role: 400 });
  });

  test("by ID, by real email, by placeholder email", async () => {
    const byId = expectSuccess(await s.as("othello").get(`/users/${s.users.hamlet.id}`));
    expectSchema(GetUserResponse, byId);
    expect(byId.user.user_id).toBe(s.users.hamlet.id);
    const byEmail = expectSuccess(await s.as("othello").get(`/users/${encodeURIComponent(s.users.hamlet.email)}`));
    expect(byEmail.user.user_id).toBe(s.users.hamlet.id);
    const host = new URL(s.url).hostname;
    const byPlaceholder = expectSuccess(await s.as("othello").get(`/users/user${s.users.hamlet.id}@${host}`));
    expect(byPlaceholder.user.user_id).toBe(s.users.hamlet.id);
  });

  test("unknown users → 400 No such user; system bots are not visible", async () => {
    expectError(await s.as("othello").get("/users/99999"), 400, "BAD_REQUEST", "No such user");
    expectError(await s.as("othello").get("/users/nobody@zulip.test"), 400, "BAD_REQUEST", "No such user");
    expectError(await s.as("othello").get("/users/1"), 400, "BAD_REQUEST", "No such user");
  });
});

describe("POST /users (administrators create users)", () => {
  test("admin creates; the user can log in; date_joined moves to first login", async () => {
    const body = expectSuccess(await s.as("iago").post("/users", { email: "newbie@zulip.test", password: "newbie-pass", full_name: "New Bie" }));
    expectSchema(CreateUserResponse, body);
    const before = expectSuccess(await s.as("iago").get(`/users/${body.user_id}`)).user.date_joined;
    await Bun.sleep(20);
    const login = expectSuccess(await s.anonymous().post("/fetch_api_key", { username: "newbie@zulip.test", password: "newbie-pass" }));
    expect(login.user_id).toBe(body.user_id);
    const after = expectSuccess(await s.as("iago").get(`/users/${body.user_id}`)).user.date_joined;
    expect(new Date(after).getTime()).toBeGreaterThan(new Date(before).getTime());

    // Like every new Zulip account, it finds an unread welcome message from Welcome Bot.
    const newbie = new ApiClient(s.url, "newbie@zulip.test", login.api_key);
    const messages = expectSuccess(await newbie.get("/messages", { anchor: "newest", num_before: 10, num_after: 0 })).messages;
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({ type: "private", sender_email: "welcome-bot@zulip.com", flags: [] });
    const realmName = expectSuccess(await s.anonymous().get("/server_settings")).realm_name;
    expect(messages[0].content).toContain(`welcome to <strong>${realmName}</strong>`);
    expect(expectSuccess(await newbie.post("/register", { fetch_event_types: JSON.stringify(["message", "update_message_flags"]) })).unread_msgs.count).toBe(1);
  });

  test("an organization that restricts emails to its domains: the same rule for accounts administrators create", async () => {
    expectSuccess(await s.as("desdemona").post("/realm/domains", { domain: "elsinore.test", allow_subdomains: "false" }));
    expectSuccess(await s.as("desdemona").patch("/realm", { emails_restricted_to_domains: "true" }));
    try {
      expectError(await s.as("iago").post("/users", { email: "yorick@graveyard.test", password: "alas-poor", full_name: "Yorick" }), 400, "BAD_REQUEST", "Email 'yorick@graveyard.test' not allowed in this organization");
      expectError(await s.as("iago").post("/users", { email: "yorick+skull@elsinore.test", password: "alas-poor", full_name: "Yorick" }), 400, "BAD_REQUEST", "Email addresses containing + are not allowed.");
      expectSuccess(await s.as("iago").post("/users", { email: "yorick@elsinore.test", password: "alas-poor", full_name: "Yorick" }));
      const emails = expectSuccess(await s.as("iago").get("/users")).members.map((u: any) => u.delivery_email ?? u.email);
      expect(emails).not.toContain("yorick@graveyard.test");
    } finally {
      expectSuccess(await s.as("desdemona").patch("/realm", { emails_restricted_to_domains: "false" }));
    }
  });

  test("members cannot; duplicates and bad input are rejected without writing", async () => {
    expectError(await s.as("hamlet").post("/users", { email: "x@zulip.test", password: "p", full_name: "X" }), 400, "UNAUTHORIZED_PRINCIPAL");
    expectError(await s.as("iago").post("/users", { email: s.users.hamlet.email, password: "p", full_name: "Dup" }), 400, "BAD_REQUEST", `Email '${s.users.hamlet.email}' already in use`);
    expectError(await s.as("iago").post("/users", { email: "not-an-email", password: "p", full_name: "X" }), 400, "BAD_REQUEST");
    expectError(await s.as("iago").post("/users", { email: "y@zulip.test", password: "p", full_name: "" }), 400, "BAD_REQUEST", "Name too short!");
    expectError(await s.as("iago").post("/users", { email: "y@zulip.test", password: "p" }), 400, "REQUEST_VARIABLE_MISSING");
    // Zulip's check_password_strength: here the length limits of /server_settings.
    for (const password of ["", "p"]) expectError(await s.as("iago").post("/users", { email: "y@zulip.test", password, full_name: "Y" }), 400, "BAD_REQUEST", "The password is too weak.");
    expectError(await s.as("iago").get("/users/y@zulip.test"), 400, "BAD_REQUEST", "No such user");
  });
});

describe("PATCH /users/{id}, deactivate, reactivate", () => {
  test("admins change names and roles; only owners grant ownership", async () => {
    const u = await s.createUser("rosalind");
    expectSuccess(await s.as("iago").patch(`/users/${u.id}`, { full_name: "Rosalind", role: 300 }));
    expect(expectSuccess(await s.as("hamlet").get(`/users/${u.id}`)).user).toMatchObject({ full_name: "Rosalind", role: 300 });
    expectError(await s.as("iago").patch(`/users/${u.id}`, { role: 100 }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
    expectError(await s.as("hamlet").patch(`/users/${u.id}`, { full_name: "Hacked" }), 400, "UNAUTHORIZED_PRINCIPAL");
    expectError(await s.as("iago").patch(`/users/${u.id}`, { role: 250 }), 400, "BAD_REQUEST", "Invalid role");
    expectSuccess(await s.as("desdemona").patch(`/users/${u.id}`, { role: 100 }));
    expect(expectSuccess(await s.as("hamlet").get(`/users/${u.id}`)).user).toMatchObject({ role: 100, is_owner: true, is_admin: true });
  });

  test("the only owner cannot be demoted or deactivated", async () => {
    const t2 = await startTestServer();
    try {
      expectError(await t2.as("desdemona").patch(`/users/${t2.users.desdemona.id}`, { role: 400 }), 400, "BAD_REQUEST");
      expectError(await t2.as("desdemona").delete(`/users/${t2.users.desdemona.id}`), 400, "BAD_REQUEST", "Cannot deactivate the only organization owner");
      expectError(await t2.as("desdemona").delete(`/users/me`), 400, "BAD_REQUEST");
    } finally {
      await t2.stop();
    }
  });

  test("deactivation shows is_active false, deactivates the user's bots, and reactivation restores", async () => {
    const u = await s.createUser("lear");
    const bot = expectSuccess(await s.as(u).post("/bots", { full_name: "Lear's bot", short_name: "lear" }));
    expectError(await s.as("hamlet").delete(`/users/${u.id}`), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    expectSuccess(await s.as("iago").delete(`/users/${u.id}`));
    const users = expectSuccess(await s.as("hamlet").get("/users")).members;
    expect(users.find((m: any) => m.user_id === u.id).is_active).toBe(false);
    expect(users.find((m: any) => m.user_id === bot.user_id).is_active).toBe(false);
    expectError(await s.as("iago").delete(`/users/${u.id}`), 400, "BAD_REQUEST", "User is already deactivated");
    expectSuccess(await s.as("iago").post(`/users/${u.id}/reactivate`));
    expectError(await s.as("iago").post(`/users/${u.id}/reactivate`), 400, "BAD_REQUEST", "User is already active");
    expect(expectSuccess(await s.as("hamlet").get(`/users/${u.id}`)).user.is_active).toBe(true);
  });

  test("a user can deactivate their own account", async () => {
    const u = await s.createUser("yorick");
    expectSuccess(await s.as(u).delete("/users/me"));
    expectError(await s.as(u).get("/users/me"), 401, "USER_DEACTIVATED");
  });
});

describe("bots", () => {
  test("generic and incoming-webhook bots have their own keys and owner", async () => {
    const created = expectSuccess(await s.as("hamlet").post("/bots", { full_name: "Hamlet's helper", short_name: "helper", bot_type: 2 }));
    expectSchema(CreateBotResponse, created);
    const host = new URL(s.url).hostname;
    const bot = expectSuccess(await s.as("othello").get(`/users/${created.user_id}`)).user;
    expect(bot).toMatchObject({ is_bot: true, bot_type: 2, bot_owner_id: s.users.hamlet.id, email: `helper-bot@${host}`, delivery_email: `helper-bot@${host}` });
    // Its key is its own; as an incoming-webhook bot it may only post (Zulip's rule).
    const asBot = s.as({ id: created.user_id, email: bot.email, apiKey: created.api_key, name: "helper" });
    expectError(await asBot.get("/users/me"), 401, "UNAUTHORIZED", "This API is not available to incoming webhook bots.");
    expectError(await s.as({ id: created.user_id, email: bot.email, apiKey: "wrong", name: "helper" }).get("/users/me"), 401, "INVALID_API_KEY");
    const mine = expectSuccess(await s.as("hamlet").get("/bots")).bots;
    expect(mine.map((b: any) => b.username)).toEqual([`helper-bot@${host}`]);
    expect(expectSuccess(await s.as("othello").get("/bots")).bots).toEqual([]);
    // Administrators too see only their own bots here (they have every bot in realm_bots).
    expect(expectSuccess(await s.as("iago").get("/bots")).bots.map((b: any) => b.user_id)).not.toContain(created.user_id);
    // Bots get no welcome message.
    const generic = expectSuccess(await s.as("hamlet").post("/bots", { full_name: "Hamlet's reader", short_name: "reader", bot_type: 1 }));
    const reader = s.as({ id: generic.user_id, email: `reader-bot@${host}`, apiKey: generic.api_key, name: "reader" });
    expect(expectSuccess(await reader.get("/messages", { anchor: "newest", num_before: 10, num_after: 0 })).messages).toEqual([]);
  });

  test("bad bot input and duplicate names", async () => {
    expectError(await s.as("hamlet").post("/bots", { full_name: "X", short_name: "bad name!" }), 400, "BAD_REQUEST");
    expectError(await s.as("hamlet").post("/bots", { full_name: "X", short_name: "x", bot_type: 9 }), 400, "BAD_REQUEST", "Invalid bot type");
    expectSuccess(await s.as("hamlet").post("/bots", { full_name: "Dup", short_name: "dup" }));
    expectError(await s.as("othello").post("/bots", { full_name: "Dup", short_name: "dup" }), 400, "BAD_REQUEST");
  });

  test("owners manage their bots; others cannot", async () => {
    const created = expectSuccess(await s.as("cordelia").post("/bots", { full_name: "Cordelia bot", short_name: "cbot" }));
    expectError(await s.as("othello").patch(`/bots/${created.user_id}`, { full_name: "Mine now" }), 400, "UNAUTHORIZED_PRINCIPAL");
    expectSuccess(await s.as("cordelia").patch(`/bots/${created.user_id}`, { full_name: "Renamed bot" }));
    expect(expectSuccess(await s.as("cordelia").get(`/bots/${created.user_id}/api_key`)).api_key).toBe(created.api_key);
    expect(expectSuccess(await s.as("iago").get(`/bots/${created.user_id}/api_key`)).api_key).toBe(created.api_key);
    expectError(await s.as("othello").get(`/bots/${created.user_id}/api_key`), 400, "BAD_REQUEST", "No such bot");
    expectError(await s.as("cordelia").get(`/bots/${s.users.hamlet.id}/api_key`), 400, "BAD_REQUEST", "No such bot");
    const key = expectSuccess(await s.as("cordelia").post(`/bots/${created.user_id}/api_key/regenerate`)).api_key;
    expect(key).not.toBe(created.api_key);
    expect(expectSuccess(await s.as("cordelia").get(`/bots/${created.user_id}/api_key`)).api_key).toBe(key);
    expectSuccess(await s.as("cordelia").delete(`/bots/${created.user_id}`));
    expect(expectSuccess(await s.as("cordelia").get(`/users/${created.user_id}`)).user).toMatchObject({ full_name: "Renamed bot", is_active: false });
  });
});

describe("PATCH /bots/{bot_id}", () => {
  test("a new owner: realm_bots move from the old owner to the new one; everyone, administrators included, hears the bot_owner_id from realm_user (FL 474)", async () => {
    const bot = expectSuccess(await s.as("hamlet").post("/bots", { full_name: "Handover bot", short_name: "handover" })).user_id as number;
    const r = await verifyAction(s, async () => {
      const res = expectSuccess(await s.as("hamlet").patch(`/bots/${bot}`, { bot_owner_id: s.users.othello.id }));
      expect(res).toMatchObject({ full_name: "Handover bot", bot_owner: s.users.othello.email, default_sending_stream: null, default_all_public_streams: false });
    });
    expect(r.types.hamlet).toEqual(["realm_bot/delete", "realm_user/update"]);
    expect(r.types.othello).toEqual(["realm_bot/add", "realm_user/update"]);
    expect(r.types.iago).toEqual(["realm_user/update"]);
    expect(r.types.cordelia).toEqual(["realm_user/update"]);
    // The new owner manages it now; the old one no longer does.
    expectSuccess(await s.as("othello").patch(`/bots/${bot}`, { full_name: "Othello's bot" }));
    expectError(await s.as("hamlet").patch(`/bots/${bot}`, { full_name: "Mine again" }), 400, "UNAUTHORIZED_PRINCIPAL");
    expect(expectSuccess(await s.as("othello").get("/bots")).bots.map((b: any) => b.user_id)).toContain(bot);
    expect(expectSuccess(await s.as("hamlet").get(`/users/${bot}`)).user.bot_owner_id).toBe(s.users.othello.id);
  });

  test("a bot never ends up active under an owner deactivated at the same moment", async () => {
    for (let i = 0; i < 5; i++) {
      const newOwner = expectSuccess(await s.as("iago").post("/users", { email: `heir${i}@zulip.test`, password: "heir-password", full_name: `Heir ${i}` })).user_id;
      const bot = await s.createBot("hamlet", { full_name: `Courier ${i}`, short_name: `courier${i}`, bot_type: 1 });
      // The deactivation is sent first, so its commit usually comes first too.
      const [deactivated, moved] = await Promise.all([s.as("iago").delete(`/users/${newOwner}`), s.as("hamlet").patch(`/bots/${bot.id}`, { bot_owner_id: newOwner })]);
      expectSuccess(deactivated);
      const after = expectSuccess(await s.as("iago").get(`/users/${bot.id}`)).user;
      if (moved.status === 200) expect(after.is_active && after.bot_owner_id === newOwner).toBe(false);
      else expect(moved.body.msg).toBe("Failed to change owner, user is deactivated");
    }
  });

  test("refused owners leave the bot as it was; administrators change a bot's role", async () => {
    const bot = expectSuccess(await s.as("cordelia").post("/bots", { full_name: "Kept bot", short_name: "kept" })).user_id as number;
    const deactivated = await s.createUser("gone");
    expectSuccess(await s.as("iago").delete(`/users/${deactivated.id}`));
    for (const [owner, msg] of [
      [999_999, "Failed to change owner, no such user"],
      [deactivated.id, "Failed to change owner, user is deactivated"],
      [bot, "Failed to change owner, bots can't own other bots"],
    ] as const) {
      expectError(await s.as("cordelia").patch(`/bots/${bot}`, { full_name: "Renamed?", bot_owner_id: owner }), 400, "BAD_REQUEST", msg);
    }
    const unchanged = expectSuccess(await s.as("cordelia").get(`/users/${bot}`)).user;
    expect({ name: unchanged.full_name, owner: unchanged.bot_owner_id }).toEqual({ name: "Kept bot", owner: s.users.cordelia.id });
    // A role: administrators only, as for any account.
    expectError(await s.as("cordelia").patch(`/bots/${bot}`, { role: Role.MODERATOR }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    const r = await verifyAction(s, () => s.as("iago").patch(`/bots/${bot}`, { role: Role.MODERATOR }), { viewers: ["cordelia", "hamlet"] });
    expect(r.types.hamlet).toContain("realm_user/update");
    expect(expectSuccess(await s.as("cordelia").get(`/users/${bot}`)).user.role).toBe(Role.MODERATOR);
  });
});

describe("bot defaults", () => {
  test("default channels and all_public_streams: set at creation and by PATCH, shown everywhere, with events to the owner and administrators", async () => {
    await s.createChannel("iago", "Bot Denmark", ["hamlet"]);
    const verona = await s.createChannel("iago", "Bot Verona", ["hamlet"]);
    await s.createChannel("iago", "Bot Secret", ["iago"], { invite_only: true });
    const created = expectSuccess(
      await s.as("hamlet").post("/bots", { full_name: "Defaults bot", short_name: "defaults", default_sending_stream: "Bot Denmark", default_events_register_stream: "Bot Verona", default_all_public_streams: true }),
    );
    expect(created).toMatchObject({ default_sending_stream: "Bot Denmark", default_events_register_stream: "Bot Verona", default_all_public_streams: true });
    const listed = expectSuccess(await s.as("hamlet").get("/bots")).bots.find((b: any) => b.user_id === created.user_id);
    expect(listed).toMatchObject({ default_sending_stream: "Bot Denmark", default_events_register_stream: "Bot Verona", default_all_public_streams: true });
    // A channel the caller cannot see is an invalid name, and nothing is written.
    expectError(await s.as("hamlet").post("/bots", { full_name: "Nope bot", short_name: "nope", default_sending_stream: "Bot Secret" }), 400, "BAD_REQUEST", "Invalid channel name 'Bot Secret'");
    expectError(await s.as("hamlet").patch(`/bots/${created.user_id}`, { full_name: "Renamed?", default_events_register_stream: "Missing" }), 400, "BAD_REQUEST", "Invalid channel name 'Missing'");
    expect(expectSuccess(await s.as("hamlet").get(`/users/${created.user_id}`)).user.full_name).toBe("Defaults bot");
    // PATCH: one realm_bot update per setting, to the owner and administrators; "" clears.
    const r = await verifyAction(s, async () => {
      const res = expectSuccess(await s.as("hamlet").patch(`/bots/${created.user_id}`, { default_sending_stream: "Bot Verona", default_events_register_stream: "" }));
      expect(res).toMatchObject({ default_sending_stream: "Bot Verona", default_events_register_stream: null, default_all_public_streams: true });
    });
    expect(r.types.hamlet).toEqual(["realm_bot/update", "realm_bot/update"]);
    expect(r.types.iago).toEqual(["realm_bot/update", "realm_bot/update"]);
    expect(r.types.othello).toEqual([]);
    // A renamed default channel: realm_bots follow.
    const renamed = await verifyAction(s, () => s.as("iago").patch(`/streams/${verona}`, { new_name: "Bot Padua" }), { viewers: ["hamlet", "iago", "othello"] });
    expect(renamed.types.hamlet).toContain("realm_bot/update");
    expect(renamed.types.othello).not.toContain("realm_bot/update");
    expect(expectSuccess(await s.as("hamlet").get("/bots")).bots.find((b: any) => b.user_id === created.user_id).default_sending_stream).toBe("Bot Padua");
  });

  test("a bot's queues follow its defaults; a channel message naming no channel goes to its default channel", async () => {
    const quiet = await s.createChannel("iago", "Bot Quiet", ["othello"]);
    const loud = await s.createChannel("iago", "Bot Loud", ["othello"]);
    const bot = await s.createBot("othello", { full_name: "Listener bot", short_name: "listener", default_events_register_stream: "Bot Loud", default_sending_stream: "Bot Loud" });
    expectSuccess(await s.as("othello").post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "Bot Quiet" }, { name: "Bot Loud" }]), principals: JSON.stringify([bot.id]) }));
    // Registered without a narrow: only the default channel's messages.
    const narrowed = await register(s.as(bot), { event_types: ["message"] });
    // Registered without all_public_streams, after the default turns it on: every public channel,
    // subscribed or not; an explicit all_public_streams still wins.
    const other = await s.createChannel("iago", "Bot Elsewhere", ["iago"]);
    expectSuccess(await s.as("othello").patch(`/bots/${bot.id}`, { default_events_register_stream: "", default_all_public_streams: true }));
    const everything = await register(s.as(bot), { event_types: ["message"] });
    const explicit = await register(s.as(bot), { event_types: ["message"], all_public_streams: false });
    const sent = [];
    for (const to of [quiet, loud]) sent.push(expectSuccess(await s.as("othello").post("/messages", { type: "stream", to, topic: "t", content: `to ${to}` })).id);
    sent.push(expectSuccess(await s.as("iago").post("/messages", { type: "stream", to: other, topic: "t", content: "elsewhere" })).id);
    const ids = async (queueId: string) => (await drainEvents(s.as(bot), queueId)).filter((e: any) => e.type === "message").map((e: any) => e.message.id);
    expect(await ids(narrowed.queue_id)).toEqual([sent[1]]);
    expect(await ids(everything.queue_id)).toEqual(sent);
    expect(await ids(explicit.queue_id)).toEqual([sent[0], sent[1]]);
    // to=[]: the default sending channel.
    const posted = expectSuccess(await s.as(bot).post("/messages", { type: "stream", to: "[]", topic: "defaults", content: "where?" })).id;
    expect(expectSuccess(await s.as("othello").get(`/messages/${posted}`)).message.stream_id).toBe(loud);
  });
});

describe("email visibility", () => {
  test("hidden emails show the placeholder and a null delivery_email to those who may not see them", async () => {
    const u = await s.createUser("secretive");
    expectSuccess(await s.as(u).patch("/settings", { email_address_visibility: 3 }));
    const host = new URL(s.url).hostname;
    const seenByMember = expectSuccess(await s.as("hamlet").get(`/users/${u.id}`)).user;
    expect(seenByMember).toMatchObject({ email: `user${u.id}@${host}`, delivery_email: null });
    const seenByAdmin = expectSuccess(await s.as("iago").get(`/users/${u.id}`)).user;
    expect(seenByAdmin).toMatchObject({ email: `user${u.id}@${host}`, delivery_email: u.email });
    expect(expectSuccess(await s.as(u).get("/users/me")).delivery_email).toBe(u.email);
    expectError(await s.as("hamlet").get(`/users/${u.email}`), 400, "BAD_REQUEST", "No such user");
    expect(expectSuccess(await s.as("iago").get(`/users/${u.email}`)).user.user_id).toBe(u.id);
  });
});

describe("permissions found in review", () => {
  test("guests cannot create bots (can_create_bots_group); an administrator cannot deactivate an owner; bots are deactivated through /bots", async () => {
    expectError(await s.as("polonius").post("/bots", { full_name: "Guest bot", short_name: "gbot" }), 400, "UNAUTHORIZED_PRINCIPAL", "Insufficient permission");
    const owner = await s.createUser("secondowner", Role.OWNER);
    expect(expectSuccess(await s.as("iago").get(`/users/${owner.id}`)).user).toMatchObject({ role: Role.OWNER, is_owner: true });
    expectError(await s.as("iago").delete(`/users/${owner.id}`), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
    expect(expectSuccess(await s.as("iago").get(`/users/${owner.id}`)).user.is_active).toBe(true);
    const bot = expectSuccess(await s.as("hamlet").post("/bots", { full_name: "Managed bot", short_name: "mbot" }));
    expectError(await s.as("iago").delete(`/users/${bot.user_id}`), 400, "BAD_REQUEST", "No such user");
    expectSuccess(await s.as("iago").delete(`/bots/${bot.user_id}`));
    expectSuccess(await s.as("iago").post(`/users/${bot.user_id}/reactivate`));
  });
});
