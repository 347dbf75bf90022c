/**
 * The channel parts of POST /register's initial state, as plain functions the
 * register code calls (one per state key). Each reads what the user may see now.
 */
import type { Hearth } from "../context";
import { getUser, Role, type UserRecord, isGuest } from "../store/users";
import { allChannels, getChannel, type ChannelRecord } from "../store/channels";
import { getSubscription, subscribedChannelIds, userSubscriptionRows } from "../store/subscriptions";
import { defaultChannelIds } from "../store/default_channels";
import { hasContentAccess, hasMetadataAccess } from "../access/channels";
import { activeSubscriberIds, formatChannel, formatChannelWithDefault, formatSubscription } from "./channels";
import { listUserGroups } from "./user_groups";
import { statePart } from "./state_parts";

export interface ChannelStateOptions {
  /** register's `include_subscribers`: false, true, or "partial" (full lists below 250 subscribers). */
  includeSubscribers: boolean | "partial";
  /** Client capability `notification_settings_null`; without it nulls become the user's defaults. */
  notificationSettingsNull?: boolean;
  /** Client capability `archived_channels`; without it archived channels are left out. */
  archivedChannels?: boolean;
}

/** Zulip sends full subscriber lists in "partial" mode below this size. */
const PARTIAL_SUBSCRIBERS_THRESHOLD = 250;

function subscriberFields(h: Hearth, channel: ChannelRecord, mode: boolean | "partial"): { subscribers?: readonly number[]; partialSubscribers?: readonly number[] } {
  if (mode === false) return {};
  const ids = activeSubscriberIds(h, channel.id);
  if (mode === true || ids.length < PARTIAL_SUBSCRIBERS_THRESHOLD) return { subscribers: ids };
  // Hearth has no activity data to pick "recently active" users, so the partial list is its documented minimum: the bots.
  return { partialSubscribers: ids.filter((id) => getUser(h.store, id)?.is_bot) };
}

function visibleArchived(channel: ChannelRecord, options: ChannelStateOptions): boolean {
  return !channel.is_archived || options.archivedChannels === true;
}

/** `subscriptions`: the user's current subscriptions. */
export function subscriptionsState(h: Hearth, user: UserRecord, options: ChannelStateOptions): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const row of userSubscriptionRows(h.store, user.id)) {
    if (!row.active) continue;
    const channel = getChannel(h.store, row.channelId);
    if (!channel || !visibleArchived(channel, options)) continue;
    out.push(
      formatSubscription(h, channel, getSubscription(h.store, channel.id, user.id)!, {
        ...subscriberFields(h, channel, options.includeSubscribers),
        resolveNullNotificationSettings: options.notificationSettingsNull ? undefined : user,
      }),
    );
  }
  return out;
}

/** `unsubscribed`: channels the user was subscribed to once; subscribers only where they may still see them. */
export function unsubscribedState(h: Hearth, user: UserRecord, options: ChannelStateOptions): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const row of userSubscriptionRows(h.store, user.id)) {
    if (row.active) continue;
    const channel = getChannel(h.store, row.channelId);
    if (!channel || !visibleArchived(channel, options)) continue;
    const canSee = hasMetadataAccess(h, user, channel);
    if (!canSee && channel.invite_only) continue;
    out.push(
      formatSubscription(h, channel, getSubscription(h.store, channel.id, user.id)!, {
        ...(canSee ? subscriberFields(h, channel, options.includeSubscribers) : {}),
        resolveNullNotificationSettings: options.notificationSettingsNull ? undefined : user,
      }),
    );
  }
  return out;
}

/** `never_subscribed`: channels the user may see but never joined. */
export function neverSubscribedState(h: Hearth, user: UserRecord, options: ChannelStateOptions): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const channel of allChannels(h.store)) {
    if (!visibleArchived(channel, options) || getSubscription(h.store, channel.id, user.id)) continue;
    if (!hasMetadataAccess(h, user, channel)) continue;
    const { subscribers, partialSubscribers } = subscriberFields(h, channel, options.includeSubscribers);
    out.push({
      ...formatChannel(h, channel),
      ...(subscribers ? { subscribers } : {}),
      ...(partialSubscribers ? { partial_subscribers: partialSubscribers } : {}),
    });
  }
  return out;
}

/** `streams`: every channel the user may see. */
export function streamsState(h: Hearth, user: UserRecord, options: Pick<ChannelStateOptions, "archivedChannels"> = {}): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const channel of allChannels(h.store)) {
    if (!visibleArchived(channel, { includeSubscribers: false, ...options })) continue;
    if (hasMetadataAccess(h, user, channel)) out.push(formatChannel(h, channel));
  }
  return out;
}

/** `GET /streams` with its include_* and exclude_archived filters. */
export function listChannels(
  h: Hearth,
  user: UserRecord,
  q: {
    include_public: boolean;
    include_subscribed: boolean;
    include_all_active: boolean;
    include_all: boolean;
    include_can_access_content: boolean;
    include_default: boolean;
    include_owner_subscribed: boolean;
    exclude_archived: boolean;
  },
): Record<string, unknown>[] {
  // FL 356: include_all_active is include_all's old name, and either is open to everyone:
  // the channels returned are still only those the user may see.
  const includeAll = q.include_all || q.include_all_active;
  const subscribed = new Set(q.include_subscribed ? subscribedChannelIds(h.store, user.id) : []);
  if (q.include_owner_subscribed && user.is_bot && user.bot_owner_id !== null) {
    for (const id of subscribedChannelIds(h.store, user.bot_owner_id)) subscribed.add(id);
  }
  const streams: Record<string, unknown>[] = [];
  for (const channel of allChannels(h.store)) {
    if (channel.is_archived && q.exclude_archived) continue;
    if (!hasMetadataAccess(h, user, channel) && !subscribed.has(channel.id)) continue;
    const wanted =
      includeAll ||
      subscribed.has(channel.id) ||
      (q.include_public && !channel.invite_only && !isGuest(user)) ||
      (q.include_can_access_content && hasContentAccess(h, user, channel));
    if (wanted) streams.push(q.include_default ? formatChannelWithDefault(h, channel) : formatChannel(h, channel));
  }
  return streams;
}

/**
 * `realm_default_streams`, and the `default_streams` event's list: IDs of the default
 * channels (FL 330 sends IDs where it sent channel objects before). Default channels
 * are public, so every non-guest sees the same list.
 */
export function defaultStreamsState(h: Hearth, user: UserRecord): number[] {
  // Zulip shows guests no default channels (and sends them no default_streams events).
  return user.role === Role.GUEST ? [] : liveDefaultChannelIds(h);
}

/** The default channels not archived. They are public (a private channel cannot be made default), so every non-guest sees them. */
export function liveDefaultChannelIds(h: Hearth): number[] {
  return defaultChannelIds(h.store).filter((id) => getChannel(h.store, id)?.is_archived === false);
}

/** `realm_user_groups`. */
export function userGroupsState(h: Hearth, _user: UserRecord, options: { includeDeactivatedGroups?: boolean } = {}): Record<string, unknown>[] {
  return listUserGroups(h, { includeDeactivated: options.includeDeactivatedGroups });
}

// Register parts (src/views/state_parts.ts): these replace the placeholders of register.ts.
export const subscriptionsPart = statePart("subscriptions", ["subscription"], ({ h, user, includeSubscribers, capabilities }) => {
  if (!user) return { subscriptions: [], unsubscribed: [], never_subscribed: [] };
  const options: ChannelStateOptions = {
    includeSubscribers,
    notificationSettingsNull: capabilities.notification_settings_null,
    archivedChannels: capabilities.archived_channels,
  };
  return {
    subscriptions: subscriptionsState(h, user, options),
    unsubscribed: unsubscribedState(h, user, options),
    never_subscribed: neverSubscribedState(h, user, options),
  };
});

export const streamsPart = statePart("streams", ["stream"], ({ h, user, capabilities }) => ({
  streams: user ? streamsState(h, user, { archivedChannels: capabilities.archived_channels }) : [],
}));

export const realmDefaultStreamsPart = statePart("realm_default_streams", ["default_streams"], ({ h, user }) => ({
  realm_default_streams: user ? defaultStreamsState(h, user) : [],
}));

export const realmUserGroupsPart = statePart("realm_user_groups", ["realm_user_groups", "user_group"], ({ h, user, capabilities }) => ({
  realm_user_groups: user ? userGroupsState(h, user, { includeDeactivatedGroups: capabilities.include_deactivated_groups }) : [],
}));
