import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiClient, expectError, expectSuccess, startTestServer, type TestServer } from "../kit";
import { register, verifyAction } from "../kit/events";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const NO_PUSH = {
  push_key_id: null,
  push_token_id: null,
  pending_push_token_id: null,
  push_token_last_updated_timestamp: null,
  push_registration_error_code: null,
};

describe("client devices (FL 468/470)", () => {
  test("register_client_device: device add to the caller alone; register's devices lists it with null push fields", async () => {
    let deviceId = 0;
    const r = await verifyAction(
      s,
      async () => {
        deviceId = expectSuccess(await s.as("hamlet").post("/register_client_device")).device_id;
      },
      { viewers: ["hamlet", "othello"] },
    );
    expect(Number.isInteger(deviceId)).toBe(true);
    expect(r.events.hamlet).toEqual([expect.objectContaining({ type: "device", op: "add", device_id: deviceId })]);
    expect(r.types.othello).toEqual([]);
    const state = await register(s.as("hamlet"));
    expect(state.devices[String(deviceId)]).toEqual(NO_PUSH);
    expect((await register(s.as("othello"))).devices).toEqual({});
  });

  test("remove_client_device: device remove to the caller; another user's or an unknown ID is \"Invalid `device_id`\"", async () => {
    const deviceId = expectSuccess(await s.as("cordelia").post("/register_client_device")).device_id;
    expectError(await s.as("othello").post("/remove_client_device", { device_id: deviceId }), 400, "BAD_REQUEST", "Invalid `device_id`");
    expectError(await s.as("cordelia").post("/remove_client_device", { device_id: 999999 }), 400, "BAD_REQUEST", "Invalid `device_id`");
    expectError(await s.as("cordelia").post("/remove_client_device"), 400, "REQUEST_VARIABLE_MISSING");
    const r = await verifyAction(s, () => s.as("cordelia").post("/remove_client_device", { device_id: deviceId }).then(expectSuccess), { viewers: ["cordelia", "hamlet"] });
    expect(r.events.cordelia).toEqual([expect.objectContaining({ type: "device", op: "remove", device_id: deviceId })]);
    expect(r.types.hamlet).toEqual([]);
    expect((await register(s.as("cordelia"))).devices).toEqual({});
    expectError(await s.as("cordelia").post("/remove_client_device", { device_id: deviceId }), 400, "BAD_REQUEST", "Invalid `device_id`");
  });

  test("a register that does not ask for devices leaves them out; device IDs are distinct", async () => {
    const a = expectSuccess(await s.as("shiva").post("/register_client_device")).device_id;
    const b = expectSuccess(await s.as("shiva").post("/register_client_device")).device_id;
    expect(a).not.toBe(b);
    const partial = expectSuccess(await s.as("shiva").post("/register", { fetch_event_types: ["realm_user"] }));
    expect("devices" in partial).toBe(false);
    const withDevices = expectSuccess(await s.as("shiva").post("/register", { fetch_event_types: ["device"] }));
    expect(Object.keys(withDevices.devices).sort()).toEqual([String(a), String(b)].sort());
  });
});

describe("E2EE push registration without a push service", () => {
  test("mobile_push/register answers Zulip's PUSH_SERVICE_NOT_CONFIGURED, with or without key and token groups", async () => {
    const deviceId = expectSuccess(await s.as("hamlet").post("/register_client_device")).device_id;
    const msg = "Server is not configured to use push notification service.";
    const keyGroup = { push_key_id: 2408, push_key: "MTaUDJDMWypQ1WufZ1NRTHSSvgYtXh1qVNSjN3aBiEFt" };
    const tokenGroup = { token_kind: "fcm", token_id: "hGsEWGmyyfI=", bouncer_public_key: "bouncer-key", encrypted_push_registration: "ciphertext" };
    expectError(await s.as("hamlet").post("/mobile_push/register", { device_id: deviceId, ...keyGroup, ...tokenGroup }), 400, "PUSH_SERVICE_NOT_CONFIGURED", msg);
    expectError(await s.as("hamlet").post("/mobile_push/register", { device_id: deviceId, ...keyGroup }), 400, "PUSH_SERVICE_NOT_CONFIGURED", msg);
    // Checked before the device: upstream looks at the push service first.
    expectError(await s.as("hamlet").post("/mobile_push/register", { device_id: 999999, ...tokenGroup }), 400, "PUSH_SERVICE_NOT_CONFIGURED", msg);
    expectError(await s.as("hamlet").post("/mobile_push/register", keyGroup), 400, "REQUEST_VARIABLE_MISSING");
    // Nothing was registered: the device's push fields stay null.
    expect((await register(s.as("hamlet"))).devices[String(deviceId)]).toEqual(NO_PUSH);
  });

  test("mobile_push/e2ee/test_notification: no device has an active registration", async () => {
    const deviceId = expectSuccess(await s.as("iago").post("/register_client_device")).device_id;
    expectError(await s.as("iago").post("/mobile_push/e2ee/test_notification"), 400, "NO_ACTIVE_PUSH_DEVICE", "No active registered push device");
    expectError(await s.as("iago").post("/mobile_push/e2ee/test_notification", { device_id: deviceId }), 400, "NO_ACTIVE_PUSH_DEVICE", "No active registered push device");
  });

  test("bots: devices may be registered, push registration and test notifications are refused (human_users_only)", async () => {
    const bot = await s.createBot("hamlet", { full_name: "Device bot", short_name: "devicebot" });
    const deviceId = expectSuccess(await s.as(bot).post("/register_client_device")).device_id;
    const refusal = "This endpoint does not accept bot requests.";
    expectError(await s.as(bot).post("/mobile_push/register", { device_id: deviceId }), 400, "BAD_REQUEST", refusal);
    expectError(await s.as(bot).post("/mobile_push/e2ee/test_notification"), 400, "BAD_REQUEST", refusal);
    expectSuccess(await s.as(bot).post("/remove_client_device", { device_id: deviceId }));
  });
});

describe("API key regeneration (FL 492)", () => {
  test("clears the user's push registrations: legacy tokens go, devices stay, no device event without a change", async () => {
    const user = await s.createUser("rosalind");
    const client = s.as(user);
    const deviceId = expectSuccess(await client.post("/register_client_device")).device_id;
    expectSuccess(await client.post("/users/me/android_gcm_reg_id", { token: "fcm-rosalind" }));
    const before = await register(client);
    const newKey = expectSuccess(await client.post("/users/me/api_key/regenerate")).api_key;
    const fresh = new ApiClient(s.url, user.email, newKey);
    // The old key's queue still drains: nothing about devices was sent, no push field changed.
    const events = expectSuccess(await fresh.get("/events", { queue_id: before.queue_id, last_event_id: -1, dont_block: true })).events;
    expect(events.filter((e: any) => e.type === "device")).toEqual([]);
    expect((await register(fresh)).devices).toEqual({ [String(deviceId)]: NO_PUSH });
    expectError(await fresh.delete("/users/me/android_gcm_reg_id", { token: "fcm-rosalind" }), 400, "INVALID_PUSH_DEVICE_TOKEN", "Device not recognized");
  });
});
