import type { Hearth } from "../context";
import { badRequest } from "../errors";
import { emojiCodeFor } from "../markdown/emoji";
import { getUserStatus, type UserStatus } from "../store/personal";
import { getUser, putUser, type UserRecord } from "../store/users";
import { userSetting } from "../views/settings";
import { applySettings, notifySettingChanges } from "./settings";
import { committedTransaction } from "./committed";
import { activeUserIds } from "../store/users";
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
  const { account, settingChanges } = await h.store.commit(() => {
    const current = getUserStatus(h.store, user.id) ?? EMPTY;
    const next: UserStatus = { ...current, ...(text !== undefined ? { status_text: text } : {}), ...(emoji ?? {}) };
    if (next.status_text === "" && next.emoji_name === "") h.store.dbs.userStatus.remove(user.id);
    else h.store.dbs.userStatus.put(user.id, next);
    const account = getUser(h.store, user.id)!;
    if (changes.away === undefined) return { account, settingChanges: [] };
    const updated: UserRecord = { ...account, settings: { ...account.settings } };
    const settingChanges = applySettings(updated, { presence_enabled: !changes.away });
    if (settingChanges.length > 0) putUser(h.store, updated);
    return { account: updated, settingChanges };
  });
  const event: Record<string, unknown> = { type: "user_status", user_id: user.id };
  if (changes.away !== undefined) event.away = changes.away;
  if (text !== undefined) event.status_text = text;
  if (emoji) Object.assign(event, emoji);
  h.events.publish(event as { type: string }, activeUserIds(h));
  notifySettingChanges(committedTransaction(h), h, account, settingChanges);
}

/** A status as the API shows it: only the fields that are set (Zulip's format_user_status). */
export function statusView(status: UserStatus | undefined, user: UserRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (userSetting(user, "presence_enabled") === false) out.away = true;
  if (status?.status_text) out.status_text = status.status_text;
  if (status?.emoji_name) {
    out.emoji_name = status.emoji_name;
    out.emoji_code = status.emoji_code;
    out.reaction_type = status.reaction_type;
  }
  return out;
}
