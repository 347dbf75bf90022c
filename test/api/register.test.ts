import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectSchema, expectSuccess, MOBILE_APP_CAPABILITIES, startTestServer, type TestServer } from "../kit";
import { register, verifyAction, drainEvents } from "../kit/events";
import { RegisterResponse } from "../../src/schemas/register";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const EVERYONE = ["desdemona", "iago", "shiva", "hamlet", "othello", "cordelia", "polonius"];

describe("POST /register", () => {
  test("the full state matches the schema, with the mobile app's required fields", async () => {
    // Exactly what the Zulip mobile app sends.
    const body = expectSuccess(
      await s.as("hamlet").post("/register", {
        apply_markdown: true,
        client_gravatar: false,
        slim_presence: true,
        idle_queue_timeout: "mobile",
        client_capabilities: MOBILE_APP_CAPABILITIES,
      }),
    );
    expectSchema(RegisterResponse, body);
    expect(body.last_event_id).toBe(-1);
    expect(body.idle_queue_timeout_secs).toBe(12 * 3600);
    expect(body.user_id).toBe(s.users.hamlet.id);
    expect(body.realm_users.some((u: any) => u.user_id === s.users.hamlet.id)).toBe(true);
    expect(body.cross_realm_bots.map((b: any) => b.email).sort()).toEqual(
      ["emailgateway@zulip.com", "notification-bot@zulip.com", "welcome-bot@zulip.com"],
    );
    expect(body.service_feature_level).toBe(body.zulip_feature_level);
    // With user_settings_object the legacy top-level copies are left out.
    expect(body.twenty_four_hour_time).toBeUndefined();
    expect(body.user_settings.emojiset).toBe("google");
  });

  test("every role's register matches the schema (guest, moderator, owner, bots' owner)", async () => {
    for (const name of EVERYONE) {
      const body = await register(s.as(name as any), { client_gravatar: true, client_capabilities: {} });
      expectSchema(RegisterResponse, body);
      expect(body.realm_users.some((u: any) => u.user_id === body.user_id)).toBe(true);
      // The role flags at FL 508: is_moderator for moderators, administrators and owners (FL 380).
      const role = body.realm_users.find((u: any) => u.user_id === body.user_id).role;
      expect({ owner: body.is_owner, admin: body.is_admin, moderator: body.is_moderator, guest: body.is_guest }).toEqual({
        owner: role === 100,
        admin: role <= 200,
        moderator: role <= 300,
        guest: role === 600,
      });
    }
  });

  test("zulip-terminal's request: its settings in user_settings (no top-level copies since FL 439) and muted_topics", async () => {
    const body = expectSuccess(
      await s.as("othello").post("/register", {
        event_types: ["message", "update_message", "reaction", "subscription", "typing", "update_message_flags", "user_settings", "realm_emoji", "realm_user"],
        fetch_event_types: ["realm", "presence", "subscription", "message", "starred_messages", "update_message_flags", "muted_topics", "realm_user", "realm_user_groups", "user_settings", "realm_emoji", "custom_profile_fields", "zulip_version"],
        apply_markdown: true,
        client_gravatar: true,
        include_subscribers: true,
        narrow: [],
      }),
    );
    for (const key of ["zulip_version", "max_message_id", "queue_id", "last_event_id", "user_id", "email", "full_name", "realm_name", "realm_message_retention_days", "subscriptions", "muted_topics", "realm_emoji", "custom_profile_fields", "realm_users", "cross_realm_bots", "presences", "unread_msgs", "user_settings", "starred_messages", "realm_user_groups"]) {
      expect(body).toHaveProperty(key);
    }
    // zulip-terminal reads the groups at start-up (Model.__init__): Zulip's fetch name is "realm_user_groups".
    expect(body.realm_user_groups.map((g: any) => g.name)).toContain("role:everyone");
    // zulip-terminal reads these from user_settings when it is there (the top level only from old servers).
    expect(body.user_settings.twenty_four_hour_time).toBe(false);
    expect(body.user_settings.pm_content_in_desktop_notifications).toBe(true);
    expect(body.user_settings.send_private_typing_notifications).toBe(true);
    expect(body.twenty_four_hour_time).toBeUndefined();
    // Hearth serves every avatar itself, so client_gravatar never turns avatar_url into null.
    expect(body.realm_users.find((u: any) => u.user_id === s.users.hamlet.id).avatar_url).toStartWith(`${s.url}/user_avatars/`);
  });

  test("fetch_event_types takes Zulip's state names as well as the event types (realm_user_groups, navigation_views, channel_folders, video_calls)", async () => {
    for (const [name, key] of [["realm_user_groups", "realm_user_groups"], ["user_group", "realm_user_groups"], ["navigation_views", "navigation_views"], ["navigation_view", "navigation_views"], ["channel_folders", "channel_folders"], ["channel_folder", "channel_folders"], ["video_calls", "has_zoom_token"], ["giphy", "giphy_api_key"]]) {
      const body = expectSuccess(await s.as("hamlet").post("/register", { fetch_event_types: [name] }));
      expect(body, name).toHaveProperty(key);
      expect(body, name).not.toHaveProperty("realm_users");
    }
  });

  test("fetch_event_types selects parts: a bot asking for messages gets no user list", async () => {
    const body = expectSuccess(await s.as("hamlet").post("/register", { event_types: ["message"] }));
    // Hamlet's newest message: his welcome message from Welcome Bot.
    const newest = expectSuccess(await s.as("hamlet").get("/messages", { anchor: "newest", num_before: 1, num_after: 0 })).messages;
    expect(newest.map((m: any) => m.sender_email)).toEqual([expect.stringContaining("welcome-bot")]);
    expect(body.max_message_id).toBe(newest[0].id);
    expect(body.realm_users).toBeUndefined();
    expect(body.realm_name).toBeUndefined();
    expect(body.user_settings).toBeUndefined();
    expect(typeof body.queue_id).toBe("string");
    expect(body.zulip_version).toBeString();
    const only = expectSuccess(await s.as("hamlet").post("/register", { fetch_event_types: ["realm_user"] }));
    expect(only.realm_users).toBeArray();
    expect(only.subscriptions).toBeUndefined();
    expect(only.unread_msgs).toBeUndefined();
  });

  test("unauthenticated: client_gravatar=true is an error; otherwise login is required", async () => {
    expectError(await s.anonymous().post("/register", { client_gravatar: true }), 400, "BAD_REQUEST", "Invalid 'client_gravatar' parameter for anonymous request");
    for (const include_subscribers of [true, "partial"]) {
      expectError(await s.anonymous().post("/register", { include_subscribers }), 400, "BAD_REQUEST", "Invalid 'include_subscribers' parameter for anonymous request");
    }
    expectError(await s.anonymous().post("/register", {}), 401, "UNAUTHORIZED");
  });

  test("bad parameters are 400s, never 500s", async () => {
    expectError(await s.as("hamlet").post("/register", { idle_queue_timeout: 0 }), 400, "BAD_REQUEST");
    expectError(await s.as("hamlet").post("/register", { idle_queue_timeout: "desktop" }), 400, "BAD_REQUEST");
    expectError(await s.as("hamlet").post("/register", { narrow: [["bogus", "x"]] }), 400, "BAD_REQUEST");
    expectError(await s.as("hamlet").post("/register", { event_types: "message" }), 400, "BAD_REQUEST");
    expectError(await s.as("polonius").post("/register", { all_public_streams: true }), 400, "BAD_REQUEST", "User not authorized for this query");
    expectSuccess(await s.as("hamlet").post("/register", { all_public_streams: true }));
    const ok = expectSuccess(await s.as("hamlet").post("/register", { idle_queue_timeout: 30, narrow: [{ operator: "channel", operand: "Denmark" }] }));
    expect(ok.idle_queue_timeout_secs).toBe(30);
    // include_subscribers takes true, false or the string "partial" (FL 412); the week cap on idle_queue_timeout.
    expectSuccess(await s.as("hamlet").post("/register", { include_subscribers: "partial" }));
    expectSuccess(await s.as("hamlet").post("/register", { include_subscribers: true }));
    expect(expectSuccess(await s.as("hamlet").post("/register", { idle_queue_timeout: 30 * 24 * 3600 })).idle_queue_timeout_secs).toBe(7 * 24 * 3600);
  });

  test("realm_bots: admins see every bot, owners their own, others none", async () => {
    const created = expectSuccess(await s.as("cordelia").post("/bots", { full_name: "Cordelia's bot", short_name: "cordbot" }));
    const own = await register(s.as("cordelia"));
    expect(own.realm_bots.map((b: any) => b.user_id)).toEqual([created.user_id]);
    expect((await register(s.as("iago"))).realm_bots.map((b: any) => b.user_id)).toContain(created.user_id);
    expect((await register(s.as("othello"))).realm_bots).toEqual([]);
  });
});

describe("state + events stay consistent (verifyAction)", () => {
  test("POST /users: realm_user add to everyone", async () => {
    const r = await verifyAction(s, async () => {
      expectSuccess(await s.as("iago").post("/users", { email: "ophelia@zulip.test", password: "ophelia-password", full_name: "Ophelia" }));
    });
    // The new member joins the role groups role:members and role:fullmembers (waiting period 0).
    for (const v of EVERYONE) expect(r.types[v]).toEqual(["realm_user/add", "user_group/add_members", "user_group/add_members"]);
  });

  test("full_name change by an admin reaches everyone", async () => {
    const r = await verifyAction(s, async () => {
      expectSuccess(await s.as("iago").patch(`/users/${s.users.othello.id}`, { full_name: "Othello the Moor" }));
    });
    for (const v of EVERYONE) expect(r.types[v]).toEqual(["realm_user/update"]);
  });

  test("role change: member → administrator → member (realm_bots follow)", async () => {
    const r = await verifyAction(s, async () => {
      expectSuccess(await s.as("desdemona").patch(`/users/${s.users.hamlet.id}`, { role: 200 }));
    });
    expect(r.types.hamlet).toContain("realm_user/update");
    expect(r.types.hamlet).toContain("realm_bot/add");
    expect(r.types.othello).toEqual(["realm_user/update", "user_group/remove_members", "user_group/remove_members", "user_group/add_members"]);
    await verifyAction(s, async () => {
      expectSuccess(await s.as("desdemona").patch(`/users/${s.users.hamlet.id}`, { role: 400 }));
    });
  });

  test("deactivate and reactivate a user", async () => {
    const u = await s.createUser("laertes");
    const r = await verifyAction(s, async () => {
      expectSuccess(await s.as("iago").delete(`/users/${u.id}`));
    });
    for (const v of EVERYONE) expect(r.types[v]).toEqual(["realm_user/update", "user_group/remove_members", "user_group/remove_members"]);
    await verifyAction(s, async () => {
      expectSuccess(await s.as("iago").post(`/users/${u.id}/reactivate`));
    });
  });

  test("bot creation: realm_user to everyone, realm_bot only to the owner and administrators", async () => {
    const r = await verifyAction(s, async () => {
      expectSuccess(await s.as("othello").post("/bots", { full_name: "Othello's bot", short_name: "othbot" }));
    });
    for (const v of EVERYONE) {
      const expected = ["othello", "desdemona", "iago"].includes(v) ? ["realm_user/add", "realm_bot/add"] : ["realm_user/add"];
      expect(r.types[v]).toEqual([...expected, "user_group/add_members", "user_group/add_members"]);
    }
  });

  test("bot API key regeneration: no events since FL 474 (no bot object carries the key)", async () => {
    const bot = expectSuccess(await s.as("othello").post("/bots", { full_name: "Key bot", short_name: "keybot" }));
    const r = await verifyAction(s, async () => {
      expectSuccess(await s.as("othello").post(`/bots/${bot.user_id}/api_key/regenerate`));
    });
    for (const v of EVERYONE) {
      expect(r.types[v]).toEqual([]);
    }
  });

  test("bot deactivation: realm_user update to everyone, no realm_bot update (FL 474); the bot stays in realm_bots", async () => {
    const bot = expectSuccess(await s.as("othello").post("/bots", { full_name: "Gone bot", short_name: "gonebot" }));
    const r = await verifyAction(s, async () => {
      expectSuccess(await s.as("othello").delete(`/bots/${bot.user_id}`));
    });
    const groups = ["user_group/remove_members", "user_group/remove_members"];
    expect(r.types.othello).toEqual(["realm_user/update", ...groups]);
    expect(r.types.hamlet).toEqual(["realm_user/update", ...groups]);
    const state = await register(s.as("othello"));
    expect(state.realm_bots.some((b: any) => b.user_id === bot.user_id)).toBe(true);
    expect(state.realm_non_active_users.find((u: any) => u.user_id === bot.user_id).is_active).toBe(false);
  });

  test("bot reactivation: realm_user update to everyone, no realm_bot update (FL 474)", async () => {
    const bot = expectSuccess(await s.as("othello").post("/bots", { full_name: "Back bot", short_name: "backbot" }));
    expectSuccess(await s.as("othello").delete(`/bots/${bot.user_id}`));
    const r = await verifyAction(s, async () => {
      expectSuccess(await s.as("iago").post(`/users/${bot.user_id}/reactivate`));
    });
    // Back in role:everyone and role:members: two group membership events, as on deactivation.
    const groups = ["user_group/add_members", "user_group/add_members"];
    expect(r.types.othello).toEqual(["realm_user/update", ...groups]);
    expect(r.types.iago).toEqual(["realm_user/update", ...groups]);
    expect(r.types.hamlet).toEqual(["realm_user/update", ...groups]);
  });

  test("first login of an API-created user moves date_joined (FL 475): realm_user update", async () => {
    expectSuccess(await s.as("iago").post("/users", { email: "viola@zulip.test", password: "viola-password", full_name: "Viola" }));
    const r = await verifyAction(s, async () => {
      expectSuccess(await s.anonymous().post("/fetch_api_key", { username: "viola@zulip.test", password: "viola-password" }));
    });
    expect(r.types.hamlet).toEqual(["realm_user/update"]);
    expect(Object.keys(r.events.hamlet[0].person).sort()).toEqual(["date_joined", "user_id"]);
  });

  test("PATCH /settings: user_settings update to the user only", async () => {
    const r = await verifyAction(s, async () => {
      expectSuccess(await s.as("hamlet").patch("/settings", { twenty_four_hour_time: true, emojiset: "twitter", default_language: "de" }));
    });
    expect(r.types.hamlet).toEqual(["user_settings/update", "user_settings/update", "user_settings/update"]);
    expect(r.events.hamlet.find((e) => e.property === "default_language")!.language_name).toBe("Deutsch");
    for (const v of EVERYONE.filter((v) => v !== "hamlet")) expect(r.types[v]).toEqual([]);
    // Unchanged values send nothing.
    const again = await verifyAction(s, async () => {
      expectSuccess(await s.as("hamlet").patch("/settings", { twenty_four_hour_time: true }));
    }, { viewers: ["hamlet"] });
    expect(again.types.hamlet).toEqual([]);
  });

  test("PATCH /settings for a client without user_settings_object: user_settings events only, no legacy ones nor top-level copies (FL 439)", async () => {
    const legacyClient = { client_capabilities: {} };
    const r = await verifyAction(s, async () => {
      expectSuccess(await s.as("othello").patch("/settings", { color_scheme: 2, enable_sounds: false, send_read_receipts: false }));
    }, { viewers: ["othello"], registerParams: legacyClient });
    expect(r.types.othello).toEqual(["user_settings/update", "user_settings/update", "user_settings/update"]);
    // Asking for the legacy types by name gets nothing either.
    const named = await verifyAction(s, async () => {
      expectSuccess(await s.as("othello").patch("/settings", { color_scheme: 1, enable_sounds: true }));
    }, { viewers: ["othello"], registerParams: { ...legacyClient, event_types: ["update_display_settings", "update_global_notifications"] } });
    expect(named.types.othello).toEqual([]);
    const state = await register(s.as("othello"), legacyClient);
    expect(state.color_scheme).toBeUndefined();
    expect(state.enable_sounds).toBeUndefined();
    expect(state.user_settings.color_scheme).toBe(1);
    // Modern clients get no legacy events.
    const modern = await verifyAction(s, async () => {
      expectSuccess(await s.as("othello").patch("/settings", { color_scheme: 3 }));
    }, { viewers: ["othello"] });
    expect(modern.types.othello).toEqual(["user_settings/update"]);
  });

  test("PATCH /settings: full_name and timezone reach everyone as realm_user updates", async () => {
    const r = await verifyAction(s, async () => {
      expectSuccess(await s.as("cordelia").patch("/settings", { full_name: "Cordelia of Britain", timezone: "Europe/London" }));
    });
    expect(r.types.cordelia).toEqual(["user_settings/update", "realm_user/update", "realm_user/update"]);
    expect(r.types.hamlet).toEqual(["realm_user/update", "realm_user/update"]);
  });

  test("PATCH /settings: email_address_visibility — delivery_email to the viewers whose access changed, new_email to everyone when the API email changes", async () => {
    const shiva = s.users.shiva.id;
    const placeholder = `user${shiva}@${new URL(s.url).hostname}`;
    // Everyone → administrators only: members and moderators lose the address; the API email becomes the placeholder.
    const hidden = await verifyAction(s, async () => {
      expectSuccess(await s.as("shiva").patch("/settings", { email_address_visibility: 3 }));
    });
    const people = (v: string) => hidden.events[v].filter((e) => e.type === "realm_user").map((e) => e.person);
    expect(people("hamlet")).toEqual([{ user_id: shiva, delivery_email: null }, { user_id: shiva, new_email: placeholder }]);
    expect(people("iago")).toEqual([{ user_id: shiva, new_email: placeholder }]);
    expect(people("shiva")).toEqual([{ user_id: shiva, new_email: placeholder }]);
    const seen = await register(s.as("hamlet"));
    expect(seen.realm_users.find((u: any) => u.user_id === shiva)).toMatchObject({ delivery_email: null, email: placeholder });
    // Administrators → moderators: only moderators gain it; the API email stays the placeholder.
    const widened = await verifyAction(s, async () => {
      expectSuccess(await s.as("shiva").patch("/settings", { email_address_visibility: 5 }));
    });
    expect(widened.events.hamlet.filter((e) => e.type === "realm_user")).toEqual([]);
    expect(widened.events.iago.filter((e) => e.type === "realm_user")).toEqual([]);
    // Back to everyone: the real address returns as new_email, and delivery_email to those who had lost it.
    const shown = await verifyAction(s, async () => {
      expectSuccess(await s.as("shiva").patch("/settings", { email_address_visibility: 1 }));
    });
    expect(shown.events.hamlet.filter((e) => e.type === "realm_user").map((e) => e.person)).toEqual([{ user_id: shiva, delivery_email: "shiva@zulip.test" }, { user_id: shiva, new_email: "shiva@zulip.test" }]);
  });

  test("PATCH /settings rejects bad values", async () => {
    expectError(await s.as("hamlet").patch("/settings", { color_scheme: 9 }), 400, "BAD_REQUEST", "Invalid color_scheme");
    expectError(await s.as("hamlet").patch("/settings", { default_language: "xx" }), 400, "BAD_REQUEST", "Invalid default_language");
    expectError(await s.as("hamlet").patch("/settings", { timezone: "Mars/Olympus" }), 400, "BAD_REQUEST", "Invalid timezone");
    expectError(await s.as("hamlet").patch("/settings", { old_password: "nope", new_password: "something-new" }), 400, "BAD_REQUEST", "Wrong password!");
  });

  test("a queue that asked only for user_settings events gets nothing else", async () => {
    const state = await register(s.as("hamlet"), { event_types: ["user_settings"] });
    expectSuccess(await s.as("iago").patch(`/users/${s.users.othello.id}`, { full_name: "Othello" }));
    expectSuccess(await s.as("hamlet").patch("/settings", { enter_sends: true }));
    const events = await drainEvents(s.as("hamlet"), state.queue_id);
    expect(events.map((e) => e.type)).toEqual(["user_settings"]);
  });
});

describe("PATCH /realm/user_settings_defaults", () => {
  test("administrators change what new users start with; everyone gets the update; existing users keep theirs", async () => {
    const settingOf = async (who: "cordelia") => expectSuccess(await s.as(who).post("/register", { fetch_event_types: ["user_settings"] })).user_settings;
    const before = (await settingOf("cordelia")).twenty_four_hour_time;
    const r = await verifyAction(s, () => s.as("iago").patch("/realm/user_settings_defaults", { twenty_four_hour_time: !before, email_address_visibility: 3 }), {
      viewers: ["iago", "hamlet"],
    });
    expect(r.types.hamlet).toEqual(["realm_user_settings_defaults/update", "realm_user_settings_defaults/update"]);
    expectError(await s.as("hamlet").patch("/realm/user_settings_defaults", { twenty_four_hour_time: false }), 400, "UNAUTHORIZED_PRINCIPAL");
    expectError(await s.as("iago").patch("/realm/user_settings_defaults", { email_address_visibility: 9 }), 400, "BAD_REQUEST");
    const fresh = await s.createUser("newcomer");
    const state = expectSuccess(await s.as(fresh).post("/register", { fetch_event_types: ["user_settings"] }));
    expect(state.user_settings.twenty_four_hour_time).toBe(!before);
    expect(state.user_settings.email_address_visibility).toBe(3);
    expect((await settingOf("cordelia")).twenty_four_hour_time).toBe(before);
  });
});
