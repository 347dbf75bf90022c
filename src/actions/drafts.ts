import type { Hearth } from "../context";
import { ApiError, badRequest } from "../errors";
import { accessChannel } from "../access/channels";
import { getUser, type UserRecord } from "../store/users";
import { getDraft, putDraft, removeDraft, type Draft } from "../store/drafts";
import { userSetting } from "../views/settings";
import { commit } from "../events/commit";
import { MAX_MESSAGE_LENGTH, normalizeTopic } from "./message_content";

export type DraftInput = Omit<Draft, "id" | "timestamp"> & { timestamp?: number };

const draftMissing = () => new ApiError("Draft does not exist", "BAD_REQUEST", 404);

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
  return commit(h, (tx) => {
    const drafts = checked.map((d) => {
      const draft: Draft = { id: h.store.nextId("draft"), ...d };
      putDraft(h.store, user.id, draft);
      return draft;
    });
    tx.notify({ type: "drafts", op: "add", drafts }, [user.id]);
    return drafts.map((d) => d.id);
  });
}

export async function doEditDraft(h: Hearth, user: UserRecord, id: number, input: DraftInput): Promise<void> {
  assertSyncEnabled(user);
  const checked = checkDraft(h, user, input);
  await commit(h, (tx) => {
    if (!getDraft(h.store, user.id, id)) throw draftMissing();
    const draft: Draft = { id, ...checked };
    putDraft(h.store, user.id, draft);
    tx.notify({ type: "drafts", op: "update", draft }, [user.id]);
  });
}

export async function doDeleteDraft(h: Hearth, user: UserRecord, id: number): Promise<void> {
  assertSyncEnabled(user);
  await commit(h, (tx) => {
    if (!getDraft(h.store, user.id, id)) throw draftMissing();
    removeDraft(h.store, user.id, id);
    tx.notify({ type: "drafts", op: "remove", draft_id: id }, [user.id]);
  });
}
