import { randomBytes } from "node:crypto";
import { lstat, open, unlink } from "node:fs/promises";
import { isRegularFile, openToAppend } from "../lib/files";
import { join } from "node:path";
import type { Hearth } from "../context";
import { allTusUploads, partialUploadsDir, putTusUpload, removeTusUpload, type AttachmentRecord, type TusUpload } from "../store/uploads";
import { commit } from "../events/commit";
import { tusError } from "../access/uploads";
import type { UserRecord } from "../store/users";
import { doAdoptPartialFile, ensureUploadDir, maxUploadBytes } from "./uploads";

/**
 * tus 1.0.0 resumable uploads (core, creation, termination). The bytes received so
 * far are the partial file itself: its size is the upload's offset, so an upload
 * survives a server restart or a dropped connection with nothing else to recover.
 */

export function partialFilePath(h: Hearth, id: string): string {
  return join(partialUploadsDir(h.store), id);
}

/** Bytes received so far. A partial file that is not a regular file (a link put there) ends the upload. */
export async function tusOffset(h: Hearth, upload: TusUpload): Promise<number> {
  let info;
  try {
    info = await lstat(partialFilePath(h, upload.id));
  } catch {
    return 0;
  }
  if (!info.isFile()) throw partialFileReplaced();
  return info.size;
}

const partialFileReplaced = () => tusError(410, "This upload's data is no longer a file this server wrote; start the upload again");

export async function doCreateTusUpload(h: Hearth, owner: UserRecord, input: { length: number; filename: string; filetype: string }): Promise<TusUpload> {
  if (input.length > maxUploadBytes(h)) throw tusError(413, "File is larger than this server's configured maximum upload size.");
  ensureUploadDir(h, partialUploadsDir(h.store));
  const upload: TusUpload = {
    id: randomBytes(18).toString("base64url"),
    owner_id: owner.id,
    length: input.length,
    filename: input.filename,
    filetype: input.filetype,
    created: Math.floor(Date.now() / 1000),
  };
  const path = partialFilePath(h, upload.id);
  await (await open(path, "wx", 0o600)).close();
  try {
    await commit(h, () => putTusUpload(h.store, upload));
  } catch (e) {
    await unlink(path).catch(() => {});
    throw e;
  }
  return upload;
}

/** One PATCH at a time per upload: two writers at the same offset would interleave bytes. */
const writing = new Set<string>();

/**
 * Appends a PATCH body at `offset`. Bytes that arrived before a dropped connection
 * are kept and synced (tus: the client asks HEAD for the offset and resumes). Returns
 * the attachment once the last byte is in.
 */
export async function doAppendTusUpload(h: Hearth, owner: UserRecord, upload: TusUpload, offset: number, body: ReadableStream<Uint8Array> | null): Promise<{ offset: number; attachment?: AttachmentRecord }> {
  if (writing.has(upload.id)) throw tusError(409, "Another request is writing this upload");
  writing.add(upload.id);
  try {
    const current = await tusOffset(h, upload);
    if (offset !== current) throw tusError(409, "Upload-Offset does not match the upload's offset");
    let written = current;
    const handle = await openToAppend(partialFilePath(h, upload.id)).catch((error) => {
      throw error?.code === "ELOOP" || error?.code === "ENOTREG" ? partialFileReplaced() : error;
    });
    try {
      if (body) {
        const chunks = (body as unknown as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
        for (;;) {
          let next: IteratorResult<Uint8Array>;
          try {
            next = await chunks.next();
          } catch {
            break; // A dropped connection keeps what arrived; the client resumes from HEAD's offset.
          }
          if (next.done) break;
          if (written + next.value.length > upload.length) throw tusError(413, "Body exceeds the upload's declared length");
          // A failing disk (full, I/O error) is an error, not a short success the client would retry forever.
          await handle.write(next.value);
          written += next.value.length;
        }
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (written < upload.length) return { offset: written };
    if (!(await isRegularFile(partialFilePath(h, upload.id)))) throw partialFileReplaced();
    // The upload record goes in the attachment's commit: never both, never neither.
    const attachment = await doAdoptPartialFile(
      h,
      owner,
      partialFilePath(h, upload.id),
      { name: upload.filename, contentType: upload.filetype, size: upload.length },
      () => removeTusUpload(h.store, upload.id),
    );
    return { offset: written, attachment };
  } finally {
    writing.delete(upload.id);
  }
}

export async function doTerminateTusUpload(h: Hearth, upload: TusUpload): Promise<void> {
  if (writing.has(upload.id)) throw tusError(409, "Another request is writing this upload");
  // Held until the file is gone, so a PATCH arriving meanwhile is refused rather than written to a removed file.
  writing.add(upload.id);
  try {
    await commit(h, () => removeTusUpload(h.store, upload.id));
    await unlink(partialFilePath(h, upload.id)).catch(() => {});
  } finally {
    writing.delete(upload.id);
  }
}

/** Uploads abandoned for a day are removed (run by the retention job). */
export async function doExpireTusUploads(h: Hearth, now = Date.now() / 1000): Promise<number> {
  const stale = [...allTusUploads(h.store)].filter((u) => now - u.created > 86400 && !writing.has(u.id));
  for (const upload of stale) await doTerminateTusUpload(h, upload);
  return stale.length;
}
