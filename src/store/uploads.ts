import { join, resolve, sep } from "node:path";
import { StoreCache } from "./cache";
import { fitsKey, type Store } from "./db";

/** An uploaded file's metadata (Zulip's Attachment). The bytes live at `uploadFilePath(path_id)`. */
export interface AttachmentRecord {
  id: number;
  owner_id: number;
  /** `<realm_id>/<random>/<sanitized filename>`: the file's URL is `/user_uploads/<path_id>`. */
  path_id: string;
  /** The file name as the client sent it. */
  name: string;
  size: number;
  content_type: string;
  /** Unix seconds. */
  create_time: number;
  /** Messages that link the file, oldest first; an empty list means not (or no longer) shared. */
  message_ids: number[];
}

/** A tus upload in progress. Its offset is the size of its partial file, so nothing here changes per chunk. */
export interface TusUpload {
  id: string;
  owner_id: number;
  length: number;
  filename: string;
  filetype: string;
  /** Unix seconds. */
  created: number;
}

export function uploadsRoot(store: Store): string {
  return join(store.dataDir, "uploads");
}

export function partialUploadsDir(store: Store): string {
  return join(uploadsRoot(store), "partial");
}

/**
 * The file of a path_id. path_ids are built by us from a sanitized name (no `/`,
 * never `.` or `..`), so this never leaves the uploads folder; the check stays as a
 * second line of defence should a stored path_id ever be odd.
 */
export function uploadFilePath(store: Store, pathId: string): string {
  const root = resolve(uploadsRoot(store));
  const file = resolve(root, pathId);
  if (!file.startsWith(root + sep)) throw new Error(`path_id outside the uploads folder: ${pathId}`);
  return file;
}

export function getAttachment(store: Store, id: number): AttachmentRecord | undefined {
  return store.dbs.attachments.get(id) as AttachmentRecord | undefined;
}

export function getAttachmentByPath(store: Store, pathId: string): AttachmentRecord | undefined {
  // A path from a request (a file URL) may be longer than any key: no file has it.
  if (!fitsKey(pathId)) return undefined;
  const id = store.dbs.attachmentsByPath.get(pathId) as number | undefined;
  return id === undefined ? undefined : getAttachment(store, id);
}

export function userAttachments(store: Store, userId: number): AttachmentRecord[] {
  const out: AttachmentRecord[] = [];
  for (const key of store.dbs.userAttachments.getKeys({ start: [userId], end: [userId, Infinity] })) {
    const a = getAttachment(store, (key as [number, number])[1]);
    if (a) out.push(a);
  }
  return out;
}

export function messageAttachmentIds(store: Store, messageId: number): number[] {
  return [...store.dbs.messageAttachments.getKeys({ start: [messageId], end: [messageId, Infinity] })].map((k) => (k as [number, number])[1]);
}

/** Writes the record and its index rows; call inside `commit`. */
export function putAttachment(store: Store, a: AttachmentRecord, before?: AttachmentRecord): void {
  if (!before || before.size !== a.size) spaceUsedCache.invalidate(store);
  store.dbs.attachments.put(a.id, a);
  if (!before) {
    store.dbs.attachmentsByPath.put(a.path_id, a.id);
    store.dbs.userAttachments.put([a.owner_id, a.id], true);
  }
  for (const id of before?.message_ids ?? []) if (!a.message_ids.includes(id)) store.dbs.messageAttachments.remove([id, a.id]);
  for (const id of a.message_ids) if (!before?.message_ids.includes(id)) store.dbs.messageAttachments.put([id, a.id], true);
}

/** Removes the record and its index rows (not the file); call inside `commit`. */
export function removeAttachment(store: Store, a: AttachmentRecord): void {
  spaceUsedCache.invalidate(store);
  store.dbs.attachments.remove(a.id);
  store.dbs.attachmentsByPath.remove(a.path_id);
  store.dbs.userAttachments.remove([a.owner_id, a.id]);
  for (const id of a.message_ids) store.dbs.messageAttachments.remove([id, a.id]);
}

/** Kept until an attachment is added or removed: a message that links a file does not empty it. */
const spaceUsedCache = new StoreCache<"total", number>();

/** Zulip's `upload_space_used`: bytes of every file in the organization. */
export function uploadSpaceUsed(store: Store): number {
  return spaceUsedCache.get(store, "total", () => {
    let total = 0;
    for (const { value } of store.dbs.attachments.getRange({})) total += (value as AttachmentRecord).size;
    return total;
  });
}

export function allAttachments(store: Store): Iterable<AttachmentRecord> {
  return store.dbs.attachments.getRange({}).map(({ value }) => value as AttachmentRecord);
}

export function getTusUpload(store: Store, id: string): TusUpload | undefined {
  return store.dbs.tusUploads.get(id) as TusUpload | undefined;
}

export function allTusUploads(store: Store): Iterable<TusUpload> {
  return store.dbs.tusUploads.getRange({}).map(({ value }) => value as TusUpload);
}

/** Call inside `commit`. */
export function putTusUpload(store: Store, upload: TusUpload): void {
  store.dbs.tusUploads.put(upload.id, upload);
}

/** Call inside `commit`. */
export function removeTusUpload(store: Store, id: string): void {
  store.dbs.tusUploads.remove(id);
}
