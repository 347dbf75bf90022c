import { fitsKey, type Store } from "./db";
import { StoreCache } from "./cache";
import type { GroupSettingValue } from "./user_groups";

/** The per-channel group settings (Zulip's Stream permission fields), in the API's order. */
export const CHANNEL_GROUP_SETTINGS = [
  "can_add_subscribers_group",
  "can_administer_channel_group",
  "can_create_topic_group",
  "can_delete_any_message_group",
  "can_delete_own_message_group",
  "can_move_messages_out_of_channel_group",
  "can_move_messages_within_channel_group",
  "can_remove_subscribers_group",
  "can_resolve_topics_group",
  "can_send_message_group",
  "can_subscribe_group",
] as const;
export type ChannelGroupSettingName = (typeof CHANNEL_GROUP_SETTINGS)[number];

export const TOPICS_POLICIES = ["inherit", "allow_empty_topic", "disable_empty_topic", "empty_topic_only"] as const;
export type TopicsPolicy = (typeof TOPICS_POLICIES)[number];

export const MAX_CHANNEL_NAME_LENGTH = 60;
export const MAX_CHANNEL_DESCRIPTION_LENGTH = 1024;

export interface ChannelRecord {
  id: number;
  name: string;
  /** Markdown as the user wrote it (newlines folded to spaces, as Zulip does). */
  description: string;
  /** HTML of `description`, rendered when the description is written. */
  rendered_description: string;
  /** Unix seconds. */
  date_created: number;
  creator_id: number | null;
  invite_only: boolean;
  is_web_public: boolean;
  history_public_to_subscribers: boolean;
  /** null inherits the organization setting; -1 keeps messages forever. */
  message_retention_days: number | null;
  /** Default for `push_notifications` of new subscribers (FL 507). */
  default_push_notifications: boolean;
  topics_policy: TopicsPolicy;
  folder_id: number | null;
  is_archived: boolean;
  /** Maintained by the messages layer: the oldest message still in the channel. */
  first_message_id: number | null;
  /** Unix seconds of the newest message (messages layer); drives `is_recently_active`. */
  last_message_at: number | null;
  groups: Record<ChannelGroupSettingName, GroupSettingValue>;
}

/** Personal settings of one user's subscription to one channel. */
export interface SubscriptionRecord {
  channel_id: number;
  user_id: number;
  /** false after unsubscribing: the row is kept so a re-subscribe keeps color and settings. */
  active: boolean;
  color: string;
  is_muted: boolean;
  pin_to_top: boolean;
  /** null inherits the user-level default. */
  desktop_notifications: boolean | null;
  email_notifications: boolean | null;
  wildcard_mentions_notify: boolean | null;
  push_notifications: boolean | null;
  audible_notifications: boolean | null;
}

export const SUBSCRIPTION_NOTIFICATION_PROPERTIES = [
  "desktop_notifications",
  "email_notifications",
  "wildcard_mentions_notify",
  "push_notifications",
  "audible_notifications",
] as const;

export function getChannel(store: Store, id: number): ChannelRecord | undefined {
  return store.dbs.channels.get(id) as ChannelRecord | undefined;
}

export function getChannelByName(store: Store, name: string): ChannelRecord | undefined {
  const key = name.trim().toLowerCase();
  // No channel has so long a name, and LMDB refuses a key that long (it throws).
  if (!fitsKey(key)) return undefined;
  const id = store.dbs.channelsByName.get(key) as number | undefined;
  return id === undefined ? undefined : getChannel(store, id);
}

/** Writes a channel and keeps the name index in step; call only inside `commit`. */
export function putChannel(store: Store, channel: ChannelRecord, previousName?: string): void {
  if (previousName !== undefined && previousName.toLowerCase() !== channel.name.toLowerCase()) {
    store.dbs.channelsByName.remove(previousName.toLowerCase());
  }
  store.dbs.channels.put(channel.id, channel);
  store.dbs.channelsByName.put(channel.name.toLowerCase(), channel.id);
}

export function* allChannels(store: Store): Generator<ChannelRecord> {
  for (const { value } of store.dbs.channels.getRange({})) yield value as ChannelRecord;
}

export function getSubscription(store: Store, channelId: number, userId: number): SubscriptionRecord | undefined {
  return store.dbs.subscriptions.get([channelId, userId]) as SubscriptionRecord | undefined;
}

export function isSubscribed(store: Store, channelId: number, userId: number): boolean {
  return store.dbs.userSubscriptions.get([userId, channelId]) === true;
}

/** Writes a subscription row and its per-user mirror; call only inside `commit`. */
export function putSubscription(store: Store, sub: SubscriptionRecord): void {
  subscriberCache.invalidate(store);
  store.dbs.subscriptions.put([sub.channel_id, sub.user_id], sub);
  store.dbs.userSubscriptions.put([sub.user_id, sub.channel_id], sub.active);
}

/** Everyone with a subscription row for the channel, current or past (Zulip's Subscription rows, active or not). */
export function everSubscribedIds(store: Store, channelId: number): number[] {
  return [...store.dbs.subscriptions.getKeys({ start: [channelId], end: [channelId, Infinity] })].map((key) => (key as unknown as [number, number])[1]);
}

/** Every channel message reads its channel's subscribers: decoding each row every time was costly. */
const subscriberCache = new StoreCache<number, readonly number[]>();

/** Active subscriber IDs of a channel, ascending (deactivated users included; filter where it matters). */
export function subscriberIds(store: Store, channelId: number): number[] {
  const ids = subscriberCache.get(store, channelId, () => {
    const found: number[] = [];
    for (const { key, value } of store.dbs.subscriptions.getRange({ start: [channelId], end: [channelId, Infinity] })) {
      if ((value as SubscriptionRecord).active) found.push((key as [number, number])[1]);
    }
    return found;
  });
  return [...ids];
}

/** Every subscription row of a user (active and former), by channel ID. */
export function* userSubscriptionRows(store: Store, userId: number): Generator<{ channelId: number; active: boolean }> {
  for (const { key, value } of store.dbs.userSubscriptions.getRange({ start: [userId], end: [userId, Infinity] })) {
    yield { channelId: (key as [number, number])[1], active: value as boolean };
  }
}

/** IDs of the channels a user is subscribed to now. */
export function subscribedChannelIds(store: Store, userId: number): number[] {
  const ids: number[] = [];
  for (const row of userSubscriptionRows(store, userId)) if (row.active) ids.push(row.channelId);
  return ids;
}

export function isDefaultChannel(store: Store, channelId: number): boolean {
  return store.dbs.defaultChannels.get(channelId) !== undefined;
}

export function defaultChannelIds(store: Store): number[] {
  return [...store.dbs.defaultChannels.getKeys({})] as number[];
}
