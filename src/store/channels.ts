import { fitsKey, type Store } from "./db";
import { StoreCache } from "./cache";
import type { GroupSettingValue } from "./user_groups";
import type { ChannelGroupSettingName, TopicsPolicy } from "../schemas/channels";

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

/**
 * Channel records and name lookups, decoded once while no channel is written: every
 * send reads its channel several times (the target, the permission checks, the
 * event, the answer's links). putChannel is the only writer of both key spaces.
 * Shared records: never change one in place (write a copy with putChannel).
 */
const channelCache = new StoreCache<number, ChannelRecord | undefined>();
const channelIdsByName = new StoreCache<string, number | undefined>();

export function getChannel(store: Store, id: number): ChannelRecord | undefined {
  return channelCache.get(store, id, () => store.dbs.channels.get(id) as ChannelRecord | undefined);
}

/**
 * The channel as a transaction sees it, from the cache while no channel write is
 * uncommitted (StoreCache.getSettled): every send reads its channel's row in its
 * transaction (first message, last activity, privacy for the event).
 */
export function getChannelInTransaction(store: Store, id: number): ChannelRecord | undefined {
  return channelCache.getSettled(store, id, () => store.dbs.channels.get(id) as ChannelRecord | undefined);
}

export function getChannelByName(store: Store, name: string): ChannelRecord | undefined {
  const key = name.trim().toLowerCase();
  // No channel has so long a name, and LMDB refuses a key that long (it throws).
  if (!fitsKey(key)) return undefined;
  const id = channelIdsByName.get(store, key, () => store.dbs.channelsByName.get(key) as number | undefined);
  return id === undefined ? undefined : getChannel(store, id);
}

/** Writes a channel and keeps the name index in step; call only inside `commit`. */
export function putChannel(store: Store, channel: ChannelRecord, previousName?: string): void {
  channelCache.invalidate(store);
  channelIdsByName.invalidate(store);
  if (previousName !== undefined && previousName.toLowerCase() !== channel.name.toLowerCase()) {
    store.dbs.channelsByName.remove(previousName.toLowerCase());
  }
  store.dbs.channels.put(channel.id, channel);
  store.dbs.channelsByName.put(channel.name.toLowerCase(), channel.id);
}

export function* allChannels(store: Store): Generator<ChannelRecord> {
  for (const { value } of store.dbs.channels.getRange({})) yield value as ChannelRecord;
}

/** The meta key of the secret that derives channel email tokens (made once per data folder). */
const EMAIL_SECRET_KEY = "channel_email_secret";

export function getChannelEmailSecret(store: Store): string | undefined {
  return store.dbs.meta.get(EMAIL_SECRET_KEY) as string | undefined;
}

/** Call only inside `commit`. */
export function putChannelEmailSecret(store: Store, secret: string): void {
  store.dbs.meta.put(EMAIL_SECRET_KEY, secret);
}
