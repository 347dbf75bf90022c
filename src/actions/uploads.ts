import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, mkdirSync } from "node:fs";
import { open, rename, rmdir, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import type { Hearth } from "../context";
import { ApiError, badRequest } from "../errors";
import { getAvatarSalt } from "../store/avatars";
import { getRealm } from "../store/realm";
import {
  allAttachments,
  getAttachment,
  getAttachmentByPath,
  messageAttachmentIds,
  putAttachment,
  removeAttachment,
  uploadFilePath,
  uploadSpaceUsed,
  uploadsRoot,
  type AttachmentRecord,
} from "../store/uploads";
import { getMessage } from "../store/messages";
import type { UserRecord } from "../store/users";
import { SERVER_LIMITS } from "../store/realm_settings";
import { readableChannels, readableMessage } from "../views/messages";

export const MAX_UPLOAD_BYTES = SERVER_LIMITS.max_file_upload_size_mib * 1024 * 1024;

export const fileTooLarge = () =>
  new ApiError(`File is larger than this server's configured maximum upload size (${SERVER_LIMITS.max_file_upload_size_mib} MiB).`, "BAD_REQUEST", 400);

/** Zulip's `sanitize_name`: letters, digits, `_`, `.` and `-` only, runs of spaces and dashes as one dash. */
export function sanitizeFileName(name: string): string {
  let value = name.normalize("NFKC").replace(/[^\p{L}\p{N}_\s.-]/gu, "").trim();
  value = value.replace(/[-\s]+/g, "-");
  // Long names would exceed the file system's 255-byte limit for one path segment.
  // Cut whole characters: half a surrogate pair makes the name unencodable in a URL.
  if (Buffer.byteLength(value) > 200) {
    const chars = [...value];
    while (Buffer.byteLength(chars.join("")) > 200) chars.pop();
    value = chars.join("");
  }
  if (value === "" || /^\.+$/.test(value)) return "uploaded-file";
  return value;
}

const TYPES_BY_EXTENSION: Record<string, string> = {
  png: "image/png",
  apng: "image/apng",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  avif: "image/avif",
  bmp: "image/bmp",
  svg: "image/svg+xml",
  ico: "image/x-icon",
  pdf: "application/pdf",
  txt: "text/plain",
  md: "text/markdown",
  csv: "text/csv",
  html: "text/html",
  htm: "text/html",
  json: "application/json",
  zip: "application/zip",
  gz: "application/gzip",
  mp3: "audio/mpeg",
  ogg: "audio/ogg",
  wav: "audio/wav",
  mp4: "video/mp4",
  webm: "video/webm",
  mov: "video/quicktime",
};

/** As Zulip: the type follows the file name; the client's claim only for names we cannot place. */
export function guessContentType(name: string, claimed: string | undefined): string {
  const ext = /\.([A-Za-z0-9]+)$/.exec(name)?.[1]?.toLowerCase();
  const byName = ext ? TYPES_BY_EXTENSION[ext] : undefined;
  if (byName) return byName;
  const type = (claimed ?? "").split(";")[0].trim().toLowerCase();
  return /^[a-z0-9][a-z0-9.+-]*\/[a-z0-9][a-z0-9.+-]*$/.test(type) ? type : "application/octet-stream";
}

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
 * The API form of an attachment. Times are milliseconds: Zulip switched them to
 * seconds at feature level 443, above the level we advertise.
 */
export function attachmentView(h: Hearth, a: AttachmentRecord): Record<string, unknown> {
  return {
    id: a.id,
    name: a.name,
    path_id: a.path_id,
    size: a.size,
    create_time: a.create_time * 1000,
    messages: a.message_ids.flatMap((id) => {
      const m = getMessage(h.store, id);
      return m ? [{ id, date_sent: m.timestamp * 1000 }] : [];
    }),
  };
}

/** Who may read an upload (Zulip's `validate_attachment_request`): its owner, or anyone who can read a message linking it. */
export function canReadAttachment(h: Hearth, user: UserRecord, a: AttachmentRecord): boolean {
  if (a.owner_id === user.id) return true;
  const readable = readableChannels(h, user);
  return a.message_ids.some((id) => readableMessage(h, user, id, readable) !== undefined);
}

export function accessOwnAttachment(h: Hearth, user: UserRecord, id: number): AttachmentRecord {
  const a = getAttachment(h.store, id);
  if (!a || a.owner_id !== user.id) throw badRequest("Invalid attachment");
  return a;
}

/** Creates `dir` under the uploads folder, which (like every folder in it) only the server's user may read. */
export function ensureUploadDir(h: Hearth, dir: string): void {
  const root = uploadsRoot(h.store);
  mkdirSync(root, { recursive: true, mode: 0o700 });
  chmodSync(root, 0o700);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/** Writes bytes to a new file, readable by the server's user only, and syncs it before we report success. */
export async function writePrivateFile(path: string, bytes: Uint8Array): Promise<void> {
  const handle = await open(path, "wx", 0o600);
  try {
    await handle.writeFile(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Removes an upload's file and its folder (each upload has a folder of its own, named by its random part). */
async function removeFile(path: string): Promise<void> {
  await unlink(path).catch((e) => {
    if (e?.code !== "ENOENT") console.error(`Could not remove upload ${path}:`, e);
  });
  await rmdir(dirname(path)).catch(() => {});
}

/**
 * Stores a finished upload as an attachment: `place` puts the bytes at the file's
 * path, then one commit records it. A failed commit removes the file again, so the
 * folder never holds bytes nothing points at.
 */
async function doCreateAttachment(
  h: Hearth,
  owner: UserRecord,
  input: { name: string; contentType: string | undefined; size: number },
  place: (path: string) => Promise<void>,
  unplace: (path: string) => Promise<void> = removeFile,
  alsoInCommit: () => void = () => {},
): Promise<AttachmentRecord> {
  if (input.size > MAX_UPLOAD_BYTES) throw fileTooLarge();
  const realm = getRealm(h.store);
  if (!realm) throw badRequest("No organization");
  // A multipart part sent with `filename=` arrives without a name.
  const name = input.name?.trim() || "uploaded-file";
  const pathId = `${realm.id}/${randomBytes(18).toString("base64url")}/${sanitizeFileName(name)}`;
  const file = uploadFilePath(h.store, pathId);
  ensureUploadDir(h, dirname(file));
  try {
    await place(file);
  } catch (e) {
    // A half-written file (say, a full disk) must not stay behind.
    await removeFile(file);
    throw e;
  }
  let attachment: AttachmentRecord;
  try {
    attachment = await h.store.commit(() => {
      const a: AttachmentRecord = {
        id: h.store.nextId("attachment"),
        owner_id: owner.id,
        path_id: pathId,
        name,
        size: input.size,
        content_type: guessContentType(name, input.contentType),
        create_time: Math.floor(Date.now() / 1000),
        message_ids: [],
      };
      putAttachment(h.store, a);
      alsoInCommit();
      return a;
    });
  } catch (e) {
    await unplace(file);
    throw e;
  }
  h.events.publish({ type: "attachment", op: "add", attachment: attachmentView(h, attachment), upload_space_used: uploadSpaceUsed(h.store) }, [owner.id]);
  return attachment;
}

export async function doUploadFile(h: Hearth, owner: UserRecord, file: File): Promise<AttachmentRecord> {
  if (file.size > MAX_UPLOAD_BYTES) throw fileTooLarge();
  const bytes = new Uint8Array(await file.arrayBuffer());
  return doCreateAttachment(h, owner, { name: file.name, contentType: file.type, size: bytes.length }, (path) => writePrivateFile(path, bytes));
}

/** A completed tus upload becomes an attachment by moving its partial file into place. */
export async function doAdoptPartialFile(
  h: Hearth,
  owner: UserRecord,
  partial: string,
  input: { name: string; contentType: string; size: number },
  alsoInCommit: () => void,
): Promise<AttachmentRecord> {
  return doCreateAttachment(h, owner, input, (path) => rename(partial, path), (path) => rename(path, partial), alsoInCommit);
}

export async function checkDeleteAttachment(h: Hearth, user: UserRecord, id: number): Promise<void> {
  // Looked up inside the commit: a message claiming the file may commit just before,
  // and removing an older copy would leave that message's link to a deleted record.
  const a = await h.store.commit(() => {
    const current = accessOwnAttachment(h, user, id);
    removeAttachment(h.store, current);
    return current;
  });
  await notifyAttachmentChanges(h, { updated: [], removed: [a] });
}

// ---------------------------------------------------------------------------
// Messages linking uploads (Zulip's `do_claim_attachments`)

/** The path_ids of `/user_uploads/…` links, relative or on this server's own address. */
export function linkedPathIds(h: Hearth, urls: string[]): string[] {
  const own = h.realmUrl();
  const out = new Set<string>();
  for (const url of urls) {
    let path = url.startsWith(own + "/") ? url.slice(own.length) : url;
    if (!path.startsWith("/user_uploads/")) continue;
    path = path.slice("/user_uploads/".length).split(/[?#]/)[0];
    try {
      out.add(decodeURIComponent(path));
    } catch {
      // Not a link we produced.
    }
  }
  return [...out];
}

export interface AttachmentChanges {
  updated: AttachmentRecord[];
  removed: AttachmentRecord[];
}

/**
 * Makes a message's attachments exactly the uploads its content links; call inside
 * `commit`. A link claims an upload when the sender owns it or can already read it
 * (the API docs: users who can access a link can reshare it), so nobody gains access
 * to a file by guessing its URL. Uploads the message stops linking stay (an edit
 * reports them as `detached_uploads`).
 */
export function setMessageAttachments(h: Hearth, sender: UserRecord, messageId: number, urls: string[]): AttachmentChanges & { detached: AttachmentRecord[] } {
  const wanted = new Map<number, AttachmentRecord>();
  for (const pathId of linkedPathIds(h, urls)) {
    const a = getAttachmentByPath(h.store, pathId);
    if (a && canReadAttachment(h, sender, a)) wanted.set(a.id, a);
  }
  const updated: AttachmentRecord[] = [];
  const detached: AttachmentRecord[] = [];
  for (const id of messageAttachmentIds(h.store, messageId)) {
    if (wanted.delete(id)) continue;
    const before = getAttachment(h.store, id)!;
    const after = { ...before, message_ids: before.message_ids.filter((m) => m !== messageId) };
    putAttachment(h.store, after, before);
    updated.push(after);
    if (after.message_ids.length === 0) detached.push(after);
  }
  for (const before of wanted.values()) {
    const after = { ...before, message_ids: [...before.message_ids, messageId].sort((a, b) => a - b) };
    putAttachment(h.store, after, before);
    updated.push(after);
  }
  return { updated, removed: [], detached };
}

/**
 * Messages are going away; call inside `commit`. Uploads they were the last link to
 * are deleted with them (Zulip: files are removed once the last message linking them
 * is, by a user or by the retention policy).
 */
export function releaseDeletedMessages(h: Hearth, messageIds: number[]): AttachmentChanges {
  const touched = new Map<number, AttachmentRecord>();
  for (const messageId of messageIds) {
    for (const id of messageAttachmentIds(h.store, messageId)) {
      const before = touched.get(id) ?? getAttachment(h.store, id)!;
      const after = { ...before, message_ids: before.message_ids.filter((m) => m !== messageId) };
      putAttachment(h.store, after, before);
      touched.set(id, after);
    }
  }
  const changes: AttachmentChanges = { updated: [], removed: [] };
  for (const a of touched.values()) {
    if (a.message_ids.length === 0) {
      removeAttachment(h.store, a);
      changes.removed.push(a);
    } else changes.updated.push(a);
  }
  return changes;
}

/** After the commit: removed uploads' files go, and each owner hears about their uploads. */
export async function notifyAttachmentChanges(h: Hearth, changes: AttachmentChanges): Promise<void> {
  // Most messages link no upload: skip the space scan below.
  if (changes.updated.length === 0 && changes.removed.length === 0) return;
  for (const a of changes.removed) await removeFile(uploadFilePath(h.store, a.path_id));
  const space = uploadSpaceUsed(h.store);
  for (const a of changes.updated) h.events.publish({ type: "attachment", op: "update", attachment: attachmentView(h, a), upload_space_used: space }, [a.owner_id]);
  for (const a of changes.removed) h.events.publish({ type: "attachment", op: "remove", attachment: { id: a.id }, upload_space_used: space }, [a.owner_id]);
}

// ---------------------------------------------------------------------------
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

/** Zulip deletes uploads no message links once they are three weeks old (`delete_old_unclaimed_attachments`). */
export const UNCLAIMED_UPLOAD_DAYS = 21;

export async function doExpireUnclaimedUploads(h: Hearth, now = Date.now() / 1000): Promise<number> {
  const cutoff = now - UNCLAIMED_UPLOAD_DAYS * 86400;
  const expired = (a: AttachmentRecord) => a.message_ids.length === 0 && a.create_time < cutoff;
  // Most runs find nothing: look before opening a write transaction.
  if (![...allAttachments(h.store)].some(expired)) return 0;
  const removed = await h.store.commit(() => {
    // Read again inside the transaction: a message may have linked one meanwhile.
    const out = [...allAttachments(h.store)].filter(expired);
    for (const a of out) removeAttachment(h.store, a);
    return out;
  });
  await notifyAttachmentChanges(h, { updated: [], removed });
  return removed.length;
}
