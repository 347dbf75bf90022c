import type { Hearth } from "../context";
import { badRequest } from "../errors";
import { getUserStatus, putUserStatus } from "../store/personal";
import type { UserRecord } from "../store/users";
import { activeUserIds } from "./users";
import { checkUpdateSettings } from "./settings";

export interface StatusChanges {
  status_text?: string;
  away?: boolean;
  emoji_name?: string;
  emoji_code?: string;
  reaction_type?: string;
}

const REACTION_TYPES = ["unicode_emoji", "realm_emoji", "zulip_extra_emoji"];

/**
 * `POST /users/me/status`: changes only the fields passed, then one `user_status`
 * event with exactly those fields to every active user (Zulip's do_update_user_status).
 * `away` is the inverse of presence_enabled since FL 148, so it goes through settings.
 */
export async function checkUpdateStatus(h: Hearth, user: UserRecord, changes: StatusChanges): Promise<void> {
  if (Object.values(changes).every((v) => v === undefined)) throw badRequest("Client did not pass any new values.");
  if (changes.status_text !== undefined && [...changes.status_text.trim()].length > 60) {
    throw badRequest("status_text is too long (limit: 60 characters)");
  }
  if ((changes.emoji_code !== undefined || changes.reaction_type !== undefined) && changes.emoji_name === undefined) {
    throw badRequest("Client must pass emoji_name if they pass either emoji_code or reaction_type.");
  }
  let emoji: { emoji_name: string; emoji_code: string; reaction_type: string } | undefined;
  if (changes.emoji_name !== undefined) {
    const name = changes.emoji_name.trim();
    const reactionType = changes.reaction_type ?? "unicode_emoji";
    if (name !== "") {
      if (!REACTION_TYPES.includes(reactionType)) throw badRequest("Invalid emoji type.");
      // Existence is checked against the emoji data once the emoji capability lands;
      // until then the code must at least have its namespace's shape.
      const code = changes.emoji_code ?? "";
      const wellFormed =
        /^[a-z0-9_+-]+$/i.test(name) &&
        (reactionType === "unicode_emoji" ? /^[0-9a-f]{2,6}(-[0-9a-f]{2,6})*$/.test(code) : code !== "");
      if (!wellFormed) throw badRequest(`Emoji '${name}' does not exist`);
      emoji = { emoji_name: name, emoji_code: code, reaction_type: reactionType };
    } else {
      emoji = { emoji_name: "", emoji_code: "", reaction_type: "" };
    }
  }
  const statusText = changes.status_text?.trim();
  if (statusText !== undefined || emoji !== undefined) {
    await h.store.commit(() => {
      const current = getUserStatus(h.store, user.id) ?? { status_text: "", emoji_name: "", emoji_code: "", reaction_type: "" };
      putUserStatus(h.store, user.id, { ...current, ...(statusText !== undefined ? { status_text: statusText } : {}), ...(emoji ?? {}) });
    });
  }
  if (changes.away !== undefined) {
    // Sends the user_settings event; the user_status `away` event follows below.
    await checkUpdateSettings(h, user, { settings: { presence_enabled: !changes.away } }, { statusEvent: false });
  }
  const event: Record<string, unknown> = { type: "user_status", user_id: user.id };
  if (changes.away !== undefined) event.away = changes.away;
  if (statusText !== undefined) event.status_text = statusText;
  if (emoji !== undefined) Object.assign(event, emoji);
  h.events.publish(event as { type: string }, activeUserIds(h));
}
