import type { Hearth } from "../context";
import { ApiError, badRequest } from "../errors";
import { accessChannel } from "../access/channels";
import { getUser, type UserRecord } from "../store/users";
import { userSetting } from "../views/settings";
import { MAX_MESSAGE_LENGTH, normalizeTopic } from "./message_content";

/** A draft as stored and as the API shows it (Zulip's Draft object). */
export interface Draft {
  id: number;
  type: "" | "stream" | "private";
  to: number[];
  topic: string;
  content: string;
  timestamp: number;
}

export type DraftInput = Omit<Draft, "id" | "timestamp"> & { timestamp?: number };

const draftMissing = () => new ApiError("Draft does not exist", "BAD_REQUEST", 404);

export function getDrafts(h: Hearth, userId: number): Draft[] {
  const drafts = [...h.store.dbs.drafts.getRange({ start: [userId], end: [userId, Infinity] })].map((e) => e.value as Draft);
  // Most recently edited first (Zulip's order).
  return drafts.sort((a, b) => b.timestamp - a.timestamp || b.id - a.id);
}

/** Inside a transaction: every draft the user stored. */
export function deleteAllDrafts(h: Hearth, userId: number): void {
  for (const key of h.store.dbs.drafts.getKeys({ start: [userId], end: [userId, Infinity] })) h.store.dbs.drafts.remove(key);
}

function assertSyncEnabled(user: UserRecord): void {
  if (userSetting(user, "enable_drafts_synchronization") === false) throw badRequest("User has disabled synchronizing drafts.");
}

/** Zulip's draft rules: a channel draft names one accessible channel; a DM draft valid users. */
function checkDraft(h: Hearth, user: UserRecord, input: DraftInput): Omit<Draft, "id"> {
  if (input.content.includes("\u0000") || input.topic.includes("\u0000")) throw badRequest("Content must not contain null bytes");
  if (input.content.length > MAX_MESSAGE_LENGTH) throw badRequest(`Draft content is too long (limit: ${MAX_MESSAGE_LENGTH} characters)`);
  const timestamp = Math.floor(input.timestamp ?? Date.now() / 1000);
  if (timestamp < 0) throw badRequest("Timestamp must not be negative.");
  if (input.type === "stream") {
    if (input.to.length !== 1) throw badRequest("Must specify exactly 1 stream ID for stream messages");
    accessChannel(h, user, input.to[0]);
    return { type: "stream", to: [input.to[0]], topic: normalizeTopic(input.topic), content: input.content, timestamp };
  }
  if (input.type === "private") {
    for (const id of input.to) {
      const target = getUser(h.store, id);
      if (!target || !target.is_active) throw badRequest(`Invalid user ID ${id}`);
    }
    return { type: "private", to: [...new Set(input.to)].sort((a, b) => a - b), topic: "", content: input.content, timestamp };
  }
  return { type: "", to: [], topic: "", content: input.content, timestamp };
}

export async function doCreateDrafts(h: Hearth, user: UserRecord, inputs: DraftInput[]): Promise<number[]> {
  assertSyncEnabled(user);
  const checked = inputs.map((d) => checkDraft(h, user, d));
  const drafts = await h.store.commit(() =>
    checked.map((d) => {
      const draft: Draft = { id: h.store.nextId("draft"), ...d };
      h.store.dbs.drafts.put([user.id, draft.id], draft);
      return draft;
    }),
  );
  h.events.publish({ type: "drafts", op: "add", drafts }, [user.id]);
  return drafts.map((d) => d.id);
}

export async function doEditDraft(h: Hearth, user: UserRecord, id: number, input: DraftInput): Promise<void> {
  assertSyncEnabled(user);
  const checked = checkDraft(h, user, input);
  const draft = await h.store.commit(() => {
    if (!h.store.dbs.drafts.get([user.id, id])) throw draftMissing();
    const next: Draft = { id, ...checked };
    h.store.dbs.drafts.put([user.id, id], next);
    return next;
  });
  h.events.publish({ type: "drafts", op: "update", draft }, [user.id]);
}

export async function doDeleteDraft(h: Hearth, user: UserRecord, id: number): Promise<void> {
  assertSyncEnabled(user);
  await h.store.commit(() => {
    if (!h.store.dbs.drafts.get([user.id, id])) throw draftMissing();
    h.store.dbs.drafts.remove([user.id, id]);
  });
  h.events.publish({ type: "drafts", op: "remove", draft_id: id }, [user.id]);
}
