/**
 * The state parts of POST /register that this module owns (realm, users, bots,
 * settings, server constants); src/views/register_state.ts lists every part in order.
 */
import { statePart, type StateContext } from "./state_parts";
import { allUsers, Role, type UserRecord, isAdmin, isGuest, isOwner } from "../store/users";
import { getRealm } from "../store/realm";
import { botView } from "./bots";
import { apiEmail, formatUser } from "./users";
import { MIN_DEACTIVATED_REALM_DELETION_DAYS, REALM_ICON_PATH, realmUuid, requireRealm } from "./realm";
import { inRealmGroup } from "../access/groups";
import { avatarUrl } from "./avatars";
import { maxMessageIdFor } from "./messages";
import { DEFAULT_EXTERNAL_ACCOUNTS, maxUploadMib, REALM_DEFAULTS, realmSetting, REPORT_MESSAGE_TYPES, SERVER_LIMITS } from "../store/realm_settings";
import { getRealmPresences, PRESENCE_OFFLINE_THRESHOLD_SECS, PRESENCE_PING_INTERVAL_SECS } from "./presence";
import { userSettingsDefaultsView, userSettingsView } from "./settings";


/** Started at import; clients compare it to notice a server restart (Zulip's server_generation). */
const SERVER_GENERATION = Math.floor(Date.now() / 1000);

/** Served later by the emoji capability; register must give an absolute URL now. */
export const EMOJI_DATA_PATH = "/static/generated/emoji/emoji_api.json";

export const realmPart = statePart("realm", ["realm"], ({ h }) => {
  const realm = requireRealm(h);
  const url = h.realmUrl();
  const state: Record<string, unknown> = {};
  for (const name of Object.keys(REALM_DEFAULTS)) state[`realm_${name}`] = realmSetting(realm.settings, name);
  Object.assign(state, SERVER_LIMITS, {
    max_file_upload_size_mib: maxUploadMib(h),
    realm_name: realm.name,
    realm_description: realm.description,
    // For clients from before FL 358.
    realm_allow_edit_history: realmSetting(realm.settings, "message_edit_history_visibility_policy") !== "none",
    realm_date_created: realm.date_created,
    realm_url: url,
    realm_uri: url,
    realm_icon_url: url + REALM_ICON_PATH,
    realm_icon_source: "G",
    realm_logo_url: url + REALM_ICON_PATH,
    realm_logo_source: "D",
    realm_night_logo_url: url + REALM_ICON_PATH,
    realm_night_logo_source: "D",
    realm_bot_domain: h.realmHost(),
    realm_authentication_methods: {
      Email: { enabled: true, available: true },
      Dev: { enabled: false, available: false },
    },
    realm_available_video_chat_providers: { disabled: { name: "None", id: 0 } },
    realm_email_auth_enabled: true,
    realm_password_auth_enabled: true,
    realm_push_notifications_enabled: false,
    realm_push_notifications_enabled_end_timestamp: null,
    realm_default_external_accounts: DEFAULT_EXTERNAL_ACCOUNTS,
    realm_uuid: realmUuid(h),
    settings_send_digest_emails: true,
    zulip_plan_is_not_limited: true,
    upgrade_text_for_wide_organization_logo: "",
    // FL 442/453/486: no GIF service is configured; Zulip sends empty keys then, and clients hide the picker.
    gif_rating_policy_options: { disabled: { name: "GIF integration disabled", id: 0 } },
    giphy_api_key: "",
    tenor_api_key: "",
    klipy_api_key: "",
    jitsi_server_url: "https://meet.jit.si",
    server_jitsi_server_url: null,
    development_environment: false,
    server_generation: SERVER_GENERATION,
    server_inline_image_preview: true,
    server_inline_url_embed_preview: false,
    server_avatar_changes_disabled: false,
    server_name_changes_disabled: false,
    server_needs_upgrade: false,
    server_web_public_streams_enabled: false,
    server_can_summarize_topics: false,
    server_emoji_data_url: url + EMOJI_DATA_PATH,
    server_thumbnail_formats: [],
    server_min_deactivated_realm_deletion_days: MIN_DEACTIVATED_REALM_DELETION_DAYS,
    server_max_deactivated_realm_deletion_days: null,
    server_presence_ping_interval_seconds: PRESENCE_PING_INTERVAL_SECS,
    server_presence_offline_threshold_seconds: PRESENCE_OFFLINE_THRESHOLD_SECS,
    server_typing_started_expiry_period_milliseconds: 15000,
    server_typing_stopped_wait_period_milliseconds: 5000,
    server_typing_started_wait_period_milliseconds: 10000,
    server_supported_permission_settings: { realm: {}, stream: {}, group: {} },
    server_report_message_types: Object.entries(REPORT_MESSAGE_TYPES).map(([key, name]) => ({ key, name })),
    // Clients abort a poll after this long; it must exceed the heartbeat interval.
    event_queue_longpoll_timeout_seconds: Math.ceil(h.queues.limits.heartbeatSecs) + 35,
    navigation_tour_video_url: null,
  });
  return state;
});

export const realmUserSettingsDefaultsPart = statePart("realm_user_settings_defaults", ["realm_user_settings_defaults"], ({ h }) => ({
  realm_user_settings_defaults: userSettingsDefaultsView(getRealm(h.store)?.settings),
}));

/** A user as one viewer sees it in register (same formatter as GET /users). */
function userForViewer(ctx: StateContext, target: UserRecord): Record<string, unknown> {
  return formatUser(ctx.h, ctx.user, target, { clientGravatar: ctx.clientGravatar, includeCustomProfileFields: true });
}

export const realmUserPart = statePart("realm_user", ["realm_user"], (ctx) => {
  const { h, user } = ctx;
  const realmUsers: Record<string, unknown>[] = [];
  const nonActive: Record<string, unknown>[] = [];
  const crossRealmBots: Record<string, unknown>[] = [];
  for (const u of allUsers(h.store)) {
    if (u.is_system_bot) crossRealmBots.push(userForViewer(ctx, u));
    else (u.is_active ? realmUsers : nonActive).push(userForViewer(ctx, u));
  }
  const state: Record<string, unknown> = {
    realm_users: realmUsers,
    realm_non_active_users: nonActive,
    cross_realm_bots: crossRealmBots,
  };
  if (user) {
    const canCreatePublic = inRealmGroup(h, user, "can_create_public_channel_group");
    const canCreatePrivate = inRealmGroup(h, user, "can_create_private_channel_group");
    Object.assign(state, {
      user_id: user.id,
      email: apiEmail(h, user),
      delivery_email: user.email,
      full_name: user.full_name,
      avatar_source: user.avatar_source,
      avatar_url: avatarUrl(h, user),
      avatar_url_medium: avatarUrl(h, user, true),
      is_admin: isAdmin(user),
      is_owner: isOwner(user),
      // Moderators and above (FL 380; before it, the moderator role alone).
      is_moderator: user.role <= Role.MODERATOR,
      is_guest: isGuest(user),
      is_billing_admin: false,
      // From the organization's permission groups, which PATCH /realm changes.
      can_create_streams: canCreatePublic || canCreatePrivate,
      can_create_public_streams: canCreatePublic,
      can_create_private_streams: canCreatePrivate,
      can_create_web_public_streams: isOwner(user),
      can_subscribe_other_users: inRealmGroup(h, user, "can_add_subscribers_group"),
      // Inviting by email (POST /invites): the organization's can_invite_users_group (links: create_multiuse_invite_group).
      can_invite_others_to_realm: !user.is_bot && inRealmGroup(h, user, "can_invite_users_group"),
    });
  }
  return state;
});

export const realmBotPart = statePart("realm_bot", ["realm_bot"], ({ h, user }) => {
  const bots: Record<string, unknown>[] = [];
  if (user) {
    for (const u of allUsers(h.store)) {
      // Deactivated bots too, with is_active false, as Zulip lists them (reactivation is an update).
      if (!u.is_bot || u.is_system_bot) continue;
      if (u.bot_owner_id === user.id || isAdmin(user)) bots.push(botView(h, u));
    }
  }
  return { realm_bots: bots };
});

/** Since FL 439 the settings are in `user_settings` only, whatever the client's capabilities (no top-level copies). */
export const userSettingsPart = statePart("user_settings", ["user_settings"], ({ user }) => ({
  user_settings: user ? userSettingsView(user) : userSettingsDefaultsView(),
}));

export const maxMessageIdPart = statePart("max_message_id", ["message"], ({ h, user }) => ({
  max_message_id: user ? maxMessageIdFor(h, user) : -1,
}));

export const presencesPart = statePart("presences", ["presence"], ({ h, slimPresence, presenceHistoryLimitDays }) => ({
  ...getRealmPresences(h, { slim: slimPresence, historyLimitDays: presenceHistoryLimitDays }),
  server_timestamp: Date.now() / 1000,
}));
