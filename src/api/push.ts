import type { Hearth } from "../context";
import { ApiRoutes } from "../http/route";
import { param } from "../http/params";
import { checkTestNotificationTarget, doRegisterPushToken, doRemovePushToken } from "../actions/push_devices";

/** The legacy push-token endpoints the Zulip mobile app calls below feature level 468, and their test notification. */
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
    });
}
