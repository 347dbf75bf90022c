import type { Hearth } from "../context";
import type { EventOf } from "../schemas/events";
import { badRequest, mustBeAdmin } from "../errors";
import { emojiCodeFor } from "../markdown/emoji";
import { getUserStatus, putUserStatus, type UserStatus } from "../store/personal";
import { activeUserIds, getUser, isAdmin, putUser, type UserRecord } from "../store/users";
import { accessUser } from "../access/users";
import { commit } from "../events/commit";
import { applySettings, notifySettingChanges } from "./settings";
import { checkEmojiRequest, emojiTypeByName } from "./realm_emoji";

export const MAX_STATUS_TEXT_LENGTH = 60;

export interface StatusChanges {
  status_text?: string;
  away?: boolean;
  emoji_name?: string;
  emoji_code?: string;
  reaction_type?: string;
}

const EMPTY: UserStatus = { status_text: "", emoji_name: "", emoji_code: "", reaction_type: "" };

/** Resolves and validates the emoji triple; an empty name clears the emoji. */
function checkEmoji(h: Hearth, changes: StatusChanges): Pick<UserStatus, "emoji_name" | "emoji_code" | "reaction_type"> | undefined {
  if (changes.emoji_name === undefined) {
    if (changes.emoji_code !== undefined || changes.reaction_type !== undefined) {
      throw badRequest("Client must pass emoji_name if they pass either emoji_code or reaction_type.");
    }
    return undefined;
  }
  const name = changes.emoji_name.trim();
  if (name === "") return { emoji_name: "", emoji_code: "", reaction_type: "" };
  // The spec's name for Zulip's own extra emoji is service_extra_emoji; clients know zulip_extra_emoji.
  const type = changes.reaction_type === "service_extra_emoji" ? "zulip_extra_emoji" : (changes.reaction_type ?? emojiTypeByName(h, name));
  // A name Hearth knows must name that code; an unknown one with its code is taken, as
  // for reactions (clients know Zulip's names for emoji Hearth knows by another).
  const known = emojiCodeFor(name);
  if (type === "unicode_emoji" && changes.emoji_code !== undefined && known !== undefined && changes.emoji_code !== known) throw badRequest("Invalid emoji code.");
  return checkEmojiRequest(h, { emoji_name: name, emoji_code: changes.emoji_code, reaction_type: type });
}

/**
 * `POST /users/me/status`: only the fields passed change. `away` is the legacy face
 * of the presence_enabled setting (Zulip FL 148), so it is stored there, not twice.
 */
export async function checkUpdateUserStatus(h: Hearth, user: UserRecord, changes: StatusChanges): Promise<void> {
  if (Object.values(changes).every((v) => v === undefined)) throw badRequest("Client did not pass any new values.");
  const text = changes.status_text?.trim();
  if (text !== undefined && [...text].length > MAX_STATUS_TEXT_LENGTH) {
    throw badRequest(`status_text is too long (limit: ${MAX_STATUS_TEXT_LENGTH} characters)`);
  }
  const emoji = checkEmoji(h, changes);
  const event: EventOf<"user_status"> = {
    type: "user_status",
    user_id: user.id,
    ...(changes.away !== undefined ? { away: changes.away } : {}),
    ...(text !== undefined ? { status_text: text } : {}),
    ...emoji,
  };
  await commit(h, (tx) => {
    const current = getUserStatus(h.store, user.id) ?? EMPTY;
    const next: UserStatus = { ...current, ...(text !== undefined ? { status_text: text } : {}), ...(emoji ?? {}) };
    putUserStatus(h.store, user.id, next);
    // The recipients after the commit, from the cache a read inside the transaction would bypass.
    tx.afterCommit(() => tx.notify(event, activeUserIds(h)));
    const account = getUser(h.store, user.id)!;
    if (changes.away === undefined) return;
    const updated: UserRecord = { ...account, settings: { ...account.settings } };
    const settingChanges = applySettings(updated, { presence_enabled: !changes.away });
    if (settingChanges.length > 0) putUser(h.store, updated);
    // After the status event: the queued steps run in order once the commit is visible.
    notifySettingChanges(tx, h, updated, settingChanges);
  });
}

/**
 * `POST /users/{user_id}/status` (FL 407): an organization administrator sets another
 * active user's status, with the same fields and checks as their own (no `away`);
 * administrator bots may too (FL 473).
 */
export async function checkUpdateOtherUserStatus(h: Hearth, actor: UserRecord, targetId: number, changes: Omit<StatusChanges, "away">): Promise<void> {
  if (!isAdmin(actor)) throw mustBeAdmin();
  await checkUpdateUserStatus(h, accessUser(h, targetId), changes);
}
