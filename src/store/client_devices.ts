import { valuesOf, type Store } from "./db";

/** Zulip's `push_registration_error_code` values: why the push service refused a token. */
export type PushRegistrationErrorCode = "INVALID_BOUNCER_PUBLIC_KEY" | "INVALID_ENCRYPTED_PUSH_REGISTRATION" | "REQUEST_EXPIRED";

/**
 * What register's `devices` says of one device, field for field (FL 468). Every field
 * stays null while Hearth has no push service: no E2EE registration can succeed.
 */
export interface DevicePushState {
  push_key_id: number | null;
  push_token_id: string | null;
  pending_push_token_id: string | null;
  /** Unix seconds. */
  push_token_last_updated_timestamp: number | null;
  push_registration_error_code: PushRegistrationErrorCode | null;
}

/** A device a user registered with `POST /register_client_device`. */
export interface ClientDevice extends DevicePushState {
  id: number;
}

export const NO_PUSH_REGISTRATION: DevicePushState = {
  push_key_id: null,
  push_token_id: null,
  pending_push_token_id: null,
  push_token_last_updated_timestamp: null,
  push_registration_error_code: null,
};

/** The user's devices in ID order. */
export function getClientDevices(store: Store, userId: number): ClientDevice[] {
  return valuesOf<ClientDevice>(store.dbs.clientDevices, userId);
}

export function getClientDevice(store: Store, userId: number, deviceId: number): ClientDevice | undefined {
  return store.dbs.clientDevices.get([userId, deviceId]) as ClientDevice | undefined;
}

/** Call inside `commit`. */
export function putClientDevice(store: Store, userId: number, device: ClientDevice): void {
  store.dbs.clientDevices.put([userId, device.id], device);
}

/** Call inside `commit`. */
export function removeClientDevice(store: Store, userId: number, deviceId: number): void {
  store.dbs.clientDevices.remove([userId, deviceId]);
}
