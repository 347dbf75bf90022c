import type { Hearth } from "../context";
import { ApiError, badRequest, botRequestRefused } from "../errors";
import type { UserRecord } from "../store/users";
import { commit, type Transaction } from "../events/commit";
import { getClientDevice, getClientDevices, NO_PUSH_REGISTRATION, putClientDevice, removeClientDevice, type DevicePushState } from "../store/client_devices";
import { removePushDevicesOf } from "../store/push_devices";

/**
 * Logged-in devices and their end-to-end encrypted push registration (FL 468/470),
 * what the Zulip mobile app uses from 468 on instead of the legacy token routes.
 * Devices are real records with their events; registering one for E2EE pushes
 * answers as a Zulip server without a push service does (Hearth sends no pushes,
 * `push_notifications_enabled: false`), so every device's push fields stay null.
 */

const invalidDeviceId = () => badRequest("Invalid `device_id`");

/** POST /register_client_device: a new device of the caller's; `device` add to their queues. */
export async function doRegisterClientDevice(h: Hearth, user: UserRecord): Promise<number> {
  return commit(h, (tx) => {
    const id = h.store.nextId("client_device");
    putClientDevice(h.store, user.id, { id, ...NO_PUSH_REGISTRATION });
    tx.notify({ type: "device", op: "add", device_id: id }, [user.id]);
    return id;
  });
}

/** POST /remove_client_device (FL 470): the app calls it on logout. */
export async function doRemoveClientDevice(h: Hearth, user: UserRecord, deviceId: number): Promise<void> {
  await commit(h, (tx) => {
    if (getClientDevice(h.store, user.id, deviceId) === undefined) throw invalidDeviceId();
    removeClientDevice(h.store, user.id, deviceId);
    tx.notify({ type: "device", op: "remove", device_id: deviceId }, [user.id]);
  });
}

/**
 * POST /mobile_push/register: Zulip's `human_users_only`, then the push-service check,
 * which upstream makes before it reads `device_id` or either key group.
 */
export function checkPushRegistration(user: UserRecord): never {
  if (user.is_bot) throw botRequestRefused();
  throw new ApiError("Server is not configured to use push notification service.", "PUSH_SERVICE_NOT_CONFIGURED", 400);
}

/**
 * POST /mobile_push/e2ee/test_notification: a device with a confirmed push token is
 * needed, and none can have one here (registration always fails), so the answer is
 * Zulip's "no active device" for one device or all of them.
 */
export function checkE2eeTestNotification(user: UserRecord): never {
  if (user.is_bot) throw botRequestRefused();
  throw new ApiError("No active registered push device", "NO_ACTIVE_PUSH_DEVICE", 400);
}

/**
 * Inside the commit of an API-key regeneration: the old key's push registrations go
 * (Zulip clears legacy tokens there, and E2EE registrations from FL 492). The devices
 * stay; each one whose push fields change gets a `device` update with only those
 * fields, as the mobile app tells an absent field from a null one.
 */
export function clearPushRegistrations(h: Hearth, tx: Transaction, userId: number): void {
  removePushDevicesOf(h.store, userId);
  for (const device of getClientDevices(h.store, userId)) {
    const changed: Partial<DevicePushState> = {};
    for (const key of Object.keys(NO_PUSH_REGISTRATION) as (keyof DevicePushState)[]) {
      if (device[key] !== null) (changed as Record<string, null>)[key] = null;
    }
    if (Object.keys(changed).length === 0) continue;
    putClientDevice(h.store, userId, { ...device, ...NO_PUSH_REGISTRATION });
    tx.notify({ type: "device", op: "update", device_id: device.id, ...changed }, [userId]);
  }
}
