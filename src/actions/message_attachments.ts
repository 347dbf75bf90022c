import type { Hearth } from "../context";
import { getAttachment, getAttachmentByPath, messageAttachmentIds, putAttachment, removeAttachment, type AttachmentRecord } from "../store/uploads";
import type { UserRecord } from "../store/users";
import { canReadAttachment } from "../views/uploads";
import type { AttachmentChanges } from "./uploads";

/**
 * Messages linking uploads (Zulip's `do_claim_attachments`): the message actions call
 * these inside their commit, then announce the changes (src/actions/uploads.ts).
 */

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
