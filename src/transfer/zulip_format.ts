import { MessageFlag } from "../store/messages";

/**
 * What both directions of the Zulip realm-export format share: the release the
 * export targets, the UserMessage flag bits, the recipient types and the system
 * group names. Everything here was read in Zulip's server source (the exporter
 * `zerver/lib/export.py`, the importer `zerver/lib/import_realm.py`, the models);
 * docs/zulip-export-research.md names where each fact comes from.
 */

/**
 * The Zulip Server releases an export can target. The importer compares the major
 * version (`zulip_version.split(".")[0]`) with its own and refuses another; the field
 * sets of realm.json follow the 12.x models.
 */
export const SUPPORTED_ZULIP_RELEASES = ["12.0", "12.1"] as const;
export const DEFAULT_ZULIP_RELEASE = "12.1";

/**
 * Zulip's UserMessage flag bits (`AbstractUserMessage.ALL_FLAGS`, bit n = 1 << n).
 * Hearth numbers its own flags the same up to `topic_wildcard_mentioned`; its
 * `has_alert_word` and `historical` sit on other bits (see toZulipFlags).
 */
export const ZulipFlag = {
  read: 1 << 0,
  starred: 1 << 1,
  collapsed: 1 << 2,
  mentioned: 1 << 3,
  stream_wildcard_mentioned: 1 << 4,
  topic_wildcard_mentioned: 1 << 5,
  group_mentioned: 1 << 6,
  force_expand: 1 << 7,
  force_collapse: 1 << 8,
  has_alert_word: 1 << 9,
  historical: 1 << 10,
  is_private: 1 << 11,
  active_mobile_push_notification: 1 << 12,
} as const;

/** Flags whose bit is the same in both numberings. */
const SHARED_FLAGS = ["read", "starred", "collapsed", "mentioned", "stream_wildcard_mentioned", "topic_wildcard_mentioned"] as const;

/** Hearth's flag bits → Zulip's bitfield; `is_private` is set on every direct-message row, as Zulip requires. */
export function toZulipFlags(hearthBits: number, isDirect: boolean): number {
  let bits = 0;
  for (const name of SHARED_FLAGS) if (hearthBits & MessageFlag[name]) bits |= ZulipFlag[name];
  if (hearthBits & MessageFlag.has_alert_word) bits |= ZulipFlag.has_alert_word;
  if (hearthBits & MessageFlag.historical) bits |= ZulipFlag.historical;
  if (isDirect) bits |= ZulipFlag.is_private;
  return bits;
}

/** Zulip's bitfield → Hearth's flags; a group mention counts as a mention (Hearth has one bit for both). */
export function fromZulipFlags(zulipBits: number): number {
  let bits = 0;
  for (const name of SHARED_FLAGS) if (zulipBits & ZulipFlag[name]) bits |= MessageFlag[name];
  if (zulipBits & ZulipFlag.group_mentioned) bits |= MessageFlag.mentioned;
  if (zulipBits & ZulipFlag.has_alert_word) bits |= MessageFlag.has_alert_word;
  if (zulipBits & ZulipFlag.historical) bits |= MessageFlag.historical;
  return bits;
}

/** Zulip's Recipient.type values. */
export const RecipientType = { PERSONAL: 1, STREAM: 2, DIRECT_MESSAGE_GROUP: 3 } as const;

/** Zulip's system groups, smallest first: each is a direct subgroup of the next (nobody stands apart). */
export const ROLE_GROUP_CHAIN = ["role:owners", "role:administrators", "role:moderators", "role:fullmembers", "role:members", "role:everyone", "role:internet"] as const;

/** The system group a role's users are direct members of (Zulip's SYSTEM_USER_GROUP_ROLE_MAP). */
export const ROLE_GROUP: Record<number, string> = {
  100: "role:owners",
  200: "role:administrators",
  300: "role:moderators",
  400: "role:members",
  600: "role:everyone",
};

/**
 * Realm group settings of the 12.x Realm model (`Realm.REALM_PERMISSION_GROUP_SETTINGS`):
 * once an export carries user groups, the importer sets each from the row and none
 * may be missing.
 */
export const REALM_GROUP_SETTINGS = [
  "create_multiuse_invite_group",
  "can_access_all_users_group",
  "can_add_subscribers_group",
  "can_add_custom_emoji_group",
  "can_create_bots_group",
  "can_create_groups",
  "can_create_public_channel_group",
  "can_create_private_channel_group",
  "can_create_web_public_channel_group",
  "can_create_write_only_bots_group",
  "can_delete_any_message_group",
  "can_delete_own_message_group",
  "can_invite_users_group",
  "can_manage_all_groups",
  "can_manage_billing_group",
  "can_mention_many_users_group",
  "can_move_messages_between_channels_group",
  "can_move_messages_between_topics_group",
  "can_resolve_topics_group",
  "can_set_delete_message_policy_group",
  "can_set_topics_policy_group",
  "can_summarize_topics_group",
  "direct_message_initiator_group",
  "direct_message_permission_group",
] as const;

/** The four announcement-channel foreign keys of the realm row (null: none). */
export const REALM_CHANNEL_SETTINGS = [
  "moderation_request_channel",
  "new_stream_announcements_stream",
  "signup_announcements_stream",
  "zulip_update_announcements_stream",
] as const;

/** How many messages go in one `messages-NNNNNN.json` (Zulip's MESSAGE_BATCH_CHUNK_SIZE). */
export const MESSAGES_PER_FILE = 1000;

export const messageFileName = (n: number) => `messages-${String(n).padStart(6, "0")}.json`;

/** Name of the folder inside the archive (Zulip's exports hold exactly one top-level folder). */
export const EXPORT_FOLDER = "zulip-export-hearth";

export class TransferError extends Error {}
