import type { Hearth } from "../context";
import { commit } from "../events/commit";
import { getUser, putUser, type UserRecord } from "../store/users";
import { AccountLinkError, readAccountToken, TokenPurpose } from "./account_tokens";
import { applySettings, notifySettingChanges } from "./settings";

/**
 * The one-click unsubscribe link of missed-message emails (Zulip's
 * one_click_unsubscribe_link for "missed_messages"): it turns the user's
 * `enable_offline_email_notifications` off without signing in.
 */

/** The account an unsubscribe link is for (these links do not expire, as Zulip's). */
export function accessUnsubscribeToken(h: Hearth, token: string): UserRecord {
  const fields = readAccountToken(h, TokenPurpose.unsubscribe, token);
  const user = fields && fields.k === "missed_messages" && typeof fields.u === "number" ? getUser(h.store, fields.u) : undefined;
  if (!user || !user.is_active) throw new AccountLinkError("This unsubscribe link is not valid.");
  return user;
}

/** The unsubscribe link, confirmed: `enable_offline_email_notifications` goes off, with its settings event. */
export async function doUnsubscribeMissedMessages(h: Hearth, token: string): Promise<UserRecord> {
  return commit(h, (tx) => {
    const user = accessUnsubscribeToken(h, token);
    const next: UserRecord = { ...user, settings: { ...user.settings } };
    const changed = applySettings(next, { enable_offline_email_notifications: false });
    if (changed.length > 0) putUser(h.store, next);
    notifySettingChanges(tx, h, next, changed);
    return next;
  });
}
