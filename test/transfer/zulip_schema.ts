/**
 * What Zulip 12.x's importer (`do_import_realm` and its helpers in
 * zerver/lib/import_realm.py) reads from each table of an export, written down from
 * a reading of it: the keys it indexes without a default (a missing one is a
 * KeyError, and the import dies), with the type each must have. Foreign keys are
 * named by the table they point into, so every reference can be checked to land on
 * a row of the export (the importer keeps an unknown ID as it is, silently pointing
 * at another organization's row). Every DateTimeField listed in export.py's
 * DATE_FIELDS is here too: `fix_datetime_fields` reads each of them without a default.
 */

export type FieldType = "int" | "int?" | "str" | "str?" | "bool" | "float" | "float?" | "list" | "json?";
export interface TableSchema {
  fields: Record<string, FieldType>;
  /** field → the table whose `id` it names (null allowed where the type says so). */
  refs?: Record<string, string>;
}

const GROUP_REF = "zerver_usergroup";

/** Top-level keys realm.json must have (indexed without a default). */
export const REQUIRED_REALM_KEYS = [
  "zerver_realm",
  "zerver_userprofile",
  "zerver_userprofile_mirrordummy",
  "zerver_userprofile_crossrealm",
  "zerver_client",
  "zerver_stream",
  "zerver_huddle",
  "zerver_recipient",
  "zerver_subscription",
  "zerver_realmauthenticationmethod",
  "zerver_defaultstream",
  "zerver_realmemoji",
  "zerver_realmdomain",
  "zerver_realmfilter",
  "zerver_realmplayground",
  "zerver_userpresence",
  "zerver_useractivity",
  "zerver_useractivityinterval",
  "zerver_customprofilefield",
  "zerver_customprofilefieldvalue",
  "zerver_reaction",
  "import_source",
  // Once zerver_usergroup is present, these become required too.
  "zerver_usergroup",
  "zerver_namedusergroup",
  "zerver_usergroupmembership",
  "zerver_groupgroupmembership",
];

export const REALM_GROUP_SETTING_KEYS = [
  "create_multiuse_invite_group", "can_access_all_users_group", "can_add_subscribers_group", "can_add_custom_emoji_group",
  "can_create_bots_group", "can_create_groups", "can_create_public_channel_group", "can_create_private_channel_group",
  "can_create_web_public_channel_group", "can_create_write_only_bots_group", "can_delete_any_message_group",
  "can_delete_own_message_group", "can_invite_users_group", "can_manage_all_groups", "can_manage_billing_group",
  "can_mention_many_users_group", "can_move_messages_between_channels_group", "can_move_messages_between_topics_group",
  "can_resolve_topics_group", "can_set_delete_message_policy_group", "can_set_topics_policy_group",
  "can_summarize_topics_group", "direct_message_initiator_group", "direct_message_permission_group",
];
const STREAM_GROUP_SETTING_KEYS = [
  "can_add_subscribers_group", "can_administer_channel_group", "can_create_topic_group", "can_delete_any_message_group",
  "can_delete_own_message_group", "can_move_messages_out_of_channel_group", "can_move_messages_within_channel_group",
  "can_remove_subscribers_group", "can_resolve_topics_group", "can_send_message_group", "can_subscribe_group",
];
const NAMED_GROUP_SETTING_KEYS = ["can_add_members_group", "can_join_group", "can_leave_group", "can_manage_group", "can_mention_group", "can_remove_members_group"];

const groupFields = (keys: string[]) => Object.fromEntries(keys.map((k) => [k, "int" as FieldType]));
const groupRefs = (keys: string[]) => Object.fromEntries(keys.map((k) => [k, GROUP_REF]));

const USER: TableSchema = {
  fields: {
    id: "int", realm: "int", email: "str", delivery_email: "str", full_name: "str", role: "int", is_active: "bool", is_bot: "bool",
    bot_type: "int?", bot_owner: "int?", is_mirror_dummy: "bool", date_joined: "float", timezone: "str", avatar_source: "str",
    avatar_version: "int", translate_emoticons: "bool", last_login: "float?", last_reminder: "float?", default_sending_stream: "int?", default_events_register_stream: "int?",
    last_active_message_id: "int?", user_permissions: "list", groups: "list",
  },
  refs: { bot_owner: "zerver_userprofile", default_sending_stream: "zerver_stream", default_events_register_stream: "zerver_stream" },
};

export const TABLES: Record<string, TableSchema> = {
  zerver_realm: {
    fields: { id: "int", date_created: "float", deactivated: "bool", moderation_request_channel: "int?", new_stream_announcements_stream: "int?", signup_announcements_stream: "int?", zulip_update_announcements_stream: "int?", ...groupFields(REALM_GROUP_SETTING_KEYS) },
    refs: { moderation_request_channel: "zerver_stream", new_stream_announcements_stream: "zerver_stream", signup_announcements_stream: "zerver_stream", zulip_update_announcements_stream: "zerver_stream", ...groupRefs(REALM_GROUP_SETTING_KEYS) },
  },
  zerver_userprofile: USER,
  zerver_userprofile_mirrordummy: USER,
  zerver_userprofile_crossrealm: { fields: { id: "int", email: "str", recipient_id: "int" } },
  zerver_client: { fields: { id: "int", name: "str" } },
  zerver_stream: {
    fields: { id: "int", realm: "int", name: "str", description: "str", invite_only: "bool", history_public_to_subscribers: "bool", is_web_public: "bool", deactivated: "bool", date_created: "float", creator: "int?", folder: "int?", ...groupFields(STREAM_GROUP_SETTING_KEYS) },
    refs: { creator: "zerver_userprofile", ...groupRefs(STREAM_GROUP_SETTING_KEYS) },
  },
  zerver_huddle: { fields: { id: "int", group_size: "int", huddle_hash: "str" } },
  zerver_recipient: { fields: { id: "int", type: "int", type_id: "int" } },
  zerver_subscription: {
    fields: { id: "int", user_profile: "int", recipient: "int", active: "bool", color: "str", is_muted: "bool", pin_to_top: "bool" },
    refs: { user_profile: "zerver_userprofile", recipient: "zerver_recipient" },
  },
  zerver_usergroup: { fields: { id: "int", realm: "int" } },
  zerver_namedusergroup: {
    fields: { id: "int", usergroup_ptr: "int", realm_for_sharding: "int", creator: "int?", name: "str", description: "str", is_system_group: "bool", deactivated: "bool", date_created: "float?", ...groupFields(NAMED_GROUP_SETTING_KEYS) },
    refs: { usergroup_ptr: GROUP_REF, creator: "zerver_userprofile", ...groupRefs(NAMED_GROUP_SETTING_KEYS) },
  },
  zerver_usergroupmembership: { fields: { id: "int", user_group: "int", user_profile: "int" }, refs: { user_group: GROUP_REF, user_profile: "zerver_userprofile" } },
  zerver_groupgroupmembership: { fields: { id: "int", supergroup: "int", subgroup: "int" }, refs: { supergroup: GROUP_REF, subgroup: GROUP_REF } },
  zerver_realmauthenticationmethod: { fields: { id: "int", realm: "int", name: "str" } },
  zerver_defaultstream: { fields: { id: "int", realm: "int", stream: "int" }, refs: { stream: "zerver_stream" } },
  zerver_realmemoji: { fields: { id: "int", realm: "int", author: "int?", name: "str", file_name: "str", deactivated: "bool" }, refs: { author: "zerver_userprofile" } },
  zerver_realmdomain: { fields: { id: "int", realm: "int", domain: "str", allow_subdomains: "bool" } },
  zerver_realmfilter: { fields: { id: "int", realm: "int", pattern: "str", url_template: "str", order: "int" } },
  zerver_realmplayground: { fields: { id: "int", realm: "int", name: "str", pygments_language: "str", url_template: "str" } },
  zerver_userpresence: { fields: { id: "int", user_profile: "int", realm: "int", last_active_time: "float?", last_connected_time: "float?" }, refs: { user_profile: "zerver_userprofile" } },
  zerver_customprofilefield: { fields: { id: "int", realm: "int", name: "str", hint: "str", order: "int", field_type: "int", field_data: "str" } },
  zerver_customprofilefieldvalue: { fields: { id: "int", user_profile: "int", field: "int", value: "str" }, refs: { user_profile: "zerver_userprofile", field: "zerver_customprofilefield" } },
  zerver_reaction: { fields: { id: "int", message: "int", user_profile: "int", emoji_name: "str", emoji_code: "str", reaction_type: "str" }, refs: { message: "zerver_message", user_profile: "zerver_userprofile" } },
  zerver_usertopic: {
    fields: { id: "int", user_profile: "int", stream: "int", recipient: "int", topic_name: "str", last_updated: "float", visibility_policy: "int" },
    refs: { user_profile: "zerver_userprofile", stream: "zerver_stream", recipient: "zerver_recipient" },
  },
  zerver_muteduser: { fields: { id: "int", user_profile: "int", muted_user: "int", date_muted: "float" }, refs: { user_profile: "zerver_userprofile", muted_user: "zerver_userprofile" } },
  zerver_alertword: { fields: { id: "int", user_profile: "int", realm: "int", word: "str" }, refs: { user_profile: "zerver_userprofile" } },
  zerver_userstatus: { fields: { id: "int", user_profile: "int", client: "int", timestamp: "float", status_text: "str", emoji_name: "str", emoji_code: "str", reaction_type: "str" }, refs: { user_profile: "zerver_userprofile", client: "zerver_client" } },
  zerver_scheduledmessage: {
    fields: { id: "int", sender: "int", recipient: "int", sending_client: "int", stream: "int?", realm: "int", delivered_message: "int?", subject: "str", content: "str", scheduled_timestamp: "float", request_timestamp: "float", read_by_sender: "bool", has_attachment: "bool", delivered: "bool", failed: "bool", delivery_type: "int" },
    refs: { sender: "zerver_userprofile", recipient: "zerver_recipient", sending_client: "zerver_client", stream: "zerver_stream" },
  },
  zerver_message: {
    fields: { id: "int", sender: "int", recipient: "int", realm: "int", sending_client: "int", subject: "str", content: "str", rendered_content: "str?", date_sent: "float", last_edit_time: "float?", edit_history: "json?", has_attachment: "bool", has_image: "bool", has_link: "bool", is_channel_message: "bool" },
    refs: { sender: "zerver_userprofile", recipient: "zerver_recipient", sending_client: "zerver_client" },
  },
  zerver_usermessage: { fields: { id: "int", user_profile: "int", message: "int", flags_mask: "int" }, refs: { user_profile: "zerver_userprofile", message: "zerver_message" } },
  zerver_attachment: {
    fields: { id: "int", file_name: "str", path_id: "str", owner: "int", realm: "int", create_time: "float", size: "int", messages: "list", scheduled_messages: "list" },
    refs: { owner: "zerver_userprofile" },
  },
};

/** Fields each records.json entry needs (`import_uploads`). */
export const RECORDS: Record<string, string[]> = {
  uploads: ["realm_id", "user_profile_id", "s3_path", "path", "size", "content_type"],
  avatars: ["realm_id", "user_profile_id", "avatar_version", "s3_path", "path"],
  emoji: ["realm_id", "path", "s3_path", "file_name", "name"],
};

export function typeMatches(value: unknown, type: FieldType): boolean {
  const nullable = type.endsWith("?");
  if (value === null) return nullable;
  switch (type.replace("?", "")) {
    case "int":
      return Number.isInteger(value);
    case "float":
      return typeof value === "number" && Number.isFinite(value);
    case "str":
      return typeof value === "string";
    case "bool":
      return typeof value === "boolean";
    case "list":
      return Array.isArray(value);
    case "json":
      return typeof value === "string" && (() => { try { JSON.parse(value); return true; } catch { return false; } })();
  }
  return false;
}
