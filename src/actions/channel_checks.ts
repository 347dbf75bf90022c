/** Validation shared by creating a channel, editing it and subscribing (nothing written here). */
import type { Hearth } from "../context";
import { badRequest, mustBeOwner } from "../errors";
import type { UserRecord } from "../store/users";
import { MAX_CHANNEL_DESCRIPTION_LENGTH, MAX_CHANNEL_NAME_LENGTH, type ChannelRecord } from "../store/channels";
import type { ChannelGroupSettingName } from "../schemas/channels";
import type { GroupSettingValue } from "../store/user_groups";
import { checkGroupSettingValue, isSystemGroupSetting, type GroupSettingRules } from "../access/groups";
import { isOwner } from "../store/users";

/** Zulip's `check_stream_name`: trimmed, non-empty, at most 60 characters, no control characters. */
export function checkChannelName(raw: string): string {
  const name = raw.trim();
  if (name === "") throw badRequest("Channel name can't be empty.");
  if ([...name].length > MAX_CHANNEL_NAME_LENGTH) throw badRequest(`Channel name too long (limit: ${MAX_CHANNEL_NAME_LENGTH} characters).`);
  const chars = [...name];
  for (let i = 0; i < chars.length; i++) {
    const code = chars[i].codePointAt(0)!;
    if (code < 0x20 || (code >= 0x7f && code < 0xa0) || (code >= 0xfdd0 && code <= 0xfdef) || (code & 0xfffe) === 0xfffe) {
      throw badRequest(`Invalid character in channel name, at position ${i + 1}.`);
    }
  }
  return name;
}

/** Descriptions are one line in Zulip: newlines become spaces. */
export function checkChannelDescription(raw: string): string {
  const description = raw.replace(/\r?\n/g, " ");
  if ([...description].length > MAX_CHANNEL_DESCRIPTION_LENGTH) {
    throw badRequest(`Channel description too long (limit: ${MAX_CHANNEL_DESCRIPTION_LENGTH} characters).`);
  }
  return description;
}

export type RetentionInput = number | "realm_default" | "unlimited" | "forever";

/** `message_retention_days`: a positive number of days, "unlimited" (-1) or "realm_default" (null); owners only. */
export function checkMessageRetentionDays(actor: UserRecord, value: RetentionInput): number | null {
  if (!isOwner(actor)) throw mustBeOwner();
  if (value === "realm_default") return null;
  if (value === "unlimited" || value === "forever") return -1;
  if (typeof value !== "number" || !Number.isInteger(value) || value <= 0) {
    throw badRequest(`Bad value for 'message_retention_days': ${value}`);
  }
  return value;
}

/** Which system groups each channel permission may name (Zulip's `stream_permission_group_settings`). */
export const CHANNEL_GROUP_RULES: Record<ChannelGroupSettingName, GroupSettingRules> = {
  can_add_subscribers_group: { allowEveryone: false },
  can_administer_channel_group: { allowEveryone: false },
  can_create_topic_group: { allowEveryone: true },
  can_delete_any_message_group: { allowEveryone: true },
  can_delete_own_message_group: { allowEveryone: true },
  can_move_messages_out_of_channel_group: { allowEveryone: true },
  can_move_messages_within_channel_group: { allowEveryone: true },
  can_remove_subscribers_group: { allowEveryone: true },
  can_resolve_topics_group: { allowEveryone: true },
  can_send_message_group: { allowEveryone: true },
  can_subscribe_group: { allowEveryone: false },
};

export function checkChannelGroupSetting(h: Hearth, name: ChannelGroupSettingName, value: GroupSettingValue): GroupSettingValue {
  return checkGroupSettingValue(h, name, value, CHANNEL_GROUP_RULES[name]);
}


/** `can_create_topic_group` must be role:everyone in private channels with protected history (spec). */
export function checkCreateTopicGroupRule(h: Hearth, channel: Pick<ChannelRecord, "invite_only" | "history_public_to_subscribers" | "groups">): void {
  if (channel.invite_only && !channel.history_public_to_subscribers && !isSystemGroupSetting(h, channel.groups.can_create_topic_group, "role:everyone")) {
    throw badRequest("'can_create_topic_group' must be 'role:everyone' for private channels with protected history.");
  }
}

/** A color as Zulip takes it: `#` and six hex digits. */
export const isHexColor = (value: unknown): value is string => typeof value === "string" && /^#[0-9a-fA-F]{6}$/.test(value);
