import type { Store } from "./db";
import { StoreCache } from "./cache";

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

export function getSubscription(store: Store, channelId: number, userId: number): SubscriptionRecord | undefined {
  return subscriptionCache.get(store, `${channelId}:${userId}`, () => store.dbs.subscriptions.get([channelId, userId]) as SubscriptionRecord | undefined);
}

/** Subscription rows by "channelId:userId": every channel message reads its sender's (automatic topic policies). */
const subscriptionCache = new StoreCache<string, SubscriptionRecord | undefined>();

export function isSubscribed(store: Store, channelId: number, userId: number): boolean {
  return store.dbs.userSubscriptions.get([userId, channelId]) === true;
}

/** Writes a subscription row and its per-user mirror; call only inside `commit`. */
export function putSubscription(store: Store, sub: SubscriptionRecord): void {
  subscriberCache.invalidate(store);
  subscriptionCache.invalidate(store);
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
  return [...sharedSubscriberIds(store, channelId)];
}

/**
 * The same list, shared: the one array kept while no subscription is written (its
 * identity says the list has not changed), so do not change it.
 */
export function sharedSubscriberIds(store: Store, channelId: number): readonly number[] {
  return subscriberCache.get(store, channelId, () => {
    const found: number[] = [];
    for (const { key, value } of store.dbs.subscriptions.getRange({ start: [channelId], end: [channelId, Infinity] })) {
      if ((value as SubscriptionRecord).active) found.push((key as [number, number])[1]);
    }
    return found;
  });
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
