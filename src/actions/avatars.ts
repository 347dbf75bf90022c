import type { Hearth } from "../context";
import { commit, type Transaction } from "../events/commit";
import { badRequest } from "../errors";
import { putUploadedAvatar, removeUploadedAvatar, type UploadedAvatar } from "../store/avatars";
import { getUser, putUser, type UserRecord } from "../store/users";
import { avatarUrl } from "../views/avatars";
import { notifyRealmUser } from "./user_events";

export const MAX_AVATAR_FILE_SIZE_MIB = 5;
export const MAX_EMOJI_FILE_SIZE_MIB = 5;

/** Recognizes the image formats browsers and the mobile app display, by their magic bytes. */
function sniffImageType(bytes: Uint8Array): string | null {
  const starts = (...sig: number[]) => sig.every((b, i) => bytes[i] === b);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (starts(0xff, 0xd8, 0xff)) return "image/jpeg";
  if (starts(0x47, 0x49, 0x46, 0x38)) return "image/gif";
  if (starts(0x52, 0x49, 0x46, 0x46) && bytes[8] === 0x57 && bytes[9] === 0x45 && bytes[10] === 0x42 && bytes[11] === 0x50) return "image/webp";
  return null;
}

/** An avatar upload as Zulip checks it: one image within MAX_AVATAR_FILE_SIZE_MIB, ready to store. */
export async function readAvatarImage(file: File): Promise<UploadedAvatar> {
  const { data, contentType } = await readUploadedImage(file, MAX_AVATAR_FILE_SIZE_MIB);
  return { data, content_type: contentType };
}

/**
 * A bot endpoint's avatar: the request's one file (any field name), none leaving the
 * avatar as it is. Called once the caller is known to be allowed, so a refused request
 * gets the same refusal with files as without.
 */
export async function readBotAvatarFiles(files: readonly File[]): Promise<UploadedAvatar | undefined> {
  if (files.length > 1) throw badRequest("You may only upload one file at a time");
  return files.length === 1 ? readAvatarImage(files[0]) : undefined;
}

/** The record with `avatar` as its uploaded avatar, stored; call inside `commit`. */
export function withUploadedAvatar(h: Hearth, record: UserRecord, avatar: UploadedAvatar): UserRecord {
  putUploadedAvatar(h.store, record.id, avatar);
  return { ...record, avatar_source: "U", avatar_version: record.avatar_version + 1 };
}

/** An uploaded image within `maxMiB`, with the type its bytes show (Zulip's avatar and emoji checks). */
export async function readUploadedImage(file: File, maxMiB: number): Promise<{ data: Uint8Array; contentType: string }> {
  if (file.size > maxMiB * 1024 * 1024) throw badRequest(`Uploaded file is larger than the allowed limit of ${maxMiB} MiB`);
  const data = new Uint8Array(await file.arrayBuffer());
  const contentType = sniffImageType(data);
  if (!contentType) throw badRequest("Invalid image format");
  return { data, contentType };
}

export function notifyAvatarChange(tx: Transaction, h: Hearth, user: UserRecord): void {
  notifyRealmUser(tx, h, "update", user, {
    avatar_url: avatarUrl(h, user),
    avatar_source: user.avatar_source,
    avatar_url_medium: avatarUrl(h, user, true),
    avatar_version: user.avatar_version,
  });
  // Since FL 474 bot objects carry no avatar: realm_user alone says it.
}

/**
 * Stores an uploaded avatar as sent (no server-side resizing: clients scale it) and
 * bumps avatar_version so the URL changes.
 */
export async function doSetAvatar(h: Hearth, user: UserRecord, file: File): Promise<UserRecord> {
  const avatar = await readAvatarImage(file);
  return commit(h, (tx) => {
    const next = withUploadedAvatar(h, getUser(h.store, user.id)!, avatar);
    putUser(h.store, next);
    notifyAvatarChange(tx, h, next);
    return next;
  });
}

/** Back to the generated default avatar. */
export async function doResetAvatar(h: Hearth, user: UserRecord): Promise<void> {
  await commit(h, (tx) => {
    const current = getUser(h.store, user.id)!;
    const next: UserRecord = { ...current, avatar_source: "G", avatar_version: current.avatar_version + 1 };
    removeUploadedAvatar(h.store, user.id);
    putUser(h.store, next);
    notifyAvatarChange(tx, h, next);
  });
}
