import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectSuccess, startTestServer, type TestServer } from "../kit";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

describe("legacy push device tokens (what the mobile app calls below FL 468)", () => {
  test("server_settings says push delivery is off", async () => {
    expect(expectSuccess(await s.anonymous().get("/server_settings")).push_notifications_enabled).toBe(false);
  });

  test("FCM: register, re-register, remove; removing twice is INVALID_PUSH_DEVICE_TOKEN", async () => {
    expectSuccess(await s.as("hamlet").post("/users/me/android_gcm_reg_id", { token: "fcm-token-1" }));
    expectSuccess(await s.as("hamlet").post("/users/me/android_gcm_reg_id", { token: "fcm-token-1" }));
    expectError(await s.as("othello").delete("/users/me/android_gcm_reg_id", { token: "fcm-token-1" }), 400, "INVALID_PUSH_DEVICE_TOKEN", "Device not recognized");
    expectSuccess(await s.as("hamlet").delete("/users/me/android_gcm_reg_id", { token: "fcm-token-1" }));
    expectError(await s.as("hamlet").delete("/users/me/android_gcm_reg_id", { token: "fcm-token-1" }), 400, "INVALID_PUSH_DEVICE_TOKEN");
  });

  test("APNs tokens are hex and need an app ID", async () => {
    expectSuccess(await s.as("hamlet").post("/users/me/apns_device_token", { token: "c0ffee", appid: "org.zulip.Zulip" }));
    expectError(await s.as("hamlet").post("/users/me/apns_device_token", { token: "xyz", appid: "org.zulip.Zulip" }), 400, "BAD_REQUEST", "Invalid APNS token");
    expectError(await s.as("hamlet").post("/users/me/apns_device_token", { token: "c0ffee", appid: "bad app!" }), 400, "BAD_REQUEST", "Invalid app ID");
    expectError(await s.as("hamlet").post("/users/me/apns_device_token", { token: "", appid: "x" }), 400, "BAD_REQUEST", "Empty or invalid length token");
    expectSuccess(await s.as("hamlet").delete("/users/me/apns_device_token", { token: "c0ffee" }));
  });

  test("test notification: a device of the caller's, or all of them; an unknown token is INVALID_PUSH_DEVICE_TOKEN", async () => {
    expectSuccess(await s.as("iago").post("/users/me/android_gcm_reg_id", { token: "fcm-iago" }));
    expectSuccess(await s.as("iago").post("/users/me/apns_device_token", { token: "beef", appid: "org.zulip.Zulip" }));
    expectSuccess(await s.as("iago").post("/mobile_push/test_notification", { token: "fcm-iago" }));
    expectSuccess(await s.as("iago").post("/mobile_push/test_notification", { token: "beef" }));
    expectSuccess(await s.as("iago").post("/mobile_push/test_notification"));
    // Another user's device, one removed, one never registered.
    expectError(await s.as("othello").post("/mobile_push/test_notification", { token: "fcm-iago" }), 400, "INVALID_PUSH_DEVICE_TOKEN", "Device not recognized");
    expectSuccess(await s.as("iago").delete("/users/me/android_gcm_reg_id", { token: "fcm-iago" }));
    expectError(await s.as("iago").post("/mobile_push/test_notification", { token: "fcm-iago" }), 400, "INVALID_PUSH_DEVICE_TOKEN", "Device not recognized");
    expectError(await s.as("iago").post("/mobile_push/test_notification", { token: "never" }), 400, "INVALID_PUSH_DEVICE_TOKEN");
  });

  test("bots have no mobile devices: every push endpoint refuses them, as Zulip's human_users_only does", async () => {
    const bot = await s.createBot("hamlet", { full_name: "Push bot", short_name: "pushbot" });
    const refusal = "This endpoint does not accept bot requests.";
    expectError(await s.as(bot).post("/users/me/android_gcm_reg_id", { token: "fcm-bot" }), 400, "BAD_REQUEST", refusal);
    expectError(await s.as(bot).post("/users/me/apns_device_token", { token: "c0ffee", appid: "org.zulip.Zulip" }), 400, "BAD_REQUEST", refusal);
    expectError(await s.as(bot).delete("/users/me/android_gcm_reg_id", { token: "fcm-bot" }), 400, "BAD_REQUEST", refusal);
    expectError(await s.as(bot).post("/mobile_push/test_notification"), 400, "BAD_REQUEST", refusal);
  });
});
