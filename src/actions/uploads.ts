import { randomBytes } from "node:crypto";
import type { EventOf } from "../schemas/events";
import { chmodSync, mkdirSync } from "node:fs";
import { open, rename, rmdir, unlink } from "node:fs/promises";
import { dirname } from "node:path";
import type { Hearth } from "../context";
import { ApiError, badRequest } from "../errors";
import { getRealm } from "../store/realm";
import { allAttachments, putAttachment, removeAttachment, uploadFilePath, uploadSpaceUsed, uploadsRoot, type AttachmentRecord } from "../store/uploads";
import type { UserRecord } from "../store/users";
import { commit, type Transaction } from "../events/commit";
import { accessOwnAttachment } from "../access/uploads";
import { attachmentView } from "../views/uploads";
import { maxUploadMib } from "../store/realm_settings";

export const maxUploadBytes = (h: Hearth): number => maxUploadMib(h) * 1024 * 1024;

export const fileTooLarge = (h: Hearth) =>
  new ApiError(`File is larger than this server's configured maximum upload size (${maxUploadMib(h)} MiB).`, "BAD_REQUEST", 400);

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
  if (input.size > maxUploadBytes(h)) throw fileTooLarge(h);
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
    attachment = await commit(h, (tx) => {
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
      // The space used is summed after the commit, when the sum can be cached.
      tx.afterCommit(() =>
        tx.notify({ type: "attachment", op: "add", attachment: attachmentView(h, a), upload_space_used: uploadSpaceUsed(h.store) }, [owner.id]),
      );
      return a;
    });
  } catch (e) {
    await unplace(file);
    throw e;
  }
  return attachment;
}

export async function doUploadFile(h: Hearth, owner: UserRecord, file: File): Promise<AttachmentRecord> {
  if (file.size > maxUploadBytes(h)) throw fileTooLarge(h);
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
  const a = await commit(h, (tx) => {
    const current = accessOwnAttachment(h, user, id);
    removeAttachment(h.store, current);
    notifyAttachmentEvents(tx, h, { updated: [], removed: [current] });
    return current;
  });
  await removeAttachmentFiles(h, [a]);
}

/** What a commit did to uploads: records changed (the messages linking them) and records removed. */
export interface AttachmentChanges {
  updated: AttachmentRecord[];
  removed: AttachmentRecord[];
}

type AttachmentEvent = EventOf<"attachment">;

function attachmentEvents(h: Hearth, changes: AttachmentChanges): [event: AttachmentEvent, ownerId: number][] {
  const space = uploadSpaceUsed(h.store);
  return [
    ...changes.updated.map((a): [AttachmentEvent, number] => [{ type: "attachment", op: "update", attachment: attachmentView(h, a), upload_space_used: space }, a.owner_id]),
    ...changes.removed.map((a): [AttachmentEvent, number] => [{ type: "attachment", op: "remove", attachment: { id: a.id }, upload_space_used: space }, a.owner_id]),
  ];
}

/**
 * Inside `commit`: each owner hears about their uploads once the transaction is
 * visible (the space used summed then, when the sum can be cached). The files of
 * removed uploads are the caller's to remove after the commit (`removeAttachmentFiles`).
 */
export function notifyAttachmentEvents(tx: Transaction, h: Hearth, changes: AttachmentChanges): void {
  // Most messages link no upload: skip the space scan.
  if (changes.updated.length === 0 && changes.removed.length === 0) return;
  tx.afterCommit(() => {
    for (const [event, ownerId] of attachmentEvents(h, changes)) tx.notify(event, [ownerId]);
  });
}

/** After the commit: the files of uploads whose records it removed. */
export async function removeAttachmentFiles(h: Hearth, removed: AttachmentRecord[]): Promise<void> {
  for (const a of removed) await removeFile(uploadFilePath(h.store, a.path_id));
}

/** Zulip deletes uploads no message links once they are three weeks old (`delete_old_unclaimed_attachments`). */
export const UNCLAIMED_UPLOAD_DAYS = 21;

export async function doExpireUnclaimedUploads(h: Hearth, now = Date.now() / 1000): Promise<number> {
  const cutoff = now - UNCLAIMED_UPLOAD_DAYS * 86400;
  const expired = (a: AttachmentRecord) => a.message_ids.length === 0 && a.create_time < cutoff;
  // Most runs find nothing: look before opening a write transaction.
  if (![...allAttachments(h.store)].some(expired)) return 0;
  const removed = await commit(h, (tx) => {
    // Read again inside the transaction: a message may have linked one meanwhile.
    const out = [...allAttachments(h.store)].filter(expired);
    for (const a of out) removeAttachment(h.store, a);
    notifyAttachmentEvents(tx, h, { updated: [], removed: out });
    return out;
  });
  await removeAttachmentFiles(h, removed);
  return removed.length;
}
