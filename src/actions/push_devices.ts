import type { Hearth } from "../context";
import { ApiError, badRequest, botRequestRefused } from "../errors";
import type { UserRecord } from "../store/users";
import { commit } from "../events/commit";
import { getPushDevice, putPushDevice, removePushDevice, type PushTokenKind } from "../store/push_devices";

/**
 * Legacy push-token registration (what the Zulip mobile app calls below feature
 * level 468). Hearth has no push service (`push_notifications_enabled: false`), so
 * tokens are validated and stored for when it has one; no events concern them.
 */

const MAX_TOKEN_LENGTH = 4096;
const deviceNotRecognized = () => new ApiError("Device not recognized", "INVALID_PUSH_DEVICE_TOKEN", 400);

function checkToken(kind: PushTokenKind, token: string): string {
  const t = token.trim();
  if (t === "" || t.length > MAX_TOKEN_LENGTH) throw badRequest("Empty or invalid length token");
  if (kind === "apns" && !/^([0-9a-fA-F]{2})+$/.test(t)) throw badRequest("Invalid APNS token");
  return t;
}

/** Zulip's `human_users_only`: bots have no mobile devices. */
function checkHuman(user: UserRecord): void {
  if (user.is_bot) throw botRequestRefused();
}

export async function doRegisterPushToken(h: Hearth, user: UserRecord, kind: PushTokenKind, token: string, appid: string | null): Promise<void> {
  checkHuman(user);
  const t = checkToken(kind, token);
  if (appid !== null && !/^[.a-zA-Z0-9-]+$/.test(appid)) throw badRequest("Invalid app ID");
  await commit(h, () => putPushDevice(h.store, user.id, kind, { token: t, appid, registered: Math.floor(Date.now() / 1000) }));
}

export async function doRemovePushToken(h: Hearth, user: UserRecord, kind: PushTokenKind, token: string): Promise<void> {
  checkHuman(user);
  const t = checkToken(kind, token);
  await commit(h, () => {
    if (getPushDevice(h.store, user.id, kind, t) === undefined) throw deviceNotRecognized();
    removePushDevice(h.store, user.id, kind, t);
  });
}

/**
 * POST /mobile_push/test_notification: the user's device with this token (of either
 * kind), or all of their devices. As on a Zulip server without a push service, the
 * request succeeds and nothing is delivered while `push_notifications_enabled` is
 * false; an unknown token is refused as Zulip refuses it.
 */
export function checkTestNotificationTarget(h: Hearth, user: UserRecord, token: string | undefined): void {
  checkHuman(user);
  if (token === undefined) return;
  const t = token.trim();
  const known = (["apns", "fcm"] as const).some((kind) => getPushDevice(h.store, user.id, kind, t) !== undefined);
  if (!known) throw deviceNotRecognized();
}
