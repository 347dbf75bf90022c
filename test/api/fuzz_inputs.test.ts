/**
 * Hostile inputs against every route: each declared parameter in turn set to values
 * a careless or malicious client might send, path parameters replaced by junk, bodies
 * sent form-encoded and multipart, malformed multipart and invalid UTF-8 bodies. The
 * project's rule: bad input gets a Zulip-style error (`result: "error"`, `msg`, `code`,
 * HTTP 4xx), never a 500, a crash or a hang. Every violation is collected and the test
 * fails once, at the end, with the whole list.
 *
 * The route table below was generated once from the ApiRoutes registrations in
 * src/api/*.ts (method, path, declared parameter names and aliases); the test does not
 * read src/ at run time. Everything is deterministic: fixed value lists, fixed order,
 * no randomness.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:net";
import { expectSuccess, startTestServer, type CastName, type TestServer, type TestUser } from "../kit";

type Method = "GET" | "POST" | "PATCH" | "DELETE" | "PUT";
interface RouteSpec {
  method: Method;
  path: string;
  params: string[];
  auth?: "optional" | "none";
  /** Parameters come from the query string only; the body is the handler's (webhooks). */
  rawBody?: boolean;
}

/** Every ApiRoutes registration (src/api/*.ts), in registration order. */
const ROUTES: RouteSpec[] = [
  { method: "POST", path: "/api/v1/register", params: ["apply_markdown", "client_gravatar", "include_subscribers", "slim_presence", "presence_history_limit_days", "event_types", "fetch_event_types", "all_public_streams", "client_capabilities", "narrow", "idle_queue_timeout", "queue_lifespan_secs"], auth: "optional" },
  { method: "GET", path: "/api/v1/events", params: ["queue_id", "last_event_id", "dont_block", "event_types", "all_public_streams", "narrow", "client_capabilities", "apply_markdown", "client_gravatar", "slim_presence", "lifespan_secs"] },
  { method: "DELETE", path: "/api/v1/events", params: ["queue_id"] },
  { method: "GET", path: "/user_avatars/:user_id/:file", params: [], auth: "none" },
  { method: "GET", path: "/avatar/:who", params: [] },
  { method: "GET", path: "/avatar/:who/medium", params: [] },
  { method: "POST", path: "/api/v1/users/me/avatar", params: [] },
  { method: "DELETE", path: "/api/v1/users/me/avatar", params: [] },
  { method: "GET", path: "/api/v1/realm/emoji", params: [] },
  { method: "POST", path: "/api/v1/realm/emoji/:emoji_name", params: [] },
  { method: "DELETE", path: "/api/v1/realm/emoji/:emoji_name", params: [] },
  { method: "GET", path: "/static/generated/emoji/emoji_api.json", params: [], auth: "none" },
  { method: "GET", path: "/user_avatars/1/emoji/images/:file", params: [], auth: "none" },
  { method: "GET", path: "/user_uploads/*", params: [], auth: "optional" },
  { method: "POST", path: "/api/v1/user_uploads", params: [] },
  { method: "GET", path: "/api/v1/user_uploads/:realm_id/*", params: [] },
  { method: "GET", path: "/api/v1/attachments", params: [] },
  { method: "DELETE", path: "/api/v1/attachments/:attachment_id", params: [] },
  { method: "GET", path: "/api/v1/server_settings", params: [], auth: "none" },
  { method: "POST", path: "/api/v1/fetch_api_key", params: ["username", "password"], auth: "none" },
  { method: "GET", path: "/api/v1/users", params: ["client_gravatar", "include_custom_profile_fields", "user_ids"] },
  { method: "GET", path: "/api/v1/users/me", params: [] },
  { method: "GET", path: "/api/v1/users/:user_id", params: ["client_gravatar", "include_custom_profile_fields"] },
  { method: "POST", path: "/api/v1/users", params: ["email", "password", "full_name"] },
  { method: "PATCH", path: "/api/v1/users/:user_id", params: ["full_name", "role", "profile_data"] },
  { method: "DELETE", path: "/api/v1/users/me", params: [] },
  { method: "DELETE", path: "/api/v1/users/:user_id", params: ["deactivation_notification_comment"] },
  { method: "POST", path: "/api/v1/users/:user_id/reactivate", params: [] },
  { method: "POST", path: "/api/v1/users/me/api_key/regenerate", params: [] },
  { method: "POST", path: "/api/v1/bots", params: ["full_name", "short_name", "bot_type", "payload_url", "interface_type", "service_name", "default_sending_stream", "default_events_register_stream", "default_all_public_streams"] },
  { method: "GET", path: "/api/v1/bots", params: [] },
  { method: "PATCH", path: "/api/v1/bots/:bot_id", params: ["full_name", "role", "bot_owner_id", "service_payload_url", "service_interface", "default_sending_stream", "default_events_register_stream", "default_all_public_streams"] },
  { method: "DELETE", path: "/api/v1/bots/:bot_id", params: [] },
  { method: "GET", path: "/api/v1/bots/:bot_id/api_key", params: [] },
  { method: "POST", path: "/api/v1/bots/:bot_id/api_key/regenerate", params: [] },
  { method: "GET", path: "/api/v1/users/me/alert_words", params: [] },
  { method: "POST", path: "/api/v1/users/me/alert_words", params: ["alert_words"] },
  { method: "DELETE", path: "/api/v1/users/me/alert_words", params: ["alert_words"] },
  { method: "POST", path: "/api/v1/users/me/muted_users/:muted_user_id", params: [] },
  { method: "DELETE", path: "/api/v1/users/me/muted_users/:muted_user_id", params: [] },
  { method: "POST", path: "/api/v1/users/me/status", params: ["status_text", "away", "emoji_name", "emoji_code", "reaction_type"] },
  { method: "GET", path: "/api/v1/users/:user_id/status", params: [] },
  { method: "GET", path: "/api/v1/bot_storage", params: ["keys"] },
  { method: "PUT", path: "/api/v1/bot_storage", params: ["storage"] },
  { method: "DELETE", path: "/api/v1/bot_storage", params: ["keys"] },
  { method: "POST", path: "/api/v1/users/me/onboarding_steps", params: ["onboarding_step"] },
  { method: "GET", path: "/api/v1/saved_snippets", params: [] },
  { method: "POST", path: "/api/v1/saved_snippets", params: ["title", "content"] },
  { method: "PATCH", path: "/api/v1/saved_snippets/:saved_snippet_id", params: ["title", "content"] },
  { method: "DELETE", path: "/api/v1/saved_snippets/:saved_snippet_id", params: [] },
  { method: "GET", path: "/api/v1/realm/profile_fields", params: [] },
  { method: "POST", path: "/api/v1/realm/profile_fields", params: ["field_type", "name", "hint", "field_data", "display_in_profile_summary", "required", "editable_by_user", "use_for_user_matching"] },
  { method: "PATCH", path: "/api/v1/realm/profile_fields", params: ["order"] },
  { method: "PATCH", path: "/api/v1/realm/profile_fields/:field_id", params: ["name", "hint", "field_data", "display_in_profile_summary", "required", "editable_by_user", "use_for_user_matching"] },
  { method: "DELETE", path: "/api/v1/realm/profile_fields/:field_id", params: [] },
  { method: "PATCH", path: "/api/v1/users/me/profile_data", params: ["data"] },
  { method: "DELETE", path: "/api/v1/users/me/profile_data", params: ["data"] },
  { method: "POST", path: "/api/v1/user_topics", params: ["stream_id", "topic", "visibility_policy"] },
  { method: "PATCH", path: "/api/v1/users/me/subscriptions/muted_topics", params: ["stream_id", "stream", "topic", "op"] },
  { method: "GET", path: "/api/v1/drafts", params: [] },
  { method: "POST", path: "/api/v1/drafts", params: ["drafts"] },
  { method: "PATCH", path: "/api/v1/drafts/:draft_id", params: ["draft"] },
  { method: "DELETE", path: "/api/v1/drafts/:draft_id", params: [] },
  { method: "POST", path: "/api/v1/users/me/apns_device_token", params: ["token", "appid"] },
  { method: "DELETE", path: "/api/v1/users/me/apns_device_token", params: ["token"] },
  { method: "POST", path: "/api/v1/users/me/android_gcm_reg_id", params: ["token"] },
  { method: "DELETE", path: "/api/v1/users/me/android_gcm_reg_id", params: ["token"] },
  { method: "POST", path: "/api/v1/mobile_push/test_notification", params: ["token"] },
  { method: "POST", path: "/api/v1/register_client_device", params: [] },
  { method: "POST", path: "/api/v1/remove_client_device", params: ["device_id"] },
  { method: "POST", path: "/api/v1/mobile_push/register", params: ["device_id", "push_key_id", "push_key", "token_kind", "token_id", "bouncer_public_key", "encrypted_push_registration"] },
  { method: "POST", path: "/api/v1/mobile_push/e2ee/test_notification", params: ["device_id"] },
  { method: "PATCH", path: "/api/v1/realm", params: ["name", "description", "waiting_period_threshold", "message_edit_history_visibility_policy", "allow_edit_history", "empty_topic_display_name", "topics_policy", "allow_message_editing", "enable_read_receipts", "mandatory_topics", "name_changes_disabled", "presence_disabled", "emails_restricted_to_domains", "message_content_edit_limit_seconds", "message_content_delete_limit_seconds", "move_messages_within_stream_limit_seconds", "move_messages_between_streams_limit_seconds", "new_stream_announcements_stream_id", "moderation_request_channel_id", "can_add_custom_emoji_group", "can_add_subscribers_group", "can_create_private_channel_group", "can_create_public_channel_group", "can_delete_any_message_group", "can_delete_own_message_group", "can_mention_many_users_group", "can_move_messages_between_channels_group", "can_move_messages_between_topics_group", "can_resolve_topics_group", "create_multiuse_invite_group", "direct_message_initiator_group", "direct_message_permission_group"] },
  { method: "GET", path: "/api/v1/realm/domains", params: [] },
  { method: "POST", path: "/api/v1/realm/domains", params: ["domain", "allow_subdomains"] },
  { method: "PATCH", path: "/api/v1/realm/domains/:domain", params: ["allow_subdomains"] },
  { method: "DELETE", path: "/api/v1/realm/domains/:domain", params: [] },
  { method: "POST", path: "/api/v1/realm/deactivate", params: ["deletion_delay_days"] },
  { method: "GET", path: "/api/v1/navigation_views", params: [] },
  { method: "POST", path: "/api/v1/navigation_views", params: ["fragment", "is_pinned", "name"] },
  { method: "PATCH", path: "/api/v1/navigation_views/*", params: ["is_pinned", "name"] },
  { method: "DELETE", path: "/api/v1/navigation_views/*", params: [] },
  { method: "GET", path: "/api/v1/realm/linkifiers", params: [] },
  { method: "PATCH", path: "/api/v1/realm/linkifiers", params: ["ordered_linkifier_ids"] },
  { method: "POST", path: "/api/v1/realm/filters", params: ["pattern", "url_template", "example_input", "reverse_template", "alternative_url_templates"] },
  { method: "PATCH", path: "/api/v1/realm/filters/:filter_id", params: ["pattern", "url_template", "example_input", "reverse_template", "alternative_url_templates"] },
  { method: "DELETE", path: "/api/v1/realm/filters/:filter_id", params: [] },
  { method: "POST", path: "/api/v1/realm/playgrounds", params: ["name", "pygments_language", "url_template"] },
  { method: "DELETE", path: "/api/v1/realm/playgrounds/:playground_id", params: [] },
  { method: "GET", path: "/api/v1/channel_folders", params: ["include_archived"] },
  { method: "POST", path: "/api/v1/channel_folders/create", params: ["name", "description"] },
  { method: "PATCH", path: "/api/v1/channel_folders", params: ["order"] },
  { method: "PATCH", path: "/api/v1/channel_folders/:channel_folder_id", params: ["name", "description", "is_archived"] },
  { method: "PATCH", path: "/api/v1/users/me/subscriptions", params: ["delete", "add"] },
  { method: "GET", path: "/api/v1/users/me/subscriptions", params: ["include_subscribers"] },
  { method: "POST", path: "/api/v1/users/me/subscriptions", params: ["subscriptions", "principals", "authorization_errors_fatal", "announce", "invite_only", "is_web_public", "is_default_stream", "history_public_to_subscribers", "message_retention_days", "default_push_notifications", "topics_policy", "folder_id", "stream_post_policy", "send_new_subscription_messages", "can_add_subscribers_group", "can_administer_channel_group", "can_create_topic_group", "can_delete_any_message_group", "can_delete_own_message_group", "can_move_messages_out_of_channel_group", "can_move_messages_within_channel_group", "can_remove_subscribers_group", "can_resolve_topics_group", "can_send_message_group", "can_subscribe_group"] },
  { method: "POST", path: "/api/v1/channels/create", params: ["name", "description", "subscribers", "announce", "invite_only", "is_web_public", "is_default_stream", "history_public_to_subscribers", "message_retention_days", "default_push_notifications", "topics_policy", "folder_id", "send_new_subscription_messages", "can_add_subscribers_group", "can_administer_channel_group", "can_create_topic_group", "can_delete_any_message_group", "can_delete_own_message_group", "can_move_messages_out_of_channel_group", "can_move_messages_within_channel_group", "can_remove_subscribers_group", "can_resolve_topics_group", "can_send_message_group", "can_subscribe_group"] },
  { method: "DELETE", path: "/api/v1/users/me/subscriptions", params: ["subscriptions", "principals"] },
  { method: "POST", path: "/api/v1/users/me/subscriptions/properties", params: ["subscription_data"] },
  { method: "POST", path: "/api/v1/users/me/subscriptions/:stream_id", params: ["property", "value"] },
  { method: "PATCH", path: "/api/v1/users/me/subscriptions/:stream_id", params: ["property", "value"] },
  { method: "GET", path: "/api/v1/streams", params: ["include_public", "include_web_public", "include_subscribed", "include_all_active", "include_all", "include_can_access_content", "include_default", "include_owner_subscribed", "exclude_archived"] },
  { method: "GET", path: "/api/v1/streams/:stream_id", params: [] },
  { method: "GET", path: "/api/v1/get_stream_id", params: ["stream"] },
  { method: "GET", path: "/api/v1/streams/:stream_id/members", params: [] },
  { method: "GET", path: "/api/v1/users/:user_id/subscriptions/:stream_id", params: [] },
  { method: "GET", path: "/api/v1/users/:user_id/channels", params: [] },
  { method: "GET", path: "/api/v1/streams/:stream_id/email_address", params: ["sender_id"] },
  { method: "PATCH", path: "/api/v1/streams/:stream_id", params: ["description", "new_name", "is_private", "is_web_public", "history_public_to_subscribers", "is_default_stream", "message_retention_days", "topics_policy", "folder_id", "stream_post_policy", "is_announcement_only", "can_add_subscribers_group", "can_administer_channel_group", "can_create_topic_group", "can_delete_any_message_group", "can_delete_own_message_group", "can_move_messages_out_of_channel_group", "can_move_messages_within_channel_group", "can_remove_subscribers_group", "can_resolve_topics_group", "can_send_message_group", "can_subscribe_group"] },
  { method: "DELETE", path: "/api/v1/streams/:stream_id", params: [] },
  { method: "POST", path: "/api/v1/default_streams", params: ["stream_id"] },
  { method: "DELETE", path: "/api/v1/default_streams", params: ["stream_id"] },
  { method: "POST", path: "/api/v1/default_stream_groups/create", params: ["group_name", "description", "stream_names"] },
  { method: "PATCH", path: "/api/v1/default_stream_groups/:group_id", params: ["new_group_name", "new_description"] },
  { method: "PATCH", path: "/api/v1/default_stream_groups/:group_id/streams", params: ["op", "stream_names"] },
  { method: "DELETE", path: "/api/v1/default_stream_groups/:group_id", params: [] },
  { method: "GET", path: "/api/v1/user_groups", params: ["include_deactivated_groups"] },
  { method: "POST", path: "/api/v1/user_groups/create", params: ["name", "description", "members", "subgroups", "can_add_members_group", "can_join_group", "can_leave_group", "can_manage_group", "can_mention_group", "can_remove_members_group"] },
  { method: "PATCH", path: "/api/v1/user_groups/:user_group_id", params: ["name", "description", "deactivated", "can_add_members_group", "can_join_group", "can_leave_group", "can_manage_group", "can_mention_group", "can_remove_members_group"] },
  { method: "DELETE", path: "/api/v1/user_groups/:user_group_id", params: [], auth: "none" },
  { method: "POST", path: "/api/v1/user_groups/:user_group_id/deactivate", params: [] },
  { method: "POST", path: "/api/v1/user_groups/:user_group_id/members", params: ["add", "delete", "add_subgroups", "delete_subgroups"] },
  { method: "GET", path: "/api/v1/user_groups/:user_group_id/members", params: ["direct_member_only"] },
  { method: "GET", path: "/api/v1/user_groups/:user_group_id/members/:user_id", params: ["direct_member_only"] },
  { method: "POST", path: "/api/v1/user_groups/:user_group_id/subgroups", params: ["add", "delete"] },
  { method: "GET", path: "/api/v1/user_groups/:user_group_id/subgroups", params: ["direct_subgroup_only"] },
  { method: "POST", path: "/api/v1/messages", params: ["type", "to", "topic", "subject", "content", "local_id", "queue_id", "read_by_sender", "widget_content"] },
  { method: "GET", path: "/api/v1/messages", params: ["anchor", "anchor_date", "use_first_unread_anchor", "include_anchor", "num_before", "num_after", "message_ids", "narrow", "client_gravatar", "apply_markdown", "allow_empty_topic_name"] },
  { method: "GET", path: "/api/v1/messages/matches_narrow", params: ["msg_ids", "narrow"] },
  { method: "GET", path: "/api/v1/messages/:message_id", params: ["apply_markdown", "allow_empty_topic_name"] },
  { method: "PATCH", path: "/api/v1/messages/:message_id", params: ["content", "topic", "subject", "stream_id", "propagate_mode", "send_notification_to_old_thread", "send_notification_to_new_thread", "prev_content_sha256"] },
  { method: "DELETE", path: "/api/v1/messages/:message_id", params: [] },
  { method: "GET", path: "/api/v1/messages/:message_id/history", params: [] },
  { method: "GET", path: "/api/v1/messages/:message_id/read_receipts", params: [] },
  { method: "POST", path: "/api/v1/messages/:message_id/reactions", params: ["emoji_name", "emoji_code", "reaction_type"] },
  { method: "DELETE", path: "/api/v1/messages/:message_id/reactions", params: ["emoji_name", "emoji_code", "reaction_type"] },
  { method: "POST", path: "/api/v1/submessage", params: ["message_id", "msg_type", "content"] },
  { method: "POST", path: "/api/v1/messages/render", params: ["content"] },
  { method: "POST", path: "/api/v1/messages/flags", params: ["messages", "op", "flag"] },
  { method: "POST", path: "/api/v1/messages/flags/narrow", params: ["anchor", "include_anchor", "num_before", "num_after", "narrow", "op", "flag"] },
  { method: "POST", path: "/api/v1/mark_all_as_read", params: [] },
  { method: "POST", path: "/api/v1/mark_stream_as_read", params: ["stream_id"] },
  { method: "POST", path: "/api/v1/mark_topic_as_read", params: ["stream_id", "topic_name"] },
  { method: "POST", path: "/api/v1/typing", params: ["op", "type", "to", "stream_id", "topic"] },
  { method: "POST", path: "/api/v1/messages/:message_id/report", params: ["report_type", "description"] },
  { method: "POST", path: "/api/v1/messages/:message_id/typing", params: ["op"] },
  { method: "POST", path: "/api/v1/message_edit_typing", params: ["op", "message_id"] },
  { method: "GET", path: "/api/v1/users/me/:stream_id/topics", params: ["allow_empty_topic_name"] },
  { method: "POST", path: "/api/v1/streams/:stream_id/delete_topic", params: ["topic_name"] },
  { method: "GET", path: "/api/v1/scheduled_messages", params: [] },
  { method: "POST", path: "/api/v1/scheduled_messages", params: ["type", "to", "content", "topic", "scheduled_delivery_timestamp", "read_by_sender"] },
  { method: "PATCH", path: "/api/v1/scheduled_messages/:scheduled_message_id", params: ["type", "to", "content", "topic", "scheduled_delivery_timestamp"] },
  { method: "DELETE", path: "/api/v1/scheduled_messages/:scheduled_message_id", params: [] },
  { method: "GET", path: "/api/v1/reminders", params: [] },
  { method: "POST", path: "/api/v1/reminders", params: ["message_id", "scheduled_delivery_timestamp", "note"] },
  { method: "DELETE", path: "/api/v1/reminders/:reminder_id", params: [] },
  { method: "POST", path: "/api/v1/external/json", params: ["api_key", "stream", "topic"], auth: "optional", rawBody: true },
  { method: "POST", path: "/api/v1/external/slack_incoming", params: ["api_key", "stream", "topic"], auth: "optional", rawBody: true },
  { method: "PATCH", path: "/api/v1/realm/user_settings_defaults", params: ["twenty_four_hour_time", "dense_mode", "web_mark_read_on_scroll_policy", "web_channel_default_view", "starred_message_counts", "receives_typing_notifications", "web_navigate_to_sent_message", "fluid_layout_width", "high_contrast_mode", "web_font_size_px", "web_line_height_percent", "color_scheme", "translate_emoticons", "display_emoji_reaction_users", "default_language", "web_home_view", "web_escape_navigates_to_home_view", "left_side_userlist", "emojiset", "demote_inactive_streams", "user_list_style", "web_animate_image_previews", "web_stream_unreads_count_display_policy", "web_left_sidebar_unreads_count_summary", "web_left_sidebar_show_channel_folders", "web_inbox_show_channel_folders", "web_suggest_update_timezone", "hide_ai_features", "enter_sends", "enable_drafts_synchronization", "enable_stream_desktop_notifications", "enable_stream_email_notifications", "enable_stream_push_notifications", "enable_stream_audible_notifications", "notification_sound", "enable_desktop_notifications", "enable_sounds", "enable_followed_topic_desktop_notifications", "enable_followed_topic_email_notifications", "enable_followed_topic_push_notifications", "enable_followed_topic_audible_notifications", "enable_followed_topic_wildcard_mentions_notify", "email_notifications_batching_period_seconds", "enable_offline_email_notifications", "enable_offline_push_notifications", "enable_online_push_notifications", "enable_digest_emails", "enable_marketing_emails", "enable_login_emails", "message_content_in_email_notifications", "pm_content_in_desktop_notifications", "wildcard_mentions_notify", "desktop_icon_count_display", "realm_name_in_email_notifications_policy", "automatically_follow_topics_policy", "automatically_unmute_topics_in_muted_streams_policy", "automatically_follow_topics_where_mentioned", "resolved_topic_notice_auto_read_policy", "presence_enabled", "send_private_typing_notifications", "send_stream_typing_notifications", "send_read_receipts", "allow_private_data_export", "email_address_visibility"] },
  { method: "PATCH", path: "/api/v1/settings", params: ["twenty_four_hour_time", "dense_mode", "web_mark_read_on_scroll_policy", "web_channel_default_view", "starred_message_counts", "receives_typing_notifications", "web_navigate_to_sent_message", "fluid_layout_width", "high_contrast_mode", "web_font_size_px", "web_line_height_percent", "color_scheme", "translate_emoticons", "display_emoji_reaction_users", "default_language", "web_home_view", "web_escape_navigates_to_home_view", "left_side_userlist", "emojiset", "demote_inactive_streams", "user_list_style", "web_animate_image_previews", "web_stream_unreads_count_display_policy", "web_left_sidebar_unreads_count_summary", "web_left_sidebar_show_channel_folders", "web_inbox_show_channel_folders", "web_suggest_update_timezone", "hide_ai_features", "enter_sends", "enable_drafts_synchronization", "enable_stream_desktop_notifications", "enable_stream_email_notifications", "enable_stream_push_notifications", "enable_stream_audible_notifications", "notification_sound", "enable_desktop_notifications", "enable_sounds", "enable_followed_topic_desktop_notifications", "enable_followed_topic_email_notifications", "enable_followed_topic_push_notifications", "enable_followed_topic_audible_notifications", "enable_followed_topic_wildcard_mentions_notify", "email_notifications_batching_period_seconds", "enable_offline_email_notifications", "enable_offline_push_notifications", "enable_online_push_notifications", "enable_digest_emails", "enable_marketing_emails", "enable_login_emails", "message_content_in_email_notifications", "pm_content_in_desktop_notifications", "wildcard_mentions_notify", "desktop_icon_count_display", "realm_name_in_email_notifications_policy", "automatically_follow_topics_policy", "automatically_unmute_topics_in_muted_streams_policy", "automatically_follow_topics_where_mentioned", "resolved_topic_notice_auto_read_policy", "presence_enabled", "send_private_typing_notifications", "send_stream_typing_notifications", "send_read_receipts", "allow_private_data_export", "full_name", "email", "old_password", "new_password", "timezone", "email_address_visibility"] },
  { method: "POST", path: "/api/v1/users/me/presence", params: ["status", "ping_only", "new_user_input", "slim_presence", "last_update_id", "history_limit_days"] },
  { method: "GET", path: "/api/v1/realm/presence", params: [] },
  { method: "GET", path: "/api/v1/users/:user_id/presence", params: [] },
  { method: "GET", path: "/api/v1/invites", params: [] },
  { method: "POST", path: "/api/v1/invites", params: ["invitee_emails", "invite_expires_in_minutes", "invite_as", "stream_ids", "group_ids", "include_realm_default_subscriptions", "notify_referrer_on_join", "welcome_message_custom_text"] },
  { method: "DELETE", path: "/api/v1/invites/:invite_id", params: [] },
  { method: "POST", path: "/api/v1/invites/:invite_id/resend", params: [] },
  { method: "GET", path: "/api/v1/hearth/email", params: [] },
  { method: "POST", path: "/api/v1/hearth/email/test", params: ["to", "queue"] },
  { method: "POST", path: "/api/v1/invites/multiuse", params: ["invite_expires_in_minutes", "invite_as", "stream_ids", "group_ids", "include_realm_default_subscriptions"] },
  { method: "DELETE", path: "/api/v1/invites/multiuse/:invite_id", params: [] },
];

/** Routes outside ApiRoutes: tus (src/api/tus.ts) and the join page (src/api/invites.ts). */
const TUS_PATHS = ["/api/v1/tus/:id"];
const JOIN_PATHS = ["/join/:key", "/join/:key/"];

/** Run after everything else: they could log the caller out or take the organization down. */
const LAST = new Set(["POST /api/v1/realm/deactivate", "POST /api/v1/users/me/api_key/regenerate", "DELETE /api/v1/users/me"]);

interface Hostile {
  label: string;
  value: string;
  /** Sent byte for byte in form/query encoding instead of percent-encoding `value`. */
  wire?: string;
}

const HOSTILE: Hostile[] = [
  { label: '""', value: "" },
  { label: "null", value: "null" },
  { label: "[]", value: "[]" },
  { label: "{}", value: "{}" },
  { label: "[1,2]", value: "[1,2]" },
  { label: "-1", value: "-1" },
  { label: "0", value: "0" },
  { label: "99999999999999999999", value: "99999999999999999999" },
  { label: "1e308", value: "1e308" },
  { label: "NaN", value: "NaN" },
  { label: "true", value: "true" },
  { label: "70000 chars", value: "x".repeat(70_000) },
  // Fits in a URL (Bun refuses request lines over 16 KiB before the app sees them) but not in an LMDB key lookup (over 4026 bytes).
  { label: "5000 chars", value: "x".repeat(5000) },
  { label: '["5000 chars"]', value: JSON.stringify(["x".repeat(5000)]) },
  // Markdown that looks a name up: a group mention longer than any key.
  { label: "@*4100 chars*", value: `@*${"x".repeat(4100)}*` },
  // Markdown that names an inherited property where a table is read (a 500 once), and TeX that expands.
  { label: "```constructor", value: "```constructor\nx\n``` :constructor: :__proto__: $$\\constructor$$" },
  { label: "TeX macro bomb", value: `$$\\def\\a{${"x".repeat(200)}}\\def\\b{\\a\\a\\a\\a\\a\\a\\a\\a}\\b\\b\\b\\b$$ <time:1e400> <time:${"9".repeat(400)}>` },
  { label: "\\u0000", value: "\u0000" },
  { label: "%ZZ", value: "%ZZ" },
  { label: "\\ud800", value: "\ud800" },
  { label: '{"a":', value: '{"a":' },
  { label: "nested array depth 5000", value: "[".repeat(5000) + "]".repeat(5000) },
  { label: "raw %ZZ on the wire", value: "%ZZ", wire: "%ZZ" },
  { label: "raw %ED%A0%80 (encoded lone surrogate)", value: "\ud800", wire: "%ED%A0%80" },
];
const HOSTILE_PATH = ["0", "-1", "abc", "99999999", "%2e%2e%2f", "x".repeat(5000)];

/**
 * Combinations not sent, with the reason: `null` counts as absent for JSON parameters
 * (src/http/params.ts), so `dont_block=null` is an ordinary blocking long-poll, which
 * parks until an event or the heartbeat by design.
 */
const SKIP = new Set(["GET /api/v1/events dont_block=null"]);

const TIMEOUT_MS = 10_000;
const BOUNDARY = "----HearthFuzzBoundary7f3a";

/** UTF-8, except that lone surrogates are written as their 3-byte form (invalid UTF-8, as a buggy client would send). */
function wtf8(text: string): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
  }
  return new Uint8Array(out);
}

function percentEncode(text: string): string {
  let out = "";
  for (const b of wtf8(text)) {
    const ch = String.fromCharCode(b);
    out += /[A-Za-z0-9\-_.~]/.test(ch) ? ch : "%" + b.toString(16).toUpperCase().padStart(2, "0");
  }
  return out;
}

/** A parameter on the wire: the text to encode, or (`wire`) text already encoded. */
interface WireValue {
  text: string;
  wire?: string;
}
type WireParams = [string, WireValue][];

const asText = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v));
const wireParams = (params: Record<string, unknown>): WireParams => Object.entries(params).map(([k, v]) => [k, { text: asText(v) }]);

function formEncode(params: WireParams): string {
  return params.map(([k, v]) => `${percentEncode(k)}=${v.wire ?? percentEncode(v.text)}`).join("&");
}

function multipartEncode(params: WireParams, files: { name: string; filename: string; type: string; data: Uint8Array }[] = []): Uint8Array {
  const enc = new TextEncoder();
  const chunks: Uint8Array[] = [];
  for (const [k, v] of params) {
    chunks.push(enc.encode(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n`), wtf8(v.text), enc.encode("\r\n"));
  }
  for (const f of files) {
    chunks.push(enc.encode(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${f.name}"; filename="${f.filename}"\r\nContent-Type: ${f.type}\r\n\r\n`), f.data, enc.encode("\r\n"));
  }
  chunks.push(enc.encode(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}

interface Answer {
  status: number;
  contentType: string;
  text: string;
  ms: number;
}
type Outcome = Answer | { hang: true; ms: number } | { failed: string; ms: number };

const basic = (u: TestUser) => "Basic " + Buffer.from(`${u.email}:${u.apiKey}`).toString("base64");

/** One request through fetch (keep-alive), abandoned after TIMEOUT_MS. */
async function send(baseUrl: string, method: string, pathAndQuery: string, headers: Record<string, string>, body?: Uint8Array | string): Promise<Outcome> {
  const start = performance.now();
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"hang">((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve("hang");
    }, TIMEOUT_MS);
  });
  const work = (async (): Promise<Outcome> => {
    try {
      const res = await fetch(baseUrl + pathAndQuery, { method, headers, body: body as BodyInit | undefined, signal: controller.signal, redirect: "manual" });
      const text = await res.text();
      return { status: res.status, contentType: res.headers.get("content-type") ?? "", text, ms: performance.now() - start };
    } catch (e) {
      return { failed: String(e), ms: performance.now() - start };
    }
  })();
  const result = await Promise.race([work, timeout]);
  clearTimeout(timer);
  return result === "hang" ? { hang: true, ms: performance.now() - start } : result;
}

/** One request written byte for byte on its own connection (bodies on GET, broken framing), abandoned after TIMEOUT_MS. */
function sendRaw(baseUrl: string, method: string, pathAndQuery: string, headers: Record<string, string>, body: Uint8Array): Promise<Outcome> {
  const { hostname, port } = new URL(baseUrl);
  const start = performance.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (o: Outcome) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(o);
    };
    const timer = setTimeout(() => finish({ hang: true, ms: performance.now() - start }), TIMEOUT_MS);
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      const head = Object.entries({ ...headers, "content-length": String(body.length) })
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join("");
      socket.write(Buffer.from(`${method} ${pathAndQuery} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n${head}Connection: close\r\n\r\n`, "latin1"));
      socket.write(body);
    });
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", (e) => finish({ failed: String(e), ms: performance.now() - start }));
    socket.on("close", () => {
      const raw = Buffer.concat(chunks);
      const headerEnd = raw.indexOf("\r\n\r\n");
      const head = raw.subarray(0, headerEnd === -1 ? raw.length : headerEnd).toString("latin1");
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]);
      if (!status) return finish({ failed: `not an HTTP response: ${JSON.stringify(head.slice(0, 100))}`, ms: performance.now() - start });
      let payload = headerEnd === -1 ? Buffer.alloc(0) : raw.subarray(headerEnd + 4);
      if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
        const parts: Buffer[] = [];
        let at = 0;
        while (at < payload.length) {
          const eol = payload.indexOf("\r\n", at);
          if (eol === -1) break;
          const size = parseInt(payload.subarray(at, eol).toString("latin1"), 16);
          if (!size) break;
          parts.push(payload.subarray(eol + 2, eol + 2 + size));
          at = eol + 2 + size + 2;
        }
        payload = Buffer.concat(parts);
      }
      const contentType = /\r\ncontent-type:\s*([^\r\n]*)/i.exec(head)?.[1] ?? "";
      finish({ status, contentType, text: payload.toString("utf-8"), ms: performance.now() - start });
    });
  });
}

/** How strictly an answer is judged: Zulip API routes must answer the JSON envelope. */
type Judge = "api" | "slack" | "page";

function judgeOf(method: string, path: string): Judge {
  if (path === "/api/v1/external/slack_incoming") return "slack";
  // Files, avatars, the join page and tus HEAD: not Zulip API answers (images, redirects, HTML, bodiless HEAD).
  if (!path.startsWith("/api/v1/") || method === "HEAD" || method === "OPTIONS") return "page";
  return "api";
}

/** What is wrong with an answer, or null. */
function problem(judge: Judge, o: Outcome): string | null {
  if ("hang" in o) return `no answer within ${TIMEOUT_MS / 1000} s (hang)`;
  if ("failed" in o) return `connection failed: ${o.failed}`;
  if (o.status >= 500) return `HTTP ${o.status}`;
  if (judge === "page") return null;
  let body: any;
  try {
    body = JSON.parse(o.text);
  } catch {
    return `HTTP ${o.status} with a body that is not JSON (content-type ${JSON.stringify(o.contentType)})`;
  }
  if (judge === "slack" && body && typeof body.ok === "boolean") {
    return body.ok || typeof body.error === "string" ? null : `HTTP ${o.status}: Slack-style failure without an error string`;
  }
  if (body === null || typeof body !== "object") return `HTTP ${o.status}: JSON body is not an object`;
  if (body.result !== "success" && body.result !== "error") return `HTTP ${o.status}: result is ${JSON.stringify(body.result)}`;
  if (body.result === "error") {
    if (typeof body.msg !== "string" || typeof body.code !== "string") return `HTTP ${o.status}: error without string msg and code`;
    if (o.status < 400) return `HTTP ${o.status} with result "error"`;
  } else if (o.status >= 400) return `HTTP ${o.status} with result "success"`;
  return null;
}

interface Violation {
  who: string;
  method: string;
  path: string;
  input: string;
  problem: string;
  excerpt: string;
}

let s: TestServer;
/** IDs and names the sample requests point at, filled by beforeAll. */
const fx: Record<string, any> = {};

beforeAll(async () => {
  // Hostile credentials (fetch_api_key, webhook keys) count as failed logins: keep the
  // limiter out of the way, or every later request would be a 429.
  s = await startTestServer({ env: { HEARTH_AUTH_FAILURES_PER_IP: "10000000", HEARTH_LOGIN_FAILURES_PER_USER: "10000000" } });
  const iago = s.as("iago");
  fx.denmark = await s.createChannel("iago", "Denmark", ["hamlet", "polonius"]);
  fx.scratch = await s.createChannel("iago", "Scratch", ["hamlet", "polonius"]);
  fx.messageId = expectSuccess(await iago.post("/messages", { type: "stream", to: fx.denmark, topic: "fuzz", content: "hello fuzz" })).id;
  fx.hamletMessageId = expectSuccess(await s.as("hamlet").post("/messages", { type: "stream", to: fx.denmark, topic: "fuzz", content: "hello from hamlet" })).id;
  fx.bot = (await s.createBot("iago", { full_name: "Fuzz Bot", short_name: "fuzzbot" })).id;
  fx.victim = (await s.createUser("fuzzvictim")).id;
  fx.groupId = expectSuccess(await iago.post("/user_groups/create", { name: "Fuzzers", description: "d", members: [s.users.hamlet.id] })).group_id;
  fx.draftId = expectSuccess(await iago.post("/drafts", { drafts: [{ type: "stream", to: [fx.denmark], topic: "t", content: "c" }] })).ids[0];
  fx.snippetId = expectSuccess(await iago.post("/saved_snippets", { title: "t", content: "c" })).saved_snippet_id;
  const tomorrow = Math.floor(Date.now() / 1000) + 86_400;
  fx.tomorrow = tomorrow;
  fx.scheduledId = expectSuccess(await iago.post("/scheduled_messages", { type: "stream", to: fx.denmark, topic: "fuzz", content: "later", scheduled_delivery_timestamp: tomorrow })).scheduled_message_id;
  fx.reminderId = expectSuccess(await iago.post("/reminders", { message_id: fx.messageId, scheduled_delivery_timestamp: tomorrow })).reminder_id;
  fx.filterId = expectSuccess(await iago.post("/realm/filters", { pattern: "#(?P<id>[0-9]+)", url_template: "https://example.com/{id}" })).id;
  fx.playgroundId = expectSuccess(await iago.post("/realm/playgrounds", { name: "P", pygments_language: "Python", url_template: "https://p.example/{code}" })).id;
  fx.fieldId = expectSuccess(await iago.post("/realm/profile_fields", { field_type: 1, name: "Fuzz field" })).id;
  fx.folderId = expectSuccess(await iago.post("/channel_folders/create", { name: "Fuzz folder" })).channel_folder_id;
  expectSuccess(await iago.post("/default_stream_groups/create", { group_name: "Fuzz channels", description: "d", stream_names: ["Denmark"] }));
  fx.defaultGroupId = expectSuccess(await iago.post("/register", { fetch_event_types: ["default_stream_groups"] })).realm_default_stream_groups[0].id;
  expectSuccess(await s.as("desdemona").post("/realm/domains", { domain: "fuzz.example", allow_subdomains: false }));
  expectSuccess(await iago.post("/navigation_views", { fragment: "narrow/is/starred", is_pinned: true }));
  expectSuccess(await iago.post("/invites/multiuse", {}));
  fx.inviteId = expectSuccess(await iago.get("/invites")).invites[0].id;
  fx.inviteKey = /\/join\/([^/]+)/.exec(expectSuccess(await iago.post("/invites/multiuse", {})).invite_link)?.[1] ?? "nokey";
  const upload = expectSuccess(await iago.post("/user_uploads", { file: new File(["hello"], "hello.txt", { type: "text/plain" }) }, { multipart: true }));
  fx.uploadUrl = upload.url as string; // /user_uploads/<realm>/<…>/hello.txt
  fx.attachmentId = expectSuccess(await iago.get("/attachments")).attachments[0].id;
  fx.queue = {} as Record<string, string>;
  for (const who of ["iago", "polonius"] as CastName[]) fx.queue[who] = expectSuccess(await s.as(who).post("/register", { event_types: ["message"] })).queue_id;
});
afterAll(() => s?.stop());

/** A valid value for each path parameter, by name; some routes aim at throwaway objects. */
function samplePath(route: string, name: string): string {
  const key = `${route} :${name}`;
  const override: Record<string, () => unknown> = {
    "PATCH /api/v1/streams/:stream_id :stream_id": () => fx.scratch,
    "DELETE /api/v1/streams/:stream_id :stream_id": () => fx.scratch,
    "POST /api/v1/streams/:stream_id/delete_topic :stream_id": () => fx.scratch,
    "PATCH /api/v1/users/:user_id :user_id": () => fx.victim,
    "DELETE /api/v1/users/:user_id :user_id": () => fx.victim,
    "POST /api/v1/users/:user_id/reactivate :user_id": () => fx.victim,
  };
  if (override[key]) return String(override[key]());
  const byName: Record<string, () => unknown> = {
    user_id: () => s.users.hamlet.id,
    muted_user_id: () => s.users.hamlet.id,
    stream_id: () => fx.denmark,
    message_id: () => fx.messageId,
    bot_id: () => fx.bot,
    draft_id: () => fx.draftId,
    saved_snippet_id: () => fx.snippetId,
    scheduled_message_id: () => fx.scheduledId,
    reminder_id: () => fx.reminderId,
    filter_id: () => fx.filterId,
    playground_id: () => fx.playgroundId,
    field_id: () => fx.fieldId,
    channel_folder_id: () => fx.folderId,
    group_id: () => fx.defaultGroupId,
    user_group_id: () => fx.groupId,
    invite_id: () => fx.inviteId,
    attachment_id: () => fx.attachmentId,
    domain: () => "fuzz.example",
    emoji_name: () => "fuzzemoji",
    who: () => s.users.hamlet.id,
    file: () => (route.includes("/emoji/") ? "1.png" : "0123456789abcdef0123456789abcdef.png"),
    realm_id: () => fx.uploadUrl.split("/")[2],
    "*": () => (route.includes("navigation_views") ? "narrow/is/starred" : route.startsWith("GET /api/v1/user_uploads") ? fx.uploadUrl.split("/").slice(3).join("/") : fx.uploadUrl.split("/").slice(2).join("/")),
    id: () => "0123456789abcdef",
    key: () => fx.inviteKey,
  };
  return String(byName[name]?.() ?? "1");
}

/** Valid parameters for each route (so one hostile parameter gets past the others), as `who`. */
function baseline(route: string, who: CastName): Record<string, unknown> {
  const topic = "fuzz";
  const table: Record<string, () => Record<string, unknown>> = {
    "GET /api/v1/events": () => ({ queue_id: fx.queue[who], dont_block: true }),
    "DELETE /api/v1/events": () => ({ queue_id: "no-such-queue" }),
    "POST /api/v1/fetch_api_key": () => ({ username: "hamlet@zulip.test", password: "wrong password" }),
    "POST /api/v1/users": () => ({ email: "fuzz-new@zulip.test", password: "a long enough password 123", full_name: "Fuzz New" }),
    "POST /api/v1/bots": () => ({ full_name: "Fuzz Bot Two", short_name: `fuzzbot2${who}` }),
    "POST /api/v1/users/me/alert_words": () => ({ alert_words: ["fuzz"] }),
    "DELETE /api/v1/users/me/alert_words": () => ({ alert_words: ["fuzz"] }),
    "PUT /api/v1/bot_storage": () => ({ storage: { k: "v" } }),
    "POST /api/v1/users/me/onboarding_steps": () => ({ onboarding_step: "intro_inbox_view_modal" }),
    "POST /api/v1/saved_snippets": () => ({ title: "t", content: "c" }),
    "POST /api/v1/realm/profile_fields": () => ({ field_type: 1, name: "Fuzz field 2" }),
    "PATCH /api/v1/realm/profile_fields": () => ({ order: [fx.fieldId] }),
    "PATCH /api/v1/users/me/profile_data": () => ({ data: [{ id: fx.fieldId, value: "x" }] }),
    "DELETE /api/v1/users/me/profile_data": () => ({ data: [fx.fieldId] }),
    "POST /api/v1/user_topics": () => ({ stream_id: fx.denmark, topic, visibility_policy: 1 }),
    "PATCH /api/v1/users/me/subscriptions/muted_topics": () => ({ stream_id: fx.denmark, topic, op: "add" }),
    "PATCH /api/v1/drafts/:draft_id": () => ({ draft: { type: "stream", to: [fx.denmark], topic: "t", content: "c" } }),
    "POST /api/v1/users/me/apns_device_token": () => ({ token: "abc123", appid: "org.zulip.Zulip" }),
    "DELETE /api/v1/users/me/apns_device_token": () => ({ token: "abc123" }),
    "POST /api/v1/users/me/android_gcm_reg_id": () => ({ token: "abc123" }),
    "DELETE /api/v1/users/me/android_gcm_reg_id": () => ({ token: "abc123" }),
    "POST /api/v1/remove_client_device": () => ({ device_id: 1 }),
    "POST /api/v1/mobile_push/register": () => ({ device_id: 1 }),
    "POST /api/v1/realm/domains": () => ({ domain: "fuzz2.example", allow_subdomains: false }),
    "PATCH /api/v1/realm/domains/:domain": () => ({ allow_subdomains: true }),
    "POST /api/v1/navigation_views": () => ({ fragment: "narrow/is/mentioned", is_pinned: true }),
    "PATCH /api/v1/realm/linkifiers": () => ({ ordered_linkifier_ids: [fx.filterId] }),
    "POST /api/v1/realm/filters": () => ({ pattern: "#(?P<id>[0-9]+)", url_template: "https://example.com/{id}" }),
    "PATCH /api/v1/realm/filters/:filter_id": () => ({ pattern: "#(?P<id>[0-9]+)", url_template: "https://example.com/{id}" }),
    "POST /api/v1/realm/playgrounds": () => ({ name: "P2", pygments_language: "Python", url_template: "https://p.example/{code}" }),
    "POST /api/v1/channel_folders/create": () => ({ name: `Fuzz folder ${who}` }),
    "PATCH /api/v1/channel_folders": () => ({ order: [fx.folderId] }),
    "POST /api/v1/users/me/subscriptions": () => ({ subscriptions: [{ name: "Fuzz sub" }] }),
    "POST /api/v1/channels/create": () => ({ name: `Fuzz created ${who}`, subscribers: [] }),
    "DELETE /api/v1/users/me/subscriptions": () => ({ subscriptions: ["Fuzz sub"] }),
    "POST /api/v1/users/me/subscriptions/properties": () => ({ subscription_data: [{ stream_id: fx.denmark, property: "color", value: "#aabbcc" }] }),
    "POST /api/v1/users/me/subscriptions/:stream_id": () => ({ property: "color", value: "#aabbcc" }),
    "PATCH /api/v1/users/me/subscriptions/:stream_id": () => ({ property: "color", value: "#aabbcc" }),
    "GET /api/v1/get_stream_id": () => ({ stream: "Denmark" }),
    "POST /api/v1/default_streams": () => ({ stream_id: fx.scratch }),
    "DELETE /api/v1/default_streams": () => ({ stream_id: fx.scratch }),
    "POST /api/v1/default_stream_groups/create": () => ({ group_name: `Fuzz group ${who}`, description: "d", stream_names: ["Scratch"] }),
    "PATCH /api/v1/default_stream_groups/:group_id": () => ({ new_description: "changed" }),
    "PATCH /api/v1/default_stream_groups/:group_id/streams": () => ({ op: "add", stream_names: ["Scratch"] }),
    "POST /api/v1/user_groups/create": () => ({ name: `Fuzz group ${who}`, description: "d", members: [s.users.hamlet.id] }),
    "POST /api/v1/messages": () => ({ type: "stream", to: fx.denmark, topic, content: "hi" }),
    "GET /api/v1/messages": () => ({ anchor: "newest", num_before: 5, num_after: 0, narrow: [] }),
    "GET /api/v1/messages/matches_narrow": () => ({ msg_ids: [fx.messageId], narrow: [] }),
    "POST /api/v1/messages/:message_id/reactions": () => ({ emoji_name: "smile" }),
    "DELETE /api/v1/messages/:message_id/reactions": () => ({ emoji_name: "smile" }),
    "POST /api/v1/submessage": () => ({ message_id: fx.messageId, msg_type: "widget", content: "{}" }),
    "POST /api/v1/messages/render": () => ({ content: "hi" }),
    "POST /api/v1/messages/flags": () => ({ messages: [fx.messageId], op: "add", flag: "read" }),
    "POST /api/v1/messages/flags/narrow": () => ({ anchor: "newest", num_before: 5, num_after: 0, narrow: [], op: "add", flag: "read" }),
    "POST /api/v1/mark_stream_as_read": () => ({ stream_id: fx.denmark }),
    "POST /api/v1/mark_topic_as_read": () => ({ stream_id: fx.denmark, topic_name: topic }),
    "POST /api/v1/typing": () => ({ op: "start", type: "stream", stream_id: fx.denmark, topic }),
    "POST /api/v1/messages/:message_id/report": () => ({ report_type: "spam", description: "x" }),
    "POST /api/v1/messages/:message_id/typing": () => ({ op: "start" }),
    "POST /api/v1/message_edit_typing": () => ({ op: "start", message_id: fx.messageId }),
    "POST /api/v1/streams/:stream_id/delete_topic": () => ({ topic_name: "no such topic" }),
    "POST /api/v1/scheduled_messages": () => ({ type: "stream", to: fx.denmark, content: "later", topic, scheduled_delivery_timestamp: fx.tomorrow }),
    "POST /api/v1/reminders": () => ({ message_id: fx.messageId, scheduled_delivery_timestamp: fx.tomorrow }),
    "POST /api/v1/users/me/presence": () => ({ status: "active" }),
  };
  return table[route]?.() ?? {};
}

function fillPath(route: RouteSpec, replace?: { name: string; value: string }): string {
  const key = `${route.method} ${route.path}`;
  return route.path.replace(/:(\w+)|\*/g, (_match, name: string | undefined) => {
    const n = name ?? "*";
    if (replace && replace.name === n) return replace.value;
    return samplePath(key, n);
  });
}

const excerpt = (o: Outcome): string => ("text" in o ? o.text.replace(/\s+/g, " ").slice(0, 200) : "");
const short = (text: string) => (text.length > 40 ? `${JSON.stringify(text.slice(0, 20))}…(${text.length} chars)` : JSON.stringify(text));

test(
  "every route answers hostile input with a Zulip error: no 5xx, no non-JSON, no hang",
  async () => {
    const violations: Violation[] = [];
    let requests = 0;
    const slowest: { ms: number; what: string }[] = [];
    const record = (who: string, method: string, path: string, input: string, o: Outcome) => {
      requests++;
      slowest.push({ ms: o.ms, what: `${who} ${method} ${path.slice(0, 80)} ${input.slice(0, 80)}` });
      if (slowest.length > 20) {
        slowest.sort((a, b) => b.ms - a.ms);
        slowest.length = 10;
      }
      const p = problem(judgeOf(method, path.split("?")[0].replace(/\/api\/v1\/tus\/.*/, "/api/v1/tus/x")), o);
      if (p) violations.push({ who, method, path: path.length > 120 ? path.slice(0, 120) + "…" : path, input, problem: p, excerpt: excerpt(o) });
    };

    const ordered = [...ROUTES.filter((r) => !LAST.has(`${r.method} ${r.path}`)), ...ROUTES.filter((r) => LAST.has(`${r.method} ${r.path}`))];
    // The guest goes first on each route: nothing it does should change what the administrator then meets.
    const cast: CastName[] = ["polonius", "iago"];

    for (const route of ordered) {
      const key = `${route.method} ${route.path}`;
      const isGet = route.method === "GET";
      const pathNames = [...route.path.matchAll(/:(\w+)|\*/g)].map((m) => m[1] ?? "*");
      for (const who of cast) {
        const auth = { authorization: basic(s.users[who]) };
        const base = baseline(key, who);
        const goodPath = fillPath(route);

        // 1. Each declared parameter in turn set to each hostile value, the rest valid.
        for (const name of route.params) {
          for (const h of HOSTILE) {
            if (SKIP.has(`${key} ${name}=${h.label}`)) continue;
            const params: WireParams = wireParams(base).filter(([k]) => k !== name);
            params.push([name, { text: h.value, wire: h.wire }]);
            const input = `${name}=${h.label}`;
            if (isGet || route.rawBody) {
              const path = `${goodPath}?${formEncode(params)}`;
              record(who, route.method, goodPath, `${input} (query)`, await send(s.url, route.method, path, auth, route.rawBody ? "{}" : undefined));
              continue;
            }
            // Form-encoded and multipart, the two body encodings clients use (values already
            // encoded for the wire exist only in the form encoding).
            const encodings = h.wire !== undefined ? ["form"] : ["form", "multipart"];
            for (const enc of encodings) {
              const o =
                enc === "form"
                  ? await send(s.url, route.method, goodPath, { ...auth, "content-type": "application/x-www-form-urlencoded" }, formEncode(params))
                  : await send(s.url, route.method, goodPath, { ...auth, "content-type": `multipart/form-data; boundary=${BOUNDARY}` }, multipartEncode(params));
              record(who, route.method, goodPath, `${input} (${enc})`, o);
            }
          }
        }

        // 2. Each path parameter replaced by junk, the parameters valid.
        for (const name of pathNames) {
          for (const junk of HOSTILE_PATH) {
            const path = fillPath(route, { name, value: junk });
            const params = wireParams(base);
            const o = isGet
              ? await send(s.url, "GET", params.length ? `${path}?${formEncode(params)}` : path, auth)
              : await send(s.url, route.method, path, { ...auth, "content-type": "application/x-www-form-urlencoded" }, formEncode(params));
            record(who, route.method, path, `path ${name}=${junk}`, o);
          }
        }

        // 3. Broken bodies, written byte for byte (GET included: a body is allowed there).
        const enc = new TextEncoder();
        const first = route.params[0] ?? "x";
        const broken: [string, Record<string, string>, Uint8Array][] = [
          ["multipart body without its closing boundary", { "content-type": `multipart/form-data; boundary=${BOUNDARY}` }, enc.encode(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${first}"\r\n\r\nvalue`)],
          ["multipart content type without a boundary", { "content-type": "multipart/form-data" }, enc.encode(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${first}"\r\n\r\nvalue\r\n--${BOUNDARY}--\r\n`)],
          ["multipart part without headers", { "content-type": `multipart/form-data; boundary=${BOUNDARY}` }, enc.encode(`--${BOUNDARY}\r\n\r\nvalue\r\n--${BOUNDARY}--\r\n`)],
          ["multipart field that is invalid UTF-8", { "content-type": `multipart/form-data; boundary=${BOUNDARY}` }, Buffer.concat([enc.encode(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${first}"\r\n\r\n`), new Uint8Array([0xff, 0xfe, 0xc3]), enc.encode(`\r\n--${BOUNDARY}--\r\n`)])],
          ["form body that is invalid UTF-8", { "content-type": "application/x-www-form-urlencoded" }, Buffer.concat([enc.encode(`${first}=`), new Uint8Array([0xff, 0xfe, 0xc3])])],
          ["body without content type, invalid UTF-8", {}, new Uint8Array([0xff, 0xfe, 0x80, 0x3d, 0xc3])],
        ];
        for (const [label, headers, body] of broken) {
          const o = await sendRaw(s.url, route.method, goodPath, { ...auth, ...headers }, body);
          record(who, route.method, goodPath, label, o);
        }
      }
    }

    // 4. Uploads: no file, a file that is not what it claims, an empty file.
    const uploads = ["/api/v1/users/me/avatar", "/api/v1/realm/emoji/fuzzemoji", "/api/v1/user_uploads", "/api/v1/bots"];
    for (const who of ["polonius", "iago"] as CastName[]) {
      const auth = { authorization: basic(s.users[who]) };
      for (const path of uploads) {
        const fields: WireParams = path === "/api/v1/bots" ? wireParams({ full_name: "Fuzz Avatar Bot", short_name: `fuzzavatar${who}` }) : [];
        const files = [
          { label: "garbage claiming image/png", file: { name: "f", filename: "x.png", type: "image/png", data: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]) } },
          { label: "empty file", file: { name: "f", filename: "", type: "application/octet-stream", data: new Uint8Array() } },
          { label: "filename with NUL and traversal", file: { name: "f", filename: "../\u0000evil.gif", type: "image/gif", data: enc8("GIF89a") } },
        ];
        for (const { label, file } of files) {
          const o = await send(s.url, "POST", path, { ...auth, "content-type": `multipart/form-data; boundary=${BOUNDARY}` }, multipartEncode(fields, [file]));
          record(who, "POST", path, `upload: ${label}`, o);
        }
      }

      // 5. tus: hostile Upload-Length / Upload-Metadata, junk upload IDs.
      const tus = { ...auth, "tus-resumable": "1.0.0" };
      for (const length of ["", "-1", "abc", "99999999999999999999", "1e308", "NaN"]) {
        record(who, "POST", "/api/v1/tus", `upload-length=${length}`, await send(s.url, "POST", "/api/v1/tus", { ...tus, "upload-length": length }));
      }
      for (const meta of ["filename", "filename !!!", ",,,", "filename " + "A".repeat(20_000)]) {
        record(who, "POST", "/api/v1/tus", `upload-metadata=${short(meta)}`, await send(s.url, "POST", "/api/v1/tus", { ...tus, "upload-length": "5", "upload-metadata": meta }));
      }
      for (const id of [...HOSTILE_PATH, "0123456789abcdef"]) {
        const path = TUS_PATHS[0].replace(":id", id);
        record(who, "HEAD", path, "path id", await send(s.url, "HEAD", path, tus));
        record(who, "DELETE", path, "path id", await send(s.url, "DELETE", path, tus));
        record(who, "PATCH", path, "path id", await send(s.url, "PATCH", path, { ...tus, "content-type": "application/offset+octet-stream", "upload-offset": "0" }, "abc"));
      }
    }

    // 6. Webhooks read their own body: each hostile value as the JSON payload and as Slack's form `payload`.
    for (const who of ["polonius", "iago"] as CastName[]) {
      const auth = { authorization: basic(s.users[who]) };
      for (const route of ROUTES.filter((r) => r.rawBody)) {
        for (const h of HOSTILE) {
          if (h.wire !== undefined) continue;
          record(who, "POST", route.path, `JSON body=${h.label}`, await send(s.url, "POST", route.path, { ...auth, "content-type": "application/json" }, wtf8(h.value)));
          record(who, "POST", route.path, `form payload=${h.label}`, await send(s.url, "POST", route.path, { ...auth, "content-type": "application/x-www-form-urlencoded" }, `payload=${percentEncode(h.value)}`));
        }
      }
    }

    // 7. Hostile credentials: Basic auth is parsed before any route's parameters.
    const credentials: [string, string][] = [
      ["email of 5000 characters", "Basic " + Buffer.from(`${"x".repeat(5000)}@zulip.test:${s.users.hamlet.apiKey}`).toString("base64")],
      ["email with NUL", "Basic " + Buffer.from(`hamlet\u0000@zulip.test:${s.users.hamlet.apiKey}`).toString("base64")],
      ["api key of 5000 characters", "Basic " + Buffer.from(`hamlet@zulip.test:${"k".repeat(5000)}`).toString("base64")],
      ["no colon", "Basic " + Buffer.from("hamlet@zulip.test").toString("base64")],
      ["not base64", "Basic %%%not-base64%%%"],
      ["invalid UTF-8 inside base64", "Basic " + Buffer.from([0xff, 0xfe, 0x3a, 0xc3]).toString("base64")],
      ["empty", "Basic "],
      ["another scheme", "Bearer abc"],
    ];
    for (const [label, header] of credentials) {
      for (const [method, path] of [["GET", "/api/v1/users/me"], ["POST", "/api/v1/register"], ["GET", "/api/v1/server_settings"], ["POST", "/api/v1/external/json"]]) {
        record("anonymous", method, path, `authorization: ${label}`, await send(s.url, method, path, { authorization: header }, method === "POST" ? "{}" : undefined));
      }
      record("anonymous", "POST", "/api/v1/external/json", `api_key query: ${label}`, await send(s.url, "POST", `/api/v1/external/json?api_key=${percentEncode(header.slice(6))}`, {}, "{}"));
    }

    // 8. The join page (HTML by design): junk keys and hostile form bodies must not be a 500 or a hang.
    for (const pattern of JOIN_PATHS) {
      for (const key of [...HOSTILE_PATH, fx.inviteKey]) {
        const path = pattern.replace(":key", key);
        record("anonymous", "GET", path, "path key", await send(s.url, "GET", path, {}));
        for (const h of HOSTILE.slice(0, 17)) {
          if (key !== fx.inviteKey && h.label !== "%ZZ") continue;
          const body = `email=${h.wire ?? percentEncode(h.value)}&full_name=${h.wire ?? percentEncode(h.value)}&password=${h.wire ?? percentEncode(h.value)}`;
          record("anonymous", "POST", path, `form fields=${h.label}`, await send(s.url, "POST", path, { "content-type": "application/x-www-form-urlencoded" }, body));
        }
        record("anonymous", "POST", path, "form body that is invalid UTF-8", await sendRaw(s.url, "POST", path, { "content-type": "application/x-www-form-urlencoded" }, new Uint8Array([0x65, 0x3d, 0xff, 0xfe])));
      }
    }

    // The server is still up and still answers a plain request.
    const alive = await s.as("hamlet").get("/users/me");
    expect(alive.status).toBe(200);

    slowest.sort((a, b) => b.ms - a.ms);
    console.log(`fuzz_inputs: ${requests} requests, ${violations.length} violations; slowest: ${slowest.slice(0, 5).map((x) => `${Math.round(x.ms)} ms ${x.what}`).join(" | ")}`);
    // Bun's HTTP parser answers a request line or headers over 16 KiB with a bare 431
    // before the application runs, as Zulip's nginx answers an over-long request line
    // with its own 414: a client error, from the transport, which no route can shape.
    const transport = (v: Violation) => v.problem.startsWith("HTTP 431 with a body that is not JSON") && v.excerpt === "";
    const line = (v: Violation) => `${v.who} ${v.method} ${v.path} ← ${v.input}: ${v.problem}${v.excerpt ? ` — ${v.excerpt}` : ""}`;
    const app = violations.filter((v) => !transport(v)).map(line);
    console.log(`fuzz_inputs: ${violations.length - app.length} requests over Bun's 16 KiB request-line and header limit got its bare 431`);
    if (app.length > 0) throw new Error(`${app.length} hostile inputs broke the error contract:\n  ${app.join("\n  ")}`);
  },
  600_000,
);

function enc8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}
