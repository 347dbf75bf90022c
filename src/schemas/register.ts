import { DefaultStreamGroup } from "./channels";
import { UserGroup } from "./user_groups";
import { Type as t, type Static } from "@sinclair/typebox";
import { AbsoluteUrl, Bool, GroupSettingValue, Int, List, Nullable, Str, success } from "./common";
import { User } from "./users";
import { Reminder, ScheduledMessage } from "./scheduled_messages";

/**
 * POST /register and GET /events, from Zulip's OpenAPI and what the real clients parse
 * strictly (the mobile app's InitialSnapshot, zulip-terminal's direct indexing).
 * Objects stay open; every field a client requires is required here with its type.
 */

/** OpenAPI `OnboardingStep` (FL 233): a one-time notice or action left to show. */
export const OnboardingStep = t.Object({ type: t.Union([t.Literal("one_time_notice"), t.Literal("one_time_action")]), name: Str() });

export const UserSettings = t.Object({
  twenty_four_hour_time: Nullable(Bool()),
  web_mark_read_on_scroll_policy: t.Union([t.Literal(1), t.Literal(2), t.Literal(3)]),
  starred_message_counts: Bool(),
  fluid_layout_width: Bool(),
  high_contrast_mode: Bool(),
  web_font_size_px: Int(),
  web_line_height_percent: Int(),
  color_scheme: t.Union([t.Literal(1), t.Literal(2), t.Literal(3)]),
  translate_emoticons: Bool(),
  display_emoji_reaction_users: Bool(),
  default_language: Str(),
  web_home_view: Str(),
  web_escape_navigates_to_home_view: Bool(),
  left_side_userlist: Bool(),
  emojiset: Str(),
  demote_inactive_streams: t.Union([t.Literal(1), t.Literal(2), t.Literal(3)]),
  user_list_style: t.Union([t.Literal(1), t.Literal(2), t.Literal(3)]),
  web_stream_unreads_count_display_policy: Int(),
  timezone: Str(),
  enter_sends: Bool(),
  enable_drafts_synchronization: Bool(),
  enable_stream_desktop_notifications: Bool(),
  enable_stream_email_notifications: Bool(),
  enable_stream_push_notifications: Bool(),
  enable_stream_audible_notifications: Bool(),
  notification_sound: Str(),
  enable_desktop_notifications: Bool(),
  enable_sounds: Bool(),
  enable_followed_topic_desktop_notifications: Bool(),
  enable_followed_topic_email_notifications: Bool(),
  enable_followed_topic_push_notifications: Bool(),
  enable_followed_topic_audible_notifications: Bool(),
  email_notifications_batching_period_seconds: Int(),
  enable_offline_email_notifications: Bool(),
  enable_offline_push_notifications: Bool(),
  enable_online_push_notifications: Bool(),
  enable_digest_emails: Bool(),
  enable_marketing_emails: Bool(),
  enable_login_emails: Bool(),
  message_content_in_email_notifications: Bool(),
  pm_content_in_desktop_notifications: Bool(),
  wildcard_mentions_notify: Bool(),
  enable_followed_topic_wildcard_mentions_notify: Bool(),
  desktop_icon_count_display: Int(),
  realm_name_in_email_notifications_policy: Int(),
  automatically_follow_topics_policy: Int(),
  automatically_unmute_topics_in_muted_streams_policy: Int(),
  automatically_follow_topics_where_mentioned: Bool(),
  presence_enabled: Bool(),
  available_notification_sounds: List(Str()),
  emojiset_choices: List(t.Object({ key: Str(), text: Str() })),
  send_private_typing_notifications: Bool(),
  send_stream_typing_notifications: Bool(),
  send_read_receipts: Bool(),
  email_address_visibility: t.Union([1, 2, 3, 4, 5].map((v) => t.Literal(v))),
  receives_typing_notifications: Bool(),
  web_inbox_show_channel_folders: Bool(),
});

/** An outgoing-webhook bot's service, or an embedded bot's (Zulip's get_service_dicts_for_bot). */
export const BotService = t.Union([
  t.Object({ base_url: Str(), interface: Int(), token: Str() }),
  t.Object({ service_name: Str(), config_data: t.Record(t.String(), t.String()) }),
]);

/** FL 474's bot object: the rest of what a bot is lives in its user object. */
export const RealmBot = t.Object(
  {
    user_id: Int(),
    default_sending_stream: Nullable(Str()),
    default_events_register_stream: Nullable(Str()),
    default_all_public_streams: Bool(),
    services: List(BotService),
  },
  { additionalProperties: false },
);

/** A device's E2EE push registration (FL 468): register's `devices` values, and `device` update fields. */
export const DevicePushFields = {
  push_key_id: Nullable(Int()),
  push_token_id: Nullable(Str()),
  pending_push_token_id: Nullable(Str()),
  push_token_last_updated_timestamp: Nullable(Int()),
  push_registration_error_code: Nullable(t.Union([t.Literal("INVALID_BOUNCER_PUBLIC_KEY"), t.Literal("INVALID_ENCRYPTED_PUSH_REGISTRATION"), t.Literal("REQUEST_EXPIRED")])),
};
const DevicePushState = t.Object(DevicePushFields);

export const SavedSnippet = t.Object({ id: Int(), title: Str(), content: Str(), date_created: Int() });

const UnreadMsgs = t.Object({
  count: Int(),
  pms: List(t.Object({ other_user_id: Int(), sender_id: Int(), unread_message_ids: List(Int()) })),
  streams: List(t.Object({ stream_id: Int(), topic: Str(), unread_message_ids: List(Int()) })),
  huddles: List(t.Object({ user_ids_string: Str(), unread_message_ids: List(Int()) })),
  mentions: List(Int()),
  old_unreads_missing: Bool(),
});

/** The register response with every state part (no fetch_event_types). */
export const RegisterResponse = success({
  queue_id: Nullable(Str()),
  last_event_id: Int(),
  zulip_version: Str(),
  zulip_feature_level: t.Integer({ minimum: 277 }),
  service_feature_level: Int(),
  zulip_merge_base: Str(),
  idle_queue_timeout_secs: t.Integer({ minimum: 1 }),
  // Server constants
  max_message_length: t.Literal(10000),
  max_topic_length: t.Literal(60),
  max_stream_name_length: t.Literal(60),
  max_stream_description_length: t.Literal(1024),
  max_channel_folder_name_length: Int(),
  max_channel_folder_description_length: Int(),
  max_file_upload_size_mib: Int(),
  realm_empty_topic_display_name: Str(),
  server_min_deactivated_realm_deletion_days: Nullable(Int()),
  server_max_deactivated_realm_deletion_days: Nullable(Int()),
  realm_topics_policy: t.Union([t.Literal("allow_empty_topic"), t.Literal("disable_empty_topic")]),
  event_queue_longpoll_timeout_seconds: Int(),
  server_presence_ping_interval_seconds: Int(),
  server_report_message_types: t.Array(t.Object({ key: Str(), name: Str() })),
  server_presence_offline_threshold_seconds: Int(),
  server_typing_started_expiry_period_milliseconds: Int(),
  server_typing_stopped_wait_period_milliseconds: Int(),
  server_typing_started_wait_period_milliseconds: Int(),
  server_emoji_data_url: AbsoluteUrl(),
  server_thumbnail_formats: List(t.Object({ name: Str(), max_width: Int(), max_height: Int(), animated: Bool(), format: Str() })),
  // Realm settings the mobile app requires with strict types
  realm_name: Str(),
  realm_wildcard_mention_policy: t.Union([1, 2, 3, 5, 6, 7].map((v) => t.Literal(v))),
  realm_waiting_period_threshold: Int(),
  realm_allow_message_editing: Bool(),
  realm_enable_read_receipts: Bool(),
  realm_presence_disabled: Bool(),
  realm_icon_url: AbsoluteUrl(),
  realm_default_external_accounts: t.Record(Str(), t.Object({ name: Str(), text: Str(), hint: Str(), url_pattern: Str() })),
  realm_message_retention_days: Nullable(Int()),
  realm_delete_own_message_policy: t.Optional(t.Union([1, 2, 3, 4, 5].map((v) => t.Literal(v)))),
  realm_can_delete_any_message_group: GroupSettingValue,
  realm_can_delete_own_message_group: GroupSettingValue,
  realm_message_content_delete_limit_seconds: Nullable(Int()),
  realm_message_content_edit_limit_seconds: Nullable(Int()),
  realm_mandatory_topics: Bool(),
  realm_url: AbsoluteUrl(),
  realm_uri: AbsoluteUrl(),
  realm_description: Str(),
  realm_message_edit_history_visibility_policy: t.Union([t.Literal("all"), t.Literal("moves"), t.Literal("none")]),
  realm_allow_edit_history: Bool(),
  realm_date_created: Int(),
  realm_authentication_methods: t.Record(Str(), t.Object({ enabled: Bool(), available: Bool() })),
  realm_user_settings_defaults: t.Record(Str(), t.Unknown()),
  // The user
  user_id: Int(),
  email: Str(),
  delivery_email: Str(),
  full_name: Str(),
  is_admin: Bool(),
  is_owner: Bool(),
  is_moderator: Bool(),
  is_guest: Bool(),
  avatar_url: Str(),
  avatar_source: Str(),
  realm_users: List(User),
  realm_non_active_users: List(User),
  cross_realm_bots: List(t.Composite([User, t.Object({ is_system_bot: t.Literal(true) })])),
  realm_bots: List(RealmBot),
  user_settings: UserSettings,
  // Parts of other capabilities: documented types
  alert_words: List(Str()),
  custom_profile_fields: List(t.Object({ id: Int(), type: Int(), order: Int(), name: Str(), hint: Str(), field_data: Str() })),
  custom_profile_field_types: t.Record(Str(), t.Object({ id: Int(), name: Str() })),
  drafts: List(t.Unknown()),
  scheduled_messages: List(ScheduledMessage),
  reminders: List(Reminder),
  max_reminder_note_length: Int(),
  onboarding_steps: List(OnboardingStep),
  max_message_id: Int(),
  muted_users: List(t.Object({ id: Int(), timestamp: Int() })),
  presences: t.Record(Str(), t.Unknown()),
  server_timestamp: t.Number(),
  realm_domains: List(t.Object({ domain: Str(), allow_subdomains: Bool() })),
  realm_emoji: t.Record(Str(), t.Object({ id: Str(), name: Str(), source_url: Str(), deactivated: Bool() })),
  realm_linkifiers: List(t.Unknown()),
  realm_filters: List(t.Unknown()),
  realm_playgrounds: List(t.Unknown()),
  realm_user_groups: List(UserGroup),
  realm_embedded_bots: List(t.Unknown()),
  realm_incoming_webhook_bots: List(
    t.Object({
      name: Str(),
      display_name: Str(),
      all_event_types: t.Union([List(Str()), t.Null()]),
      config_options: List(t.Object({ key: Str(), label: Str(), validator: Str() })),
      url_options: List(t.Object({ key: Str(), label: Str(), input_type: Str() })),
    }),
  ),
  recent_private_conversations: List(t.Object({ max_message_id: Int(), user_ids: List(Int()) })),
  subscriptions: List(t.Object({ stream_id: Int(), name: Str(), color: Str(), pin_to_top: Bool(), is_muted: Bool() })),
  unsubscribed: List(t.Unknown()),
  never_subscribed: List(t.Unknown()),
  unread_msgs: UnreadMsgs,
  starred_messages: List(Int()),
  streams: List(t.Object({ stream_id: Int(), name: Str(), description: Str(), rendered_description: Str(), date_created: Int(), invite_only: Bool(), is_web_public: Bool(), history_public_to_subscribers: Bool() })),
  realm_default_streams: List(Int()),
  realm_default_stream_groups: List(DefaultStreamGroup),
  stop_words: List(Str()),
  user_status: t.Record(Str(), t.Unknown()),
  user_topics: List(t.Object({ stream_id: Int(), topic_name: Str(), last_updated: Int(), visibility_policy: Int() })),
  saved_snippets: List(SavedSnippet),
  navigation_views: List(t.Unknown()),
  channel_folders: List(t.Unknown()),
  devices: t.Record(Str(), DevicePushState),
});

/** The payload shapes view builders return, as events and responses carry them. */
export type UserJson = Static<typeof User>;
export type RealmBotJson = Static<typeof RealmBot>;
export type OnboardingStepJson = Static<typeof OnboardingStep>;
