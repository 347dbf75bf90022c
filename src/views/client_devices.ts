import { statePart } from "./state_parts";
import { getClientDevices } from "../store/client_devices";

/** Register's `devices` (FL 468): the user's devices keyed by ID as a string, each with its push registration fields. */
export const devicesPart = statePart("devices", ["device"], ({ h, user }) => {
  const devices: Record<string, unknown> = {};
  if (user) for (const { id, ...push } of getClientDevices(h.store, user.id)) devices[String(id)] = push;
  return { devices };
});
