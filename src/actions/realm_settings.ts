import type { Hearth } from "../context";
import { commit } from "../events/commit";
import { assertAdmin } from "../access/roles";
import { applyGroupSettingUpdate, type GroupSettingRules, type RealmGroupSettingName } from "../access/groups";
import { badRequest, mustBeOwner } from "../errors";
import { getChannel } from "../store/channels";
import { getRealm, putRealm } from "../store/realm";
import { activeUserIds, isOwner, type UserRecord } from "../store/users";
import { realmSetting } from "../store/realm_settings";
import type { GroupSettingValue } from "../store/user_groups";
import { MAX_REALM_NAME_LENGTH } from "./realm";
import { fullMemberIds, notifyFullMembersChanged } from "./user_groups";

/**
 * `PATCH /realm`: the organization settings Hearth enforces, changed by an
 * administrator. Each change is announced to every active user as Zulip does:
 * `realm` `update` per property, and `update_dict` (`property: "default"`) for
 * group settings and the two message-editing settings, whose event form Zulip kept
 * for their history.
 */

export const REALM_BOOLEAN_SETTINGS = [
  "allow_message_editing",
  "enable_read_receipts",
  "mandatory_topics",
  "name_changes_disabled",
  "presence_disabled",
  // Enforced wherever accounts are made: invitation links (src/actions/invites.ts) and POST /users (emailRefusalForRealm).
  "emails_restricted_to_domains",
  // Enforced by PATCH /settings `email` (src/actions/account_emails.ts) and the missed-message emails (src/views/missed_message_email.ts).
  "email_changes_disabled",
  "message_content_allowed_in_email_notifications",
] as const;

/** Zulip's "joining the organization" settings, which only owners change. */
const OWNER_ONLY_SETTINGS: readonly string[] = ["emails_restricted_to_domains", "create_multiuse_invite_group"];

/** Seconds, or null for "unlimited" (the API takes the string). */
export const REALM_TIME_LIMIT_SETTINGS = [
  "message_content_edit_limit_seconds",
  "message_content_delete_limit_seconds",
  "move_messages_within_stream_limit_seconds",
  "move_messages_between_streams_limit_seconds",
] as const;

/** A channel ID, or -1 for none. */
export const REALM_CHANNEL_SETTINGS = ["new_stream_announcements_stream_id", "moderation_request_channel_id"] as const;

/** Zulip's rules for who each organization permission may name. */
const REALM_GROUP_RULES: Partial<Record<RealmGroupSettingName, GroupSettingRules>> = {
  can_add_custom_emoji_group: { allowEveryone: false },
  can_add_subscribers_group: { allowEveryone: false },
  can_create_private_channel_group: { allowEveryone: false },
  can_create_public_channel_group: { allowEveryone: false },
  can_delete_any_message_group: { allowEveryone: false },
  can_delete_own_message_group: { allowEveryone: true },
  can_mention_many_users_group: { allowEveryone: true },
  can_move_messages_between_channels_group: { allowEveryone: false },
  can_move_messages_between_topics_group: { allowEveryone: true },
  can_resolve_topics_group: { allowEveryone: true },
  // Who creates reusable invitation links (src/actions/invites.ts).
  create_multiuse_invite_group: { allowEveryone: false, allowNobody: true },
  // Who sends email invitations (POST /invites; src/actions/email_invites.ts).
  can_invite_users_group: { allowEveryone: false, allowNobody: true },
  direct_message_initiator_group: { allowEveryone: true },
  direct_message_permission_group: { allowEveryone: true },
};
export const REALM_GROUP_SETTINGS = Object.keys(REALM_GROUP_RULES) as RealmGroupSettingName[];

/** Changes announced as `realm` update_dict: the message-editing settings, and the description from FL 464. */
const UPDATE_DICT_SETTINGS = new Set(["allow_message_editing", "message_content_edit_limit_seconds", "description"]);

export const MAX_REALM_DESCRIPTION_LENGTH = 1000;

export interface RealmSettingsInput {
  name?: string;
  description?: string;
  waiting_period_threshold?: number;
  message_edit_history_visibility_policy?: "all" | "moves" | "none";
  /** Before FL 358: true is "all", false is "none". */
  allow_edit_history?: boolean;
  empty_topic_display_name?: string;
  topics_policy?: string;
  /** The other settings by name (booleans, time limits as number | "unlimited", channel IDs, group {new, old}). */
  settings: Record<string, unknown>;
}

type GroupUpdate = { new: GroupSettingValue; old?: GroupSettingValue };

export async function checkUpdateRealm(h: Hearth, actor: UserRecord, input: RealmSettingsInput): Promise<Record<string, unknown>> {
  assertAdmin(actor);
  if (!isOwner(actor) && OWNER_ONLY_SETTINGS.some((name) => input.settings[name] !== undefined)) throw mustBeOwner();
  const wanted: Record<string, unknown> = {};
  const groupUpdates: [RealmGroupSettingName, GroupUpdate][] = [];
  if (input.name !== undefined) {
    const name = input.name.trim();
    if (name === "") throw badRequest("Organization name can't be empty.");
    if ([...name].length > MAX_REALM_NAME_LENGTH) throw badRequest("Organization name is too long.");
    wanted.name = name;
  }
  if (input.description !== undefined) {
    if ([...input.description].length > MAX_REALM_DESCRIPTION_LENGTH) throw badRequest("Organization description is too long.");
    wanted.description = input.description;
  }
  if (input.waiting_period_threshold !== undefined) {
    if (input.waiting_period_threshold < 0) throw badRequest("Invalid waiting_period_threshold");
    wanted.waiting_period_threshold = input.waiting_period_threshold;
  }
  const historyPolicy = input.message_edit_history_visibility_policy ?? (input.allow_edit_history === undefined ? undefined : input.allow_edit_history ? "all" : "none");
  if (historyPolicy !== undefined) wanted.message_edit_history_visibility_policy = historyPolicy;
  if (input.empty_topic_display_name !== undefined) {
    const display = input.empty_topic_display_name.trim();
    if (display === "" || [...display].length > 60) throw badRequest("Invalid empty_topic_display_name");
    wanted.empty_topic_display_name = display;
  }
  if (input.topics_policy !== undefined) {
    if (!["allow_empty_topic", "disable_empty_topic"].includes(input.topics_policy)) throw badRequest("Invalid topics_policy");
    wanted.topics_policy = input.topics_policy;
  }
  for (const name of REALM_BOOLEAN_SETTINGS) if (input.settings[name] !== undefined) wanted[name] = input.settings[name];
  const codeLanguage = input.settings.default_code_block_language;
  if (codeLanguage !== undefined) {
    // What a fence can name (Zulip's FENCE_RE), or "" for none: the renderer writes it
    // into every code block that names no language.
    if (typeof codeLanguage !== "string" || !/^[a-zA-Z0-9_+\-./#]{0,100}$/.test(codeLanguage)) throw badRequest("Invalid default_code_block_language");
    wanted.default_code_block_language = codeLanguage;
  }
  for (const name of REALM_TIME_LIMIT_SETTINGS) {
    const value = input.settings[name];
    if (value === undefined) continue;
    if (value === "unlimited") wanted[name] = null;
    else if (typeof value === "number" && Number.isInteger(value) && value > 0) wanted[name] = value;
    else throw badRequest(`Invalid ${name}`);
  }
  for (const name of REALM_CHANNEL_SETTINGS) {
    const value = input.settings[name];
    if (value === undefined) continue;
    if (value !== -1) {
      const channel = getChannel(h.store, value as number);
      if (!channel || channel.is_archived) throw badRequest("Invalid channel ID");
      if (name === "moderation_request_channel_id" && !channel.invite_only) throw badRequest("Moderation request channel must be private.");
    }
    wanted[name] = value;
  }
  for (const name of REALM_GROUP_SETTINGS) {
    const update = input.settings[name] as GroupUpdate | undefined;
    if (update !== undefined) groupUpdates.push([name, update]);
  }

  // The waiting period decides who is in role:fullmembers.
  const fullMembersBefore = wanted.waiting_period_threshold !== undefined ? fullMemberIds(h) : null;
  return commit(h, (tx) => {
    const realm = getRealm(h.store)!;
    const settings = { ...realm.settings };
    const changed: Record<string, unknown> = {};
    let name = realm.name;
    let description = realm.description;
    for (const [key, value] of Object.entries(wanted)) {
      if (key === "name") {
        if (value !== name) changed.name = name = value as string;
      } else if (key === "description") {
        if (value !== description) changed.description = description = value as string;
      } else if (realmSetting(settings, key) !== value) {
        settings[key] = changed[key] = value;
      }
    }
    const groupsChanged: Record<string, GroupSettingValue> = {};
    for (const [key, update] of groupUpdates) {
      const next = applyGroupSettingUpdate(h, key, update, realmSetting(settings, key) as GroupSettingValue, REALM_GROUP_RULES[key]!);
      if (next !== undefined) settings[key] = groupsChanged[key] = next;
    }
    if (Object.keys(changed).length > 0 || Object.keys(groupsChanged).length > 0) putRealm(h.store, { ...realm, name, description, settings });
    const everyone = activeUserIds(h);
    for (const [property, value] of Object.entries(changed)) {
      tx.notify(
        UPDATE_DICT_SETTINGS.has(property) ? { type: "realm", op: "update_dict", property: "default", data: { [property]: value } } : { type: "realm", op: "update", property, value },
        everyone,
      );
    }
    for (const [property, value] of Object.entries(groupsChanged)) {
      tx.notify({ type: "realm", op: "update_dict", property: "default", data: { [property]: value } }, everyone);
    }
    if (fullMembersBefore && "waiting_period_threshold" in changed) notifyFullMembersChanged(tx, h, fullMembersBefore);
    return changed;
  });
}
