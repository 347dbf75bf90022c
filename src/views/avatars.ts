import { createHash } from "node:crypto";
import type { Hearth } from "../context";
import { getAvatarSalt, getUploadedAvatar, type UploadedAvatar } from "../store/avatars";
import { getUser, type UserRecord } from "../store/users";

/**
 * The file name part of a user's avatar URL: secret-salted and versioned, so a new
 * avatar gets a new URL (clients cache by URL) and URLs cannot be guessed.
 */
export function avatarToken(h: Hearth, userId: number, version: number): string {
  const salt = getAvatarSalt(h.store) ?? "";
  const input = `${salt}:${userId}:${version}`;
  let token = tokens.get(input);
  if (token === undefined) {
    token = createHash("sha256").update(input).digest("hex").slice(0, 32);
    // Bounded: a token is cheap to make again, and old versions' inputs never come back.
    if (tokens.size >= MAX_TOKENS) tokens.clear();
    tokens.set(input, token);
  }
  return token;
}

/** Tokens by their hash's input: every user object and message shows an avatar URL, and hashing showed in GET /users/me's profile (docs/benchmarks.md). */
const tokens = new Map<string, string>();
const MAX_TOKENS = 50_000;

/** `/user_avatars/{id}/{token}.png`; the mobile app derives the 500px one by swapping `.png` for `-medium.png`. */
export function avatarUrl(h: Hearth, user: UserRecord, medium = false): string {
  return `${h.realmUrl()}/user_avatars/${user.id}/${avatarToken(h, user.id, user.avatar_version)}${medium ? "-medium" : ""}.png`;
}

/** The account an avatar path's `{user_id}` names, if it is an ID at all. */
export function avatarOwner(h: Hearth, rawUserId: string): UserRecord | undefined {
  return /^\d{1,15}$/.test(rawUserId) ? getUser(h.store, Number(rawUserId)) : undefined;
}

/** The account's uploaded image, while its avatar is the uploaded one. */
export function uploadedAvatarOf(h: Hearth, user: UserRecord): UploadedAvatar | undefined {
  return user.avatar_source === "U" ? getUploadedAvatar(h.store, user.id) : undefined;
}
