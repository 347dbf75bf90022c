import type { Hearth } from "../context";
import { ApiError, badRequest } from "../errors";
import { ApiRoutes } from "../http/route";
import { param } from "../http/params";

/**
 * The legacy push-token endpoints the Zulip mobile app calls below feature level 468.
 * Hearth has no push notification service (`push_notifications_enabled: false`), so
 * tokens are validated and stored, acknowledged, and used for nothing yet.
 */
type TokenKind = "apns" | "fcm";

const MAX_TOKEN_LENGTH = 4096;
const deviceNotRecognized = () => new ApiError("Device not recognized", "INVALID_PUSH_DEVICE_TOKEN", 400);

function checkToken(kind: TokenKind, token: string): string {
  const t = token.trim();
  if (t === "" || t.length > MAX_TOKEN_LENGTH) throw badRequest("Empty or invalid length token");
  if (kind === "apns" && !/^([0-9a-fA-F]{2})+$/.test(t)) throw badRequest("Invalid APNS token");
  return t;
}

export function pushRoutes(h: Hearth) {
  const register = (kind: TokenKind) => async (userId: number, token: string, appid: string | null) => {
    const t = checkToken(kind, token);
    if (appid !== null && !/^[.a-zA-Z0-9-]+$/.test(appid)) throw badRequest("Invalid app ID");
    await h.store.commit(() => h.store.dbs.pushDevices.put([userId, kind, t], { appid, registered: Math.floor(Date.now() / 1000) }));
    return {};
  };
  const remove = (kind: TokenKind) => async (userId: number, token: string) => {
    const t = checkToken(kind, token);
    await h.store.commit(() => {
      if (h.store.dbs.pushDevices.get([userId, kind, t]) === undefined) throw deviceNotRecognized();
      h.store.dbs.pushDevices.remove([userId, kind, t]);
    });
    return {};
  };
  return new ApiRoutes(h)
    .post("/users/me/apns_device_token", { params: { token: param.string(), appid: param.string() } }, ({ user, params }) =>
      register("apns")(user.id, params.token, params.appid),
    )
    .delete("/users/me/apns_device_token", { params: { token: param.string() } }, ({ user, params }) => remove("apns")(user.id, params.token))
    .post("/users/me/android_gcm_reg_id", { params: { token: param.string() } }, ({ user, params }) =>
      register("fcm")(user.id, params.token, null),
    )
    .delete("/users/me/android_gcm_reg_id", { params: { token: param.string() } }, ({ user, params }) => remove("fcm")(user.id, params.token));
}
