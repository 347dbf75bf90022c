import { createHmac } from "node:crypto";
import type { Hearth } from "../context";
import { getUser, type UserRecord } from "../store/users";
import { getChannel, getChannelEmailSecret, type ChannelRecord } from "../store/channels";
import { CHANNEL_GROUP_SETTINGS, type ChannelGroupSettingName, type ChannelView, type SubscriptionView } from "../schemas/channels";
import { isSubscribed, subscribedChannelIds, subscriberIds, SUBSCRIPTION_NOTIFICATION_PROPERTIES, type SubscriptionRecord } from "../store/subscriptions";
import { isDefaultChannel } from "../store/default_channels";
import { systemGroupId, type GroupSettingValue, type SystemGroupName } from "../store/user_groups";
import { badRequest } from "../errors";
import { isSystemGroupSetting } from "../access/groups";
import { accessChannel, canPostInChannel, hasMetadataAccess } from "../access/channels";
import { getSystemBot } from "../store/system_bots";

const RECENTLY_ACTIVE_SECONDS = 180 * 86400;

/** Zulip's palette for personal channel colors, assigned in order to each user's new subscriptions. */
export const CHANNEL_COLORS = [
  "#76ce90", "#fae589", "#a6c7e5", "#e79ab5", "#bfd56f", "#f4ae55",
  "#b0a5fd", "#addfe5", "#f5ce6e", "#c2726a", "#94c849", "#bd86e5",
  "#ee7e4a", "#a6dcbf", "#95a5fd", "#53a063", "#9987e1", "#e4523d",
  "#c2c2c2", "#4f8de4", "#c6a8ad", "#e7cc4d", "#c8bebf", "#a47462",
] as const;

/** The first palette color the user is not using yet, cycling once all are taken. */
export function pickChannelColor(usedColors: Iterable<string>): string {
  const used = new Set([...usedColors].map((c) => c.toLowerCase()));
  const free = CHANNEL_COLORS.find((c) => !used.has(c));
  return free ?? CHANNEL_COLORS[used.size % CHANNEL_COLORS.length];
}

/** Deprecated `stream_post_policy` values and the `can_send_message_group` each stands for. */
const STREAM_POST_POLICY_GROUPS: Record<number, SystemGroupName> = {
  1: "role:everyone",
  2: "role:administrators",
  3: "role:fullmembers",
  4: "role:moderators",
};

/** `stream_post_policy` approximated from `can_send_message_group` (1 when no policy matches). */
export function streamPostPolicy(h: Hearth, channel: ChannelRecord): number {
  for (const [policy, name] of Object.entries(STREAM_POST_POLICY_GROUPS)) {
    if (isSystemGroupSetting(h, channel.groups.can_send_message_group, name)) return Number(policy);
  }
  return 1;
}

/** The group a client's `stream_post_policy` asks for. */
export function streamPostPolicyGroupId(h: Hearth, policy: number): number {
  if (!Object.hasOwn(STREAM_POST_POLICY_GROUPS, policy)) throw badRequest("Invalid stream_post_policy");
  return systemGroupId(h.store, STREAM_POST_POLICY_GROUPS[policy]);
}

/**
 * Active, non-deactivated subscribers (Zulip's `subscriber_count`, bots included).
 * Kept until the next write: a register asks for each channel's list, then its count.
 */
export function activeSubscriberIds(h: Hearth, channelId: number): readonly number[] {
  return h.store.memo(`activeSubscribers:${channelId}`, () => subscriberIds(h.store, channelId).filter((id) => getUser(h.store, id)?.is_active));
}

function groupValueForApi(value: GroupSettingValue): GroupSettingValue {
  return typeof value === "number" ? value : { direct_members: [...value.direct_members], direct_subgroups: [...value.direct_subgroups] };
}

export function isRecentlyActive(channel: ChannelRecord, now = Date.now() / 1000): boolean {
  return now - (channel.last_message_at ?? channel.date_created) < RECENTLY_ACTIVE_SECONDS;
}

/**
 * A channel as GET /streams, stream create events and register's `streams` show it
 * (OpenAPI `BasicChannel` plus the newer fields of addendum §9).
 */
export function formatChannel(h: Hearth, channel: ChannelRecord, activeSubscriberCount?: number): ChannelView {
  const postPolicy = streamPostPolicy(h, channel) as ChannelView["stream_post_policy"];
  const groups = Object.fromEntries(CHANNEL_GROUP_SETTINGS.map((name) => [name, groupValueForApi(channel.groups[name])])) as Record<ChannelGroupSettingName, GroupSettingValue>;
  return {
    stream_id: channel.id,
    name: channel.name,
    is_archived: channel.is_archived,
    description: channel.description,
    rendered_description: channel.rendered_description,
    date_created: channel.date_created,
    creator_id: channel.creator_id,
    invite_only: channel.invite_only,
    is_web_public: channel.is_web_public,
    stream_post_policy: postPolicy,
    is_announcement_only: postPolicy === 2,
    message_retention_days: channel.message_retention_days,
    history_public_to_subscribers: channel.history_public_to_subscribers,
    first_message_id: channel.first_message_id,
    folder_id: channel.folder_id,
    topics_policy: channel.topics_policy,
    is_recently_active: isRecentlyActive(channel),
    // Zulip reports null until a channel is old enough for a weekly average; Hearth keeps no traffic statistics yet.
    stream_weekly_traffic: null,
    // Callers that already hold the subscriber list pass its length: counting reads every subscriber.
    subscriber_count: activeSubscriberCount ?? activeSubscriberIds(h, channel.id).length,
    default_push_notifications: channel.default_push_notifications,
    ...groups,
  };
}

/** The user-level defaults that null per-channel notification settings inherit. */
const NOTIFICATION_DEFAULT_SETTING: Record<(typeof SUBSCRIPTION_NOTIFICATION_PROPERTIES)[number], [string, boolean]> = {
  desktop_notifications: ["enable_stream_desktop_notifications", false],
  email_notifications: ["enable_stream_email_notifications", false],
  wildcard_mentions_notify: ["wildcard_mentions_notify", true],
  push_notifications: ["enable_stream_push_notifications", false],
  audible_notifications: ["enable_stream_audible_notifications", false],
};

export interface SubscriptionViewOptions {
  /** The active subscriber IDs to include (`include_subscribers`); omitted when undefined. */
  subscribers?: readonly number[];
  /** register's `include_subscribers=partial` field instead of `subscribers`. */
  partialSubscribers?: readonly number[];
  /** Clients without `notification_settings_null` get the user defaults instead of null. */
  resolveNullNotificationSettings?: UserRecord;
  /** The channel's view, when the caller formats it once for many subscriptions; its subscriber_count must match `subscribers`. */
  channelView?: ChannelView;
}

/** A subscription: the channel plus the user's personal settings (OpenAPI `Subscriptions`). */
export function formatSubscription(
  h: Hearth,
  channel: ChannelRecord,
  sub: SubscriptionRecord,
  options: SubscriptionViewOptions = {},
): SubscriptionView {
  const notifications = {} as Record<(typeof SUBSCRIPTION_NOTIFICATION_PROPERTIES)[number], boolean | null>;
  for (const prop of SUBSCRIPTION_NOTIFICATION_PROPERTIES) {
    let value = sub[prop];
    const viewer = options.resolveNullNotificationSettings;
    if (value === null && viewer) {
      const [setting, fallback] = NOTIFICATION_DEFAULT_SETTING[prop];
      const own = viewer.settings?.[setting];
      value = typeof own === "boolean" ? own : fallback;
    }
    notifications[prop] = value;
  }
  return {
    ...(options.channelView ?? formatChannel(h, channel, options.subscribers?.length)),
    color: sub.color,
    is_muted: sub.is_muted,
    in_home_view: !sub.is_muted,
    pin_to_top: sub.pin_to_top,
    ...notifications,
    ...(options.subscribers ? { subscribers: [...options.subscribers] } : {}),
    ...(options.partialSubscribers ? { partial_subscribers: [...options.partialSubscribers] } : {}),
  };
}

/** `GET /streams` adds `is_default` when asked (`include_default`). */
export function formatChannelWithDefault(h: Hearth, channel: ChannelRecord): ChannelView & { is_default: boolean } {
  return { ...formatChannel(h, channel), is_default: isDefaultChannel(h.store, channel.id) };
}

/** A channel's `stream delete` event, for those who no longer see it. */
export function streamDeleteEvent(h: Hearth, channel: ChannelRecord) {
  // `streams` for clients before FL 343, `stream_ids` for newer ones (client requirements accept either).
  return { type: "stream" as const, op: "delete" as const, streams: [formatChannel(h, channel)], stream_ids: [channel.id] };
}

/**
 * GET /streams/{stream_id}/email_address. The address is `{name}.{token}@{host}` as in
 * Zulip; the token is derived from the channel and the sender (Zulip keeps one token per
 * channel and sender), so it is stable without storing one per request.
 */
export function getChannelEmailAddress(h: Hearth, actor: UserRecord, channelId: number, senderId?: number): string {
  const channel = accessChannel(h, actor, channelId, { requireContentAccess: true });
  if (!canPostInChannel(h, actor, channel)) throw badRequest("Invalid channel ID");
  const gateway = getSystemBot(h.store, "email_gateway");
  const sender = senderId === undefined ? gateway : getUser(h.store, senderId);
  const allowed = sender && sender.is_active && (sender.id === actor.id || sender.id === gateway?.id || (sender.is_bot && sender.bot_owner_id === actor.id));
  if (!allowed) throw badRequest("Invalid user ID");
  const secret = String(getChannelEmailSecret(h.store) ?? "");
  const token = createHmac("sha256", secret).update(`${channel.id}:${sender.id}`).digest("hex").slice(0, 32);
  const local = channel.name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 30);
  return `${local ? local + "." : ""}${token}@${h.realmHost()}`;
}

/** `GET /users/{user_id}/subscriptions/{stream_id}`. */
export function subscriptionStatusView(h: Hearth, channel: ChannelRecord, user: UserRecord): { is_subscribed: boolean } {
  return { is_subscribed: isSubscribed(h.store, channel.id, user.id) };
}

/**
 * `GET /users/{user_id}/channels` (FL 440): the IDs of the channels `target` is
 * subscribed to, limited to those `viewer` may see (metadata access), so the answer
 * reveals no private channel the viewer could not list.
 */
export function userChannelsView(h: Hearth, viewer: UserRecord, target: UserRecord): { subscribed_channel_ids: number[] } {
  const ids = subscribedChannelIds(h.store, target.id).filter((id) => {
    if (viewer.id === target.id) return true;
    const channel = getChannel(h.store, id);
    return channel !== undefined && hasMetadataAccess(h, viewer, channel);
  });
  return { subscribed_channel_ids: ids.sort((a, b) => a - b) };
}
