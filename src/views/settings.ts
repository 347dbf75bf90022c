import { Type as t, type TSchema } from "@sinclair/typebox";
import type { UserRecord } from "../store/users";

const oneOf = (...values: (number | string)[]) => t.Union(values.map((v) => t.Literal(v)));
const bool = () => t.Boolean();

/**
 * Every personal setting of `user_settings` (register), `PATCH /settings` and the
 * `user_settings` update event, with Zulip's defaults (zerver/models/users.py
 * UserBaseSettings) and the values PATCH accepts. A user record stores only the
 * settings the user changed.
 */
export const USER_SETTINGS: Record<string, { default: unknown; schema: TSchema }> = {
  // Display settings
  // null: the locale's default (FL 408).
  twenty_four_hour_time: { default: false, schema: t.Union([bool(), t.Null()]) },
  dense_mode: { default: true, schema: bool() },
  web_mark_read_on_scroll_policy: { default: 1, schema: oneOf(1, 2, 3) },
  web_channel_default_view: { default: 1, schema: oneOf(1, 2, 3, 4) },
  starred_message_counts: { default: true, schema: bool() },
  receives_typing_notifications: { default: true, schema: bool() },
  web_navigate_to_sent_message: { default: true, schema: bool() },
  fluid_layout_width: { default: false, schema: bool() },
  high_contrast_mode: { default: false, schema: bool() },
  web_font_size_px: { default: 16, schema: t.Integer({ minimum: 12, maximum: 24 }) },
  web_line_height_percent: { default: 140, schema: t.Integer({ minimum: 122, maximum: 158 }) },
  color_scheme: { default: 1, schema: oneOf(1, 2, 3) },
  translate_emoticons: { default: false, schema: bool() },
  display_emoji_reaction_users: { default: true, schema: bool() },
  default_language: { default: "en", schema: t.String({ minLength: 2, maxLength: 50 }) },
  web_home_view: { default: "inbox", schema: oneOf("recent_topics", "recent", "inbox", "all_messages") },
  web_escape_navigates_to_home_view: { default: true, schema: bool() },
  left_side_userlist: { default: false, schema: bool() },
  emojiset: { default: "google", schema: oneOf("google", "google-blob", "twitter", "text") },
  demote_inactive_streams: { default: 1, schema: oneOf(1, 2, 3) },
  user_list_style: { default: 2, schema: oneOf(1, 2, 3) },
  web_animate_image_previews: { default: "on_hover", schema: oneOf("always", "on_hover", "never") },
  web_stream_unreads_count_display_policy: { default: 2, schema: oneOf(1, 2, 3) },
  web_left_sidebar_unreads_count_summary: { default: true, schema: bool() },
  web_left_sidebar_show_channel_folders: { default: true, schema: bool() },
  web_inbox_show_channel_folders: { default: true, schema: bool() },
  web_suggest_update_timezone: { default: true, schema: bool() },
  hide_ai_features: { default: false, schema: bool() },
  enter_sends: { default: false, schema: bool() },
  // Notification settings
  enable_drafts_synchronization: { default: true, schema: bool() },
  enable_stream_desktop_notifications: { default: false, schema: bool() },
  enable_stream_email_notifications: { default: false, schema: bool() },
  enable_stream_push_notifications: { default: false, schema: bool() },
  enable_stream_audible_notifications: { default: false, schema: bool() },
  notification_sound: { default: "zulip", schema: t.String() },
  enable_desktop_notifications: { default: true, schema: bool() },
  enable_sounds: { default: true, schema: bool() },
  enable_followed_topic_desktop_notifications: { default: true, schema: bool() },
  enable_followed_topic_email_notifications: { default: true, schema: bool() },
  enable_followed_topic_push_notifications: { default: true, schema: bool() },
  enable_followed_topic_audible_notifications: { default: true, schema: bool() },
  enable_followed_topic_wildcard_mentions_notify: { default: true, schema: bool() },
  email_notifications_batching_period_seconds: { default: 120, schema: t.Integer() },
  enable_offline_email_notifications: { default: true, schema: bool() },
  enable_offline_push_notifications: { default: true, schema: bool() },
  enable_online_push_notifications: { default: true, schema: bool() },
  enable_digest_emails: { default: true, schema: bool() },
  enable_marketing_emails: { default: true, schema: bool() },
  enable_login_emails: { default: true, schema: bool() },
  message_content_in_email_notifications: { default: true, schema: bool() },
  pm_content_in_desktop_notifications: { default: true, schema: bool() },
  wildcard_mentions_notify: { default: true, schema: bool() },
  desktop_icon_count_display: { default: 1, schema: oneOf(1, 2, 3, 4) },
  realm_name_in_email_notifications_policy: { default: 1, schema: oneOf(1, 2, 3) },
  automatically_follow_topics_policy: { default: 3, schema: oneOf(1, 2, 3, 4) },
  automatically_unmute_topics_in_muted_streams_policy: { default: 2, schema: oneOf(1, 2, 3, 4) },
  automatically_follow_topics_where_mentioned: { default: true, schema: bool() },
  resolved_topic_notice_auto_read_policy: { default: "except_followed", schema: oneOf("always", "except_followed", "never") },
  presence_enabled: { default: true, schema: bool() },
  // Privacy settings
  send_private_typing_notifications: { default: true, schema: bool() },
  send_stream_typing_notifications: { default: true, schema: bool() },
  send_read_receipts: { default: true, schema: bool() },
  allow_private_data_export: { default: false, schema: bool() },
};

/** Notification sounds this server offers (read-only in user_settings). */
export const AVAILABLE_NOTIFICATION_SOUNDS = ["chime-short", "ding", "zulip"];

export const EMOJISET_CHOICES = [
  { key: "google", text: "Google" },
  { key: "twitter", text: "Twitter" },
  { key: "text", text: "Plain text" },
];

/** Languages the default_language setting accepts, with the name the event carries. */
export const LANGUAGE_NAMES: Record<string, string> = {
  en: "English",
  de: "Deutsch",
  es: "español",
  fr: "français",
  it: "italiano",
  ja: "日本語",
  nl: "Nederlands",
  pl: "polski",
  pt: "Português",
  ru: "Русский",
  zh_Hans: "简体中文",
};

export function userSetting(user: UserRecord, name: string): unknown {
  if (name === "timezone") return user.timezone;
  if (name === "email_address_visibility") return user.email_address_visibility;
  return canonicalSettingValue(name, name in user.settings ? user.settings[name] : USER_SETTINGS[name]?.default);
}

/**
 * A setting's value in today's spelling: since FL 454 the Recent view is `web_home_view`
 * "recent"; the older "recent_topics" is still accepted, and stored as (or read back as) "recent".
 */
export function canonicalSettingValue(name: string, value: unknown): unknown {
  return name === "web_home_view" && value === "recent_topics" ? "recent" : value;
}

/** The register `user_settings` object. */
export function userSettingsView(user: UserRecord): Record<string, unknown> {
  const view: Record<string, unknown> = {};
  for (const name of Object.keys(USER_SETTINGS)) view[name] = userSetting(user, name);
  view.timezone = user.timezone;
  view.email_address_visibility = user.email_address_visibility;
  view.available_notification_sounds = AVAILABLE_NOTIFICATION_SOUNDS;
  view.emojiset_choices = EMOJISET_CHOICES;
  return view;
}

/** `realm_user_settings_defaults`: what new users start with. */
/** The organization's overrides of Zulip's defaults for new users (PATCH /realm/user_settings_defaults). */
export function realmUserDefaults(realmSettings: Record<string, unknown> | undefined): Record<string, unknown> {
  return (realmSettings?.user_settings_defaults as Record<string, unknown> | undefined) ?? {};
}

/** `realm_user_settings_defaults`: what a new user starts with. */
export function userSettingsDefaultsView(realmSettings?: Record<string, unknown>): Record<string, unknown> {
  const view: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(USER_SETTINGS)) view[name] = s.default;
  view.email_address_visibility = 1;
  Object.assign(view, realmUserDefaults(realmSettings));
  view.web_home_view = canonicalSettingValue("web_home_view", view.web_home_view);
  view.available_notification_sounds = AVAILABLE_NOTIFICATION_SOUNDS;
  view.emojiset_choices = EMOJISET_CHOICES;
  return view;
}
