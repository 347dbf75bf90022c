import { createHmac, timingSafeEqual } from "node:crypto";
import type { AttachmentJson } from "../schemas/events";
import type { Hearth } from "../context";
import { notFound } from "../errors";
import { getAvatarSalt } from "../store/avatars";
import { getMessage } from "../store/messages";
import { getAttachmentByPath, uploadFilePath, uploadSpaceUsed, userAttachments, type AttachmentRecord } from "../store/uploads";
import type { UserRecord } from "../store/users";
import { readableChannels, readableMessage } from "../access/messages";

/** Uploads as the API shows them, who may read them, and where their bytes are. */

/** Image types a browser shows without running anything (SVG can carry script, so it is a download). */
const INLINE_TYPES = new Set(["image/png", "image/apng", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp"]);
export function servedInline(contentType: string): boolean {
  return INLINE_TYPES.has(contentType);
}

/** `/user_uploads/<path_id>` with each segment URL-encoded (names may hold non-ASCII letters). */
export function uploadUrl(pathId: string): string {
  return "/user_uploads/" + pathId.split("/").map(encodeURIComponent).join("/");
}

/**
 * The API form of an attachment at feature level 508: `create_time` in seconds (FL 443;
 * milliseconds before), and the linking messages as `message_ids` (FL 472; before it,
 * `messages` objects with a `date_sent`).
 */
export function attachmentView(h: Hearth, a: AttachmentRecord): AttachmentJson {
  return {
    id: a.id,
    name: a.name,
    path_id: a.path_id,
    size: a.size,
    create_time: a.create_time,
    message_ids: a.message_ids.filter((id) => getMessage(h.store, id) !== undefined).sort((x, y) => x - y),
  };
}

/** Who may read an upload (Zulip's `validate_attachment_request`): its owner, or anyone who can read a message linking it. */
export function canReadAttachment(h: Hearth, user: UserRecord, a: AttachmentRecord): boolean {
  if (a.owner_id === user.id) return true;
  const readable = readableChannels(h, user);
  return a.message_ids.some((id) => readableMessage(h, user, id, readable) !== undefined);
}

/** Readable uploads only; anything else is the same 404, so URLs cannot be probed. */
export function readableAttachment(h: Hearth, user: UserRecord, pathId: string | undefined): AttachmentRecord {
  const a = pathId === undefined ? undefined : getAttachmentByPath(h.store, pathId);
  if (!a || !canReadAttachment(h, user, a)) throw notFound("File not found");
  return a;
}

/** The file holding an upload's bytes. */
export function attachmentFilePath(h: Hearth, a: AttachmentRecord): string {
  return uploadFilePath(h.store, a.path_id);
}

/** `GET /attachments`: the user's uploads and the organization's space used. */
export function getUserAttachments(h: Hearth, userId: number): { attachments: Record<string, unknown>[]; upload_space_used: number } {
  return { attachments: userAttachments(h.store, userId).map((a) => attachmentView(h, a)), upload_space_used: uploadSpaceUsed(h.store) };
}

// Temporary URLs (the mobile app opens files in a browser, which has no credentials)

export const TEMPORARY_URL_SECONDS = 60;

/**
 * The signing key, derived from the data folder's avatar salt so that no second
 * secret has to be created and kept: a different purpose string gives an unrelated key.
 */
function temporaryUrlKey(h: Hearth): Buffer {
  return createHmac("sha256", getAvatarSalt(h.store) ?? "").update("hearth temporary upload URL").digest();
}

function sign(h: Hearth, payload: string): string {
  return createHmac("sha256", temporaryUrlKey(h)).update(payload).digest("base64url");
}

export function temporaryUploadUrl(h: Hearth, a: AttachmentRecord, now = Date.now() / 1000): string {
  const payload = `${Buffer.from(a.path_id).toString("base64url")}.${Math.floor(now) + TEMPORARY_URL_SECONDS}`;
  const fileName = a.path_id.slice(a.path_id.lastIndexOf("/") + 1);
  return `/user_uploads/temporary/${payload}.${sign(h, payload)}/${encodeURIComponent(fileName)}`;
}

/** The path_id a temporary token grants, or undefined when forged or expired. */
export function verifyTemporaryToken(h: Hearth, token: string, now = Date.now() / 1000): string | undefined {
  const match = /^([A-Za-z0-9_-]+)\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return undefined;
  const expected = Buffer.from(sign(h, `${match[1]}.${match[2]}`));
  const given = Buffer.from(match[3]);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
  if (Number(match[2]) < now) return undefined;
  return Buffer.from(match[1], "base64url").toString("utf-8");
}

/** The upload a temporary URL's token grants, or undefined when forged, expired or gone. */
export function temporaryAttachment(h: Hearth, token: string): AttachmentRecord | undefined {
  const pathId = verifyTemporaryToken(h, token);
  return pathId === undefined ? undefined : getAttachmentByPath(h.store, pathId);
}
