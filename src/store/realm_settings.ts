/**
 * Organization settings with Zulip's defaults for a new realm. A realm record stores
 * only what an administrator changed (`Realm.settings`); these fill in the rest.
 * Register sends each as `realm_<name>`.
 */

/**
 * IDs of Zulip's role-based system groups. Group-valued settings refer to them; the
 * user-groups capability creates the groups with exactly these IDs.
 */
export const SYSTEM_GROUP_IDS = {
  "role:internet": 1,
  "role:everyone": 2,
  "role:members": 3,
  "role:fullmembers": 4,
  "role:moderators": 5,
  "role:administrators": 6,
  "role:owners": 7,
  "role:nobody": 8,
} as const;

const g = SYSTEM_GROUP_IDS;

export const REALM_DEFAULTS: Record<string, unknown> = {
  default_language: "en",
  // FL 358: "all", "moves" or "none" (it replaced the allow_edit_history boolean).
  message_edit_history_visibility_policy: "all",
  add_custom_emoji_policy: 1,
  delete_own_message_policy: 5,
  bot_creation_policy: 1,
  create_public_stream_policy: 1,
  create_private_stream_policy: 1,
  create_web_public_stream_policy: 7,
  invite_to_stream_policy: 1,
  // The mobile app accepts only 1, 2, 3, 5, 6 or 7 here.
  wildcard_mention_policy: 5,
  digest_emails_enabled: false,
  disallow_disposable_email_addresses: true,
  email_changes_disabled: false,
  invite_required: true,
  invite_to_realm_policy: 1,
  move_messages_between_streams_policy: 2,
  inline_image_preview: true,
  inline_url_embed_preview: false,
  mandatory_topics: false,
  topics_policy: "allow_empty_topic",
  // -1: keep messages forever (Zulip's "unlimited").
  message_retention_days: -1,
  require_unique_names: false,
  name_changes_disabled: false,
  avatar_changes_disabled: false,
  emails_restricted_to_domains: false,
  send_welcome_emails: true,
  message_content_allowed_in_email_notifications: true,
  enable_spectator_access: false,
  want_advertise_in_communities_directory: false,
  video_chat_provider: 0,
  jitsi_server_url: null,
  // FL 453's name (giphy_rating before); 0: the GIF picker is off (no GIF service key is configured).
  gif_rating_policy: 0,
  // Settings of later levels Hearth has no feature behind: register shows Zulip's defaults.
  owner_full_content_access: false, // FL 438
  send_channel_events_messages: true, // FL 434
  welcome_message_custom_text: "", // FL 416
  media_preview_size: 100, // FL 469
  default_avatar_source: "G", // FL 456
  require_e2ee_push_notifications: false, // FL 409
  waiting_period_threshold: 0,
  digest_weekday: 1,
  private_message_policy: 1,
  user_group_edit_policy: 1,
  default_code_block_language: "",
  message_content_delete_limit_seconds: 600,
  allow_message_editing: true,
  edit_topic_policy: 5,
  message_content_edit_limit_seconds: 600,
  move_messages_within_stream_limit_seconds: 604800,
  move_messages_between_streams_limit_seconds: 604800,
  // Zulip turns read receipts on for organizations that need an invitation to join, as Hearth's do.
  enable_read_receipts: true,
  presence_disabled: false,
  enable_guest_user_indicator: true,
  enable_guest_user_dm_warning: true,
  org_type: 0,
  plan_type: 1,
  upload_quota_mib: null,
  // -1: no such channel configured.
  new_stream_announcements_stream_id: -1,
  signup_announcements_stream_id: -1,
  zulip_update_announcements_stream_id: -1,
  moderation_request_channel_id: -1,
  empty_topic_display_name: "general chat",
  can_access_all_users_group: g["role:everyone"],
  create_multiuse_invite_group: g["role:administrators"],
  can_create_public_channel_group: g["role:members"],
  can_create_private_channel_group: g["role:members"],
  can_create_web_public_channel_group: g["role:owners"],
  direct_message_initiator_group: g["role:everyone"],
  direct_message_permission_group: g["role:everyone"],
  can_delete_any_message_group: g["role:administrators"],
  can_delete_own_message_group: g["role:everyone"],
  can_create_groups: g["role:members"],
  can_manage_all_groups: g["role:owners"],
  can_add_custom_emoji_group: g["role:members"],
  can_move_messages_between_channels_group: g["role:members"],
  can_move_messages_between_topics_group: g["role:everyone"],
  can_invite_users_group: g["role:members"],
  can_add_subscribers_group: g["role:members"],
  can_create_bots_group: g["role:members"],
  can_create_write_only_bots_group: g["role:members"],
  can_mention_many_users_group: g["role:administrators"],
  can_summarize_topics_group: g["role:everyone"],
  can_manage_billing_group: g["role:administrators"],
  can_resolve_topics_group: g["role:everyone"],
  can_set_topics_policy_group: g["role:moderators"],
  can_set_delete_message_policy_group: g["role:moderators"],
  workplace_users_group: g["role:members"], // FL 477
};

export function realmSetting(settings: Record<string, unknown>, name: string): unknown {
  return name in settings ? settings[name] : REALM_DEFAULTS[name];
}

/** Zulip's default external account types for custom profile fields. */
export const DEFAULT_EXTERNAL_ACCOUNTS = {
  github: { name: "GitHub", text: "GitHub", hint: "Enter your GitHub username", url_pattern: "https://github.com/%(username)s" },
  twitter: { name: "Twitter", text: "Twitter", hint: "Enter your Twitter username", url_pattern: "https://twitter.com/%(username)s" },
};

/** Zulip's message report types (`Realm.REPORT_MESSAGE_REASONS`), key → name; register's `server_report_message_types` (FL 435). */
export const REPORT_MESSAGE_TYPES: Readonly<Record<string, string>> = {
  spam: "Spam",
  harassment: "Harassment",
  inappropriate: "Inappropriate content",
  norms: "Violates community norms",
  other: "Other reason",
};

/** Server-wide limits clients read from register. */
export const SERVER_LIMITS = {
  max_message_length: 10000,
  max_reminder_note_length: 1000,
  max_topic_length: 60,
  max_stream_name_length: 60,
  max_stream_description_length: 1024,
  max_channel_folder_name_length: 60,
  max_channel_folder_description_length: 1024,
  max_file_upload_size_mib: 25,
  max_avatar_file_size_mib: 5,
  max_icon_file_size_mib: 5,
  max_logo_file_size_mib: 5,
  max_bulk_new_subscription_messages: 100,
  password_min_length: 6,
  password_max_length: 100,
  password_min_guesses: 10000,
};

/** The largest upload this server takes, in MiB: HEARTH_MAX_UPLOAD_MIB (ServerConfig.maxUploadMib), else Zulip's default. */
export const maxUploadMib = (h: { config: { maxUploadMib?: number } }): number => h.config.maxUploadMib ?? SERVER_LIMITS.max_file_upload_size_mib;

/** The password lengths the server accepts (`password_min_length`..`password_max_length` in /server_settings). */
export function passwordLengthAllowed(password: string): boolean {
  return password.length >= SERVER_LIMITS.password_min_length && password.length <= SERVER_LIMITS.password_max_length;
}
