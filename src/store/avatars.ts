import { randomBytes } from "node:crypto";
import type { Store } from "./db";
import { StoreCache } from "./cache";

export interface UploadedAvatar {
  content_type: string;
  data: Uint8Array;
}

export function getUploadedAvatar(store: Store, userId: number): UploadedAvatar | undefined {
  return store.dbs.avatars.get(userId) as UploadedAvatar | undefined;
}

/** Stores an account's uploaded avatar; call inside `commit`, with the record's avatar_source set to "U" and its avatar_version bumped. */
export function putUploadedAvatar(store: Store, userId: number, avatar: UploadedAvatar): void {
  store.dbs.avatars.put(userId, { content_type: avatar.content_type, data: avatar.data });
}

/** The secret in avatar file names, so avatar URLs cannot be enumerated (as Zulip's AVATAR_SALT). */
/** Made once per data folder and never changed: read once per store. */
const saltCache = new StoreCache<"salt", string | undefined>();

export function getAvatarSalt(store: Store): string | undefined {
  return saltCache.get(store, "salt", () => store.dbs.meta.get("avatar_salt") as string | undefined);
}

/** Creates the salt once per data folder; call inside `commit`. */
export function ensureAvatarSalt(store: Store): string {
  const existing = getAvatarSalt(store);
  if (existing) return existing;
  const salt = randomBytes(16).toString("hex");
  store.dbs.meta.put("avatar_salt", salt);
  return salt;
}

/** Back to the generated avatar; call inside `commit`, with the record's avatar_source set to "G". */
export function removeUploadedAvatar(store: Store, userId: number): void {
  store.dbs.avatars.remove(userId);
}
