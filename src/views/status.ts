import type { Hearth } from "../context";
import { defineStatePart } from "../events/state";
import { allUserStatuses, getUserStatus } from "../store/personal";
import { allUsers, type UserRecord } from "../store/users";
import { userSetting } from "./settings";

/**
 * A user's status as the API shows it: only set fields; `away` (deprecated since
 * FL 148) is the inverse of the presence_enabled setting.
 */
export function userStatusView(h: Hearth, user: UserRecord): Record<string, unknown> {
  const view: Record<string, unknown> = {};
  if (userSetting(user, "presence_enabled") === false) view.away = true;
  const status = getUserStatus(h.store, user.id);
  if (status?.status_text) view.status_text = status.status_text;
  if (status?.emoji_name) {
    view.emoji_name = status.emoji_name;
    view.emoji_code = status.emoji_code;
    view.reaction_type = status.reaction_type;
  }
  return view;
}

defineStatePart("user_status", ["user_status"], ({ h }) => {
  const out: Record<string, Record<string, unknown>> = {};
  const ids = new Set<number>();
  for (const [id] of allUserStatuses(h.store)) ids.add(id);
  for (const u of allUsers(h.store)) {
    if (!u.is_active || u.is_system_bot) continue;
    if (!ids.has(u.id) && userSetting(u, "presence_enabled") !== false) continue;
    const view = userStatusView(h, u);
    if (Object.keys(view).length > 0) out[String(u.id)] = view;
  }
  return { user_status: out };
});
