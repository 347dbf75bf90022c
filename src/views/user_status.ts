import type { Hearth } from "../context";
import { getUserStatus, type UserStatus } from "../store/personal";
import type { UserRecord } from "../store/users";
import { userSetting } from "./settings";

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

/** `GET /users/{user_id}/status`. */
export function getUserStatusView(h: Hearth, user: UserRecord): Record<string, unknown> {
  return statusView(getUserStatus(h.store, user.id), user);
}
