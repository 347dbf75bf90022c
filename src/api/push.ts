import type { Hearth } from "../context";
import { ApiRoutes } from "../http/route";
import { param } from "../http/params";
import { checkTestNotificationTarget, doRegisterPushToken, doRemovePushToken } from "../actions/push_devices";
import { checkE2eeTestNotification, checkPushRegistration, doRegisterClientDevice, doRemoveClientDevice } from "../actions/client_devices";

/**
 * The legacy push-token endpoints the Zulip mobile app calls below feature level 468,
 * and their test notification; the device endpoints it calls from 468 (470 for
 * removal) and their E2EE push registration and test notification.
 */
export function pushRoutes(h: Hearth) {
  return new ApiRoutes(h)
    .post("/users/me/apns_device_token", { params: { token: param.string(), appid: param.string() } }, async ({ user, params }) => {
      await doRegisterPushToken(h, user, "apns", params.token, params.appid);
      return {};
    })
    .delete("/users/me/apns_device_token", { params: { token: param.string() } }, async ({ user, params }) => {
      await doRemovePushToken(h, user, "apns", params.token);
      return {};
    })
    .post("/users/me/android_gcm_reg_id", { params: { token: param.string() } }, async ({ user, params }) => {
      await doRegisterPushToken(h, user, "fcm", params.token, null);
      return {};
    })
    .delete("/users/me/android_gcm_reg_id", { params: { token: param.string() } }, async ({ user, params }) => {
      await doRemovePushToken(h, user, "fcm", params.token);
      return {};
    })
    .post("/mobile_push/test_notification", { params: { token: param.string().optional() } }, ({ user, params }) => {
      checkTestNotificationTarget(h, user, params.token);
      return {};
    })
    .post("/register_client_device", {}, async ({ user }) => ({ device_id: await doRegisterClientDevice(h, user) }))
    .post("/remove_client_device", { params: { device_id: param.int() } }, async ({ user, params }) => {
      await doRemoveClientDevice(h, user, params.device_id);
      return {};
    })
    .post(
      "/mobile_push/register",
      {
        params: {
          device_id: param.int(),
          push_key_id: param.int().optional(),
          push_key: param.string().optional(),
          token_kind: param.string().optional(),
          token_id: param.string().optional(),
          bouncer_public_key: param.string().optional(),
          encrypted_push_registration: param.string().optional(),
        },
      },
      ({ user }) => checkPushRegistration(user),
    )
    .post("/mobile_push/e2ee/test_notification", { params: { device_id: param.int().optional() } }, ({ user }) => checkE2eeTestNotification(user));
}
