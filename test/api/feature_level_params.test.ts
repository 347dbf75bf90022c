/**
 * Parameters of feature levels 444, 447 and 459, over HTTP: a bot's new short name
 * (its new address, with Zulip's events), and the requests Hearth refuses rather than
 * half-does (bulk settings for other users, deleting a user's messages on deactivation).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectSuccess, startTestServer, type TestServer } from "../kit";
import { verifyAction } from "../kit/events";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

describe("PATCH /bots/{bot_id} short_name (FL 447)", () => {
  test("a new short name gives the bot a new address: realm_user updates to everyone, the owner and administrators see the real one", async () => {
    const bot = await s.createBot("hamlet", { full_name: "Yorick", short_name: "yorick" });
    expect(bot.email).toStartWith("yorick-bot@");
    const r = await verifyAction(s, async () => expectSuccess(await s.as("hamlet").patch(`/bots/${bot.id}`, { short_name: "skull" })));
    const domain = bot.email.split("@")[1];
    for (const who of ["hamlet", "iago", "othello", "polonius"] as const) {
      expect(r.events[who].filter((e: any) => e.type === "realm_user" && e.person.new_email).map((e: any) => e.person.new_email)).toEqual([`skull-bot@${domain}`]);
      // FL 474: the address is not in realm_bot events any more.
      expect(r.types[who]).not.toContain("realm_bot/update");
    }
    expect(expectSuccess(await s.as("othello").get(`/users/${bot.id}`)).user.email).toBe(`skull-bot@${domain}`);
    // The bot signs in with its new address and the same key.
    expectSuccess(await s.as({ ...bot, email: `skull-bot@${domain}` }).get("/users/me"));
  });

  test("refusals: a short name another account holds, a bad short name, someone else's bot", async () => {
    const bot = await s.createBot("hamlet", { full_name: "Osric", short_name: "osric" });
    await s.createBot("hamlet", { full_name: "Reynaldo", short_name: "reynaldo" });
    expectError(await s.as("hamlet").patch(`/bots/${bot.id}`, { short_name: "reynaldo" }), 400, "BAD_REQUEST", "Username already in use");
    expectError(await s.as("hamlet").patch(`/bots/${bot.id}`, { short_name: "no spaces" }), 400, "BAD_REQUEST", "Bad name or username");
    expectError(await s.as("othello").patch(`/bots/${bot.id}`, { short_name: "othello-owned" }), 400, "UNAUTHORIZED_PRINCIPAL");
    expect(expectSuccess(await s.as("hamlet").get(`/users/${bot.id}`)).user.email).toStartWith("osric-bot@");
    // The same short name again changes nothing and is fine.
    expectSuccess(await s.as("hamlet").patch(`/bots/${bot.id}`, { short_name: "osric" }));
  });
});

describe("PATCH /settings target_users (FL 444)", () => {
  test("refused, and the caller's own settings are left as they were", async () => {
    const before = expectSuccess(await s.as("iago").post("/register", { fetch_event_types: ["user_settings"] })).user_settings.enter_sends;
    expectError(
      await s.as("iago").patch("/settings", { enter_sends: !before, target_users: JSON.stringify({ user_ids: [s.users.hamlet.id], skip_if_already_edited: false }) }),
      400,
      "BAD_REQUEST",
      /target_users/,
    );
    expect(expectSuccess(await s.as("iago").post("/register", { fetch_event_types: ["user_settings"] })).user_settings.enter_sends).toBe(before);
    expect(expectSuccess(await s.as("hamlet").post("/register", { fetch_event_types: ["user_settings"] })).user_settings.enter_sends).toBe(false);
  });
});

describe("DELETE /users/{user_id} actions (FL 459)", () => {
  test("all actions false deactivates as before; any deletion asked for is refused and the user stays active", async () => {
    const doomed = await s.createUser("laertes");
    const keep = await s.createUser("fortinbras");
    expectError(await s.as("iago").delete(`/users/${keep.id}`, { actions: JSON.stringify({ delete_direct_messages: true }) }), 400, "BAD_REQUEST", /delete_direct_messages/);
    expectError(await s.as("iago").delete(`/users/${keep.id}`, { actions: JSON.stringify({ delete_everything: true }) }), 400, "BAD_REQUEST");
    expect(expectSuccess(await s.as("iago").get(`/users/${keep.id}`)).user.is_active).toBe(true);
    const off = JSON.stringify({ delete_profile: false, delete_public_channel_messages: false, delete_private_channel_messages: false, delete_direct_messages: false });
    expectSuccess(await s.as("iago").delete(`/users/${doomed.id}`, { actions: off }));
    expect(expectSuccess(await s.as("iago").get(`/users/${doomed.id}`)).user.is_active).toBe(false);
  });
});

describe("bot objects (FL 474)", () => {
  test("realm_bots and realm_bot/add carry only the ID, the defaults and the services; the key comes from GET /bots/{id}/api_key", async () => {
    let bot: Awaited<ReturnType<TestServer["createBot"]>> | undefined;
    const r = await verifyAction(s, async () => void (bot = await s.createBot("othello", { full_name: "Trim", short_name: "trim" })));
    const keys = ["default_all_public_streams", "default_events_register_stream", "default_sending_stream", "services", "user_id"];
    for (const who of ["othello", "iago"] as const) {
      const added = r.events[who].find((e: any) => e.type === "realm_bot" && e.op === "add");
      expect(Object.keys(added!.bot).sort()).toEqual(keys);
      const listed = expectSuccess(await s.as(who).post("/register", { fetch_event_types: ["realm_bot"] })).realm_bots.find((b: any) => b.user_id === bot!.id);
      expect(Object.keys(listed).sort()).toEqual(keys);
    }
    expect(r.types.hamlet).not.toContain("realm_bot/add");
    expect(expectSuccess(await s.as("othello").get(`/bots/${bot!.id}/api_key`)).api_key).toBe(bot!.apiKey);
    // A new name reaches realm_user only.
    const renamed = await verifyAction(s, async () => expectSuccess(await s.as("othello").patch(`/bots/${bot!.id}`, { full_name: "Trimmed" })));
    expect(renamed.types.othello).toEqual(["realm_user/update"]);
    expect(renamed.types.iago).toEqual(["realm_user/update"]);
  });
});

describe("web_home_view \"recent\" (FL 454)", () => {
  test("the older \"recent_topics\" is taken and becomes \"recent\": in the events, in register, in the organization's defaults", async () => {
    const r = await verifyAction(s, async () => expectSuccess(await s.as("hamlet").patch("/settings", { web_home_view: "recent_topics" })), { viewers: ["hamlet"] });
    expect(r.events.hamlet.map((e: any) => [e.type, e.property, e.value])).toEqual([["user_settings", "web_home_view", "recent"]]);
    expect(expectSuccess(await s.as("hamlet").post("/register", { fetch_event_types: ["user_settings"] })).user_settings.web_home_view).toBe("recent");
    // The same value again in either spelling changes nothing.
    const again = await verifyAction(s, async () => expectSuccess(await s.as("hamlet").patch("/settings", { web_home_view: "recent" })), { viewers: ["hamlet"] });
    expect(again.types.hamlet).toEqual([]);
    const defaults = await verifyAction(s, async () => expectSuccess(await s.as("iago").patch("/realm/user_settings_defaults", { web_home_view: "recent_topics" })), { viewers: ["iago", "hamlet"] });
    expect(defaults.events.hamlet.map((e: any) => e.value)).toEqual(["recent"]);
    expect(expectSuccess(await s.as("hamlet").post("/register", { fetch_event_types: ["realm_user_settings_defaults"] })).realm_user_settings_defaults.web_home_view).toBe("recent");
    expectError(await s.as("hamlet").patch("/settings", { web_home_view: "recent_conversations" }), 400, "BAD_REQUEST");
  });
});
