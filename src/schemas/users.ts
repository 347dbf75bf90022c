import { Type as t } from "@sinclair/typebox";
import { Nullable, success } from "./common";

/** The spec's User table (GET /users, /users/{id}, realm_users in register). */
export const User = t.Object({
  user_id: t.Integer(),
  delivery_email: Nullable(t.String()),
  email: t.String(),
  full_name: t.String(),
  date_joined: t.String(),
  is_active: t.Boolean(),
  is_owner: t.Boolean(),
  is_admin: t.Boolean(),
  is_guest: t.Boolean(),
  is_bot: t.Boolean(),
  bot_type: Nullable(t.Union([t.Literal(1), t.Literal(2), t.Literal(3), t.Literal(4)])),
  bot_owner_id: t.Optional(Nullable(t.Integer())),
  role: t.Union([t.Literal(100), t.Literal(200), t.Literal(300), t.Literal(400), t.Literal(600)]),
  timezone: t.String(),
  avatar_url: t.Optional(Nullable(t.String())),
  avatar_version: t.Integer(),
  is_imported_stub: t.Boolean(),
  is_deleted: t.Optional(t.Literal(true)),
  profile_data: t.Optional(t.Record(t.String(), t.Object({ value: t.String(), rendered_value: t.Optional(t.String()) }))),
});

export const GetUsersResponse = success({ members: t.Array(User) });
export const GetUserResponse = success({ user: User });
export const GetOwnUserResponse = t.Composite([success({ max_message_id: t.Integer() }), User]);
export const CreateUserResponse = success({ user_id: t.Integer() });
export const FetchApiKeyResponse = success({ api_key: t.String({ minLength: 32, maxLength: 32 }), email: t.String(), user_id: t.Integer() });
export const CreateBotResponse = success({
  user_id: t.Integer(),
  api_key: t.String(),
  avatar_url: t.String(),
  default_sending_stream: Nullable(t.String()),
  default_events_register_stream: Nullable(t.String()),
  default_all_public_streams: t.Boolean(),
});

/** GET /server_settings: every field the Zulip mobile app parses strictly. */
export const ServerSettingsResponse = success({
  authentication_methods: t.Object({ password: t.Boolean(), ldap: t.Boolean(), email: t.Boolean() }),
  external_authentication_methods: t.Array(
    t.Object({ name: t.String(), display_name: t.String(), display_icon: Nullable(t.String()), login_url: t.String(), signup_url: t.String() }),
  ),
  zulip_feature_level: t.Integer({ minimum: 277 }),
  service_feature_level: t.Integer(),
  zulip_version: t.String(),
  zulip_merge_base: t.String(),
  push_notifications_enabled: t.Boolean(),
  is_incompatible: t.Boolean(),
  email_auth_enabled: t.Boolean(),
  require_email_format_usernames: t.Boolean(),
  realm_url: t.String({ pattern: "^https?://" }),
  realm_uri: t.String({ pattern: "^https?://" }),
  realm_name: t.String(),
  realm_icon: t.String(),
  realm_description: t.String(),
  realm_web_public_access_enabled: t.Boolean(),
});

/** A custom profile field (GET /realm/profile_fields, register `custom_profile_fields`). */
export const CustomProfileField = t.Object({
  id: t.Integer(),
  type: t.Integer({ minimum: 1, maximum: 8 }),
  order: t.Integer(),
  name: t.String(),
  hint: t.String(),
  field_data: t.String(),
  display_in_profile_summary: t.Optional(t.Boolean()),
  required: t.Boolean(),
  editable_by_user: t.Optional(t.Boolean()),
  use_for_user_matching: t.Optional(t.Literal(true)),
});
export const GetProfileFieldsResponse = success({ custom_fields: t.Array(CustomProfileField) });

/** Zulip's Invite object, as GET /invites lists reusable invitation links (`link_url`; email invitations carry `email`). */
export const Invite = t.Object({
  id: t.Integer(),
  invited_by_user_id: t.Integer(),
  invited: t.Integer(),
  expiry_date: t.Union([t.Integer(), t.Null()]),
  invited_as: t.Union([t.Literal(100), t.Literal(200), t.Literal(300), t.Literal(400), t.Literal(600)]),
  is_multiuse: t.Boolean(),
  link_url: t.Optional(t.String()),
  email: t.Optional(t.String()),
  notify_referrer_on_join: t.Optional(t.Boolean()),
  /** Hearth: an email invitation's email was accepted by the SMTP server. */
  emailed: t.Optional(t.Boolean()),
  /** Hearth: what became of it (not_sent without an SMTP server). */
  email_status: t.Optional(t.Union([t.Literal("not_sent"), t.Literal("queued"), t.Literal("failed"), t.Literal("sent")])),
});
export const GetInvitesResponse = success({ invites: t.Array(Invite) });
export const CreateInviteLinkResponse = success({ invite_link: t.String() });
