import { createHash } from "node:crypto";
import type { Hearth } from "../context";
import { getAvatarSalt } from "../store/avatars";
import type { UserRecord } from "../store/users";

/**
 * The file name part of a user's avatar URL: secret-salted and versioned, so a new
 * avatar gets a new URL (clients cache by URL) and URLs cannot be guessed.
 */
export function avatarToken(h: Hearth, userId: number, version: number): string {
  const salt = getAvatarSalt(h.store) ?? "";
  return createHash("sha256").update(`${salt}:${userId}:${version}`).digest("hex").slice(0, 32);
}

/** `/user_avatars/{id}/{token}.png`; the mobile app derives the 500px one by swapping `.png` for `-medium.png`. */
export function avatarUrl(h: Hearth, user: UserRecord, medium = false): string {
  return `${h.realmUrl()}/user_avatars/${user.id}/${avatarToken(h, user.id, user.avatar_version)}${medium ? "-medium" : ""}.png`;
}
