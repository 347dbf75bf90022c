import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiClient, expectError, expectSchema, expectSuccess, MOBILE_APP_CAPABILITIES, PASSWORD, startTestServer, type TestServer } from "../kit";
import { drainEvents } from "../kit/events";
import { RegisterResponse } from "../../src/schemas/register";
import { ServerSettingsResponse } from "../../src/schemas/users";
import { MOBILE_IDLE_QUEUE_TIMEOUT_SECS } from "../../src/events/queue_limits";
import { createHash } from "node:crypto";

/**
 * The Zulip mobile app's calls at feature level 508, over HTTP in its order: server
 * settings, login, register, device registration, E2EE push registration (whose error
 * it ignores), and the device's removal at logout (FL 470).
 */
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

describe("the mobile app at FL 508", () => {
  test("server settings: level 508 with a 13.0 development version; no push service", async () => {
    const settings = expectSuccess(await s.anonymous().get("/server_settings"));
    expectSchema(ServerSettingsResponse, settings);
    expect(settings.zulip_feature_level).toBe(508);
    expect(settings.service_feature_level).toBe(508);
    expect(settings.zulip_version).toStartWith("13.0-dev");
    expect(settings.zulip_merge_base).toStartWith("13.0-dev");
    expect(settings.push_notifications_enabled).toBe(false);
    expect(settings.authentication_methods.discord).toBe(false);
  });

  test("login, register, device, push registration, logout", async () => {
    // Login.
    const { api_key, email } = expectSuccess(await s.anonymous().post("/fetch_api_key", { username: s.users.hamlet.email, password: PASSWORD }));
    const app = new ApiClient(s.url, email, api_key);
    // Register as the app does.
    const state = expectSuccess(
      await app.post("/register", { apply_markdown: true, client_gravatar: false, slim_presence: true, client_capabilities: MOBILE_APP_CAPABILITIES, idle_queue_timeout: '"mobile"' }),
    );
    expectSchema(RegisterResponse, state);
    expect(state.zulip_feature_level).toBe(508);
    expect(state.idle_queue_timeout_secs).toBe(MOBILE_IDLE_QUEUE_TIMEOUT_SECS);
    expect(state.devices).toEqual({});
    expect(state.realm_uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    for (const key of ["push_devices", "realm_is_zephyr_mirror_realm", "giphy_rating_options", "realm_giphy_rating"]) expect(key in state).toBe(false);
    expect(state).toMatchObject({ tenor_api_key: "", klipy_api_key: "", has_webex_token: false, realm_gif_rating_policy: 0, realm_media_preview_size: 100 });
    // Settings of features Hearth lacks, with Zulip's defaults (FL 409, 416, 434, 438, 456, 477).
    expect(state).toMatchObject({
      realm_require_e2ee_push_notifications: false,
      realm_welcome_message_custom_text: "",
      realm_send_channel_events_messages: true,
      realm_owner_full_content_access: false,
      realm_default_avatar_source: "G",
      realm_workplace_users_group: expect.any(Number),
    });
    // No stored device ID yet: the app registers one.
    const { device_id } = expectSuccess(await app.post("/register_client_device"));
    // E2EE push registration: both groups at first; the server has no push service.
    const push = { device_id, push_key_id: 123456, push_key: Buffer.concat([Buffer.from([0x31]), Buffer.alloc(32, 7)]).toString("base64"), token_kind: "fcm", token_id: "AAAAAAAAAAA=", bouncer_public_key: "key", encrypted_push_registration: "sealed" };
    expectError(await app.post("/mobile_push/register", push), 400, "PUSH_SERVICE_NOT_CONFIGURED", "Server is not configured to use push notification service.");
    // The queue got the device as the app applies it.
    const events = await drainEvents(app, state.queue_id);
    expect(events.map((e) => [e.type, e.op, e.device_id])).toEqual([["device", "add", device_id]]);
    const again = expectSuccess(await app.post("/register", { fetch_event_types: ["device"] }));
    expect(again.devices).toEqual({
      [String(device_id)]: { push_key_id: null, push_token_id: null, pending_push_token_id: null, push_token_last_updated_timestamp: null, push_registration_error_code: null },
    });
    // Logout: the device goes, then the queue.
    expectSuccess(await app.post("/remove_client_device", { device_id }));
    expect((await drainEvents(app, state.queue_id)).map((e) => [e.type, e.op, e.device_id])).toEqual([
      ["device", "add", device_id],
      ["device", "remove", device_id],
    ]);
    expectSuccess(await app.delete("/events", { queue_id: state.queue_id }));
    expectSuccess(await app.delete("/events", { queue_id: again.queue_id }));
  });

  test("is_moderator is true for administrators and owners (FL 380)", async () => {
    for (const [who, expected] of [["desdemona", true], ["iago", true], ["shiva", true], ["hamlet", false], ["polonius", false]] as const) {
      expect(expectSuccess(await s.as(who).post("/register", { fetch_event_types: ["realm_user"] })).is_moderator).toBe(expected);
    }
  });
});

describe("PATCH /messages/{id} prev_content_sha256 (FL 379)", () => {
  test("an edit from content someone else changed since is refused; the current content's hash edits", async () => {
    const channel = await s.createChannel("hamlet", "Edits", ["hamlet"]);
    const id = expectSuccess(await s.as("hamlet").post("/messages", { type: "channel", to: channel, topic: "t", content: "first draft" })).id;
    const sha = (text: string) => createHash("sha256").update(text).digest("hex");
    expectError(
      await s.as("hamlet").patch(`/messages/${id}`, { content: "second", prev_content_sha256: sha("something else") }),
      400,
      "EXPECTATION_MISMATCH",
      "'prev_content_sha256' value does not match the expected value.",
    );
    expect(expectSuccess(await s.as("hamlet").get(`/messages/${id}`, { apply_markdown: false })).message.content).toBe("first draft");
    expectSuccess(await s.as("hamlet").patch(`/messages/${id}`, { content: "second", prev_content_sha256: sha("first draft") }));
    // Topic moves check it too.
    expectError(await s.as("hamlet").patch(`/messages/${id}`, { topic: "moved", prev_content_sha256: sha("first draft") }), 400, "EXPECTATION_MISMATCH");
    expectSuccess(await s.as("hamlet").patch(`/messages/${id}`, { topic: "moved", prev_content_sha256: sha("second") }));
  });
});

describe("user settings", () => {
  test("twenty_four_hour_time may be null, the locale's default (FL 408)", async () => {
    const user = await s.createUser("clockwatcher");
    expectSuccess(await s.as(user).patch("/settings", { twenty_four_hour_time: null }));
    expect(expectSuccess(await s.as(user).post("/register", { fetch_event_types: ["user_settings"] })).user_settings.twenty_four_hour_time).toBeNull();
    expectSuccess(await s.as(user).patch("/settings", { twenty_four_hour_time: true }));
    expect(expectSuccess(await s.as(user).post("/register", { fetch_event_types: ["user_settings"] })).user_settings.twenty_four_hour_time).toBe(true);
  });
});

describe("users", () => {
  test("GET /users?user_ids restricts the list (FL 384); users carry is_imported_stub false (FL 433)", async () => {
    const { hamlet, iago } = s.users;
    const some = expectSuccess(await s.as("othello").get("/users", { user_ids: [iago.id, hamlet.id, 999999] })).members;
    expect(some.map((u: any) => u.user_id).sort((a: number, b: number) => a - b)).toEqual([hamlet.id, iago.id].sort((a, b) => a - b));
    expect(some.every((u: any) => u.is_imported_stub === false)).toBe(true);
    expect(expectSuccess(await s.as("othello").get("/users")).members.length).toBeGreaterThan(2);
  });
});

describe("POST /users/{user_id}/status (FL 407, 473)", () => {
  test("an administrator sets another user's status: user_status to everyone; members and member bots may not", async () => {
    const { verifyAction } = await import("../kit/events");
    const r = await verifyAction(s, async () => expectSuccess(await s.as("iago").post(`/users/${s.users.cordelia.id}/status`, { status_text: "On leave", emoji_name: "palm_tree" })), {
      viewers: ["cordelia", "othello"],
    });
    expect(r.events.othello).toMatchObject([{ type: "user_status", user_id: s.users.cordelia.id, status_text: "On leave", emoji_name: "palm_tree" }]);
    expect(expectSuccess(await s.as("othello").get(`/users/${s.users.cordelia.id}/status`)).status).toMatchObject({ status_text: "On leave" });
    expectError(await s.as("hamlet").post(`/users/${s.users.cordelia.id}/status`, { status_text: "x" }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    const bot = await s.createBot("iago", { full_name: "Status bot", short_name: "statusbot" });
    expectError(await s.as(bot).post(`/users/${s.users.cordelia.id}/status`, { status_text: "x" }), 400, "UNAUTHORIZED_PRINCIPAL");
    // An administrator bot may (FL 473).
    expectSuccess(await s.as("iago").patch(`/bots/${bot.id}`, { role: 200 }));
    expectSuccess(await s.as(bot).post(`/users/${s.users.cordelia.id}/status`, { status_text: "Back soon" }));
    expect(expectSuccess(await s.as("othello").get(`/users/${s.users.cordelia.id}/status`)).status.status_text).toBe("Back soon");
    expectError(await s.as("iago").post(`/users/999999/status`, { status_text: "x" }), 400, "BAD_REQUEST");
  });
});
