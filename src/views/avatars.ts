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
  if (medium) return `${h.realmUrl()}/user_avatars/${user.id}/${avatarToken(h, user.id, user.avatar_version)}-medium.png`;
  // By the user record itself (the users' cache keeps one object per version of a user),
  // checked against the salt and address it was made with: every message event shows its sender's.
  const realmUrl = h.realmUrl();
  const salt = getAvatarSalt(h.store);
  const known = urlsByRecord.get(user);
  if (known && known.realmUrl === realmUrl && known.salt === salt && known.version === user.avatar_version) return known.url;
  const url = `${realmUrl}/user_avatars/${user.id}/${avatarToken(h, user.id, user.avatar_version)}.png`;
  urlsByRecord.set(user, { realmUrl, salt, version: user.avatar_version, url });
  return url;
}

const urlsByRecord = new WeakMap<UserRecord, { realmUrl: string; salt: string | undefined; version: number; url: string }>();

/** The account an avatar path's `{user_id}` names, if it is an ID at all. */
export function avatarOwner(h: Hearth, rawUserId: string): UserRecord | undefined {
  return /^\d{1,15}$/.test(rawUserId) ? getUser(h.store, Number(rawUserId)) : undefined;
}

/** The account's uploaded image, while its avatar is the uploaded one. */
export function uploadedAvatarOf(h: Hearth, user: UserRecord): UploadedAvatar | undefined {
  return user.avatar_source === "U" ? getUploadedAvatar(h.store, user.id) : undefined;
}
