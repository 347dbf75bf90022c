import { createHash } from "node:crypto";
import type { Store } from "./db";

export type PushTokenKind = "apns" | "fcm";

/** A registered mobile device's push token. */
export interface PushDevice {
  token: string;
  appid: string | null;
  /** Unix seconds. */
  registered: number;
}

/** Tokens may be longer than an LMDB key allows (1978 bytes): rows are keyed by their hash. */
const tokenKey = (userId: number, kind: PushTokenKind, token: string) => [userId, kind, createHash("sha256").update(token).digest("hex")];

export function getPushDevice(store: Store, userId: number, kind: PushTokenKind, token: string): PushDevice | undefined {
  return store.dbs.pushDevices.get(tokenKey(userId, kind, token)) as PushDevice | undefined;
}

/** Call inside `commit`. */
export function putPushDevice(store: Store, userId: number, kind: PushTokenKind, device: PushDevice): void {
  store.dbs.pushDevices.put(tokenKey(userId, kind, device.token), device);
}

/** Call inside `commit`. */
export function removePushDevice(store: Store, userId: number, kind: PushTokenKind, token: string): void {
  store.dbs.pushDevices.remove(tokenKey(userId, kind, token));
}

/** Call inside `commit`: every legacy token of the user, of both kinds. */
export function removePushDevicesOf(store: Store, userId: number): void {
  for (const key of store.dbs.pushDevices.getKeys({ start: [userId], end: [userId + 1] })) store.dbs.pushDevices.remove(key);
}
