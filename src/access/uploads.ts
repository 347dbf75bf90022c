import type { Hearth } from "../context";
import { ApiError, badRequest } from "../errors";
import { getAttachment, getTusUpload, type AttachmentRecord, type TusUpload } from "../store/uploads";
import type { UserRecord } from "../store/users";

/** The caller's own upload; anyone else's is refused as an unknown ID is (Zulip answers both alike). */
export function accessOwnAttachment(h: Hearth, user: UserRecord, id: number): AttachmentRecord {
  const a = getAttachment(h.store, id);
  if (!a || a.owner_id !== user.id) throw badRequest("Invalid attachment");
  return a;
}

/** The error of a tus request: tus clients read the status, so each refusal has its own. */
export const tusError = (status: number, message: string) => new ApiError(message, "BAD_REQUEST", status);

/** The caller's own tus upload; anyone else's is as absent as a made-up ID. */
export function accessTusUpload(h: Hearth, user: UserRecord, id: string): TusUpload {
  const upload = /^[A-Za-z0-9_-]{1,64}$/.test(id) ? getTusUpload(h.store, id) : undefined;
  if (!upload || upload.owner_id !== user.id) throw tusError(404, "Upload not found");
  return upload;
}
