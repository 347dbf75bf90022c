import type { Hearth } from "../context";
import { ApiError, badRequest } from "../errors";
import { activeUserIdsOf, getUser, type UserRecord, isAdmin, isGuest } from "../store/users";
import { getChannel, getChannelByName, type ChannelRecord } from "../store/channels";
import { isSubscribed } from "../store/subscriptions";
import { inRealmGroup, isUserInGroupSetting } from "./groups";

/**
 * Channel permissions as Zulip 10/11 define them ("metadata access" lets a user see
 * that a channel exists, its settings and subscribers; "content access" lets them
 * read its messages and subscribe themselves):
 * - guests have both only while subscribed, whatever groups name them;
 * - public channels: every other user has both;
 * - private channels: subscribers have both; members of `can_add_subscribers_group`
 *   or `can_subscribe_group` have both without subscribing; organization
 *   administrators and members of `can_administer_channel_group` have metadata only.
 * Web-public channels are off on this server, so spectators see nothing.
 */
export function hasContentAccess(h: Hearth, user: UserRecord, channel: ChannelRecord): boolean {
  if (!user.is_active) return false;
  // A public channel needs no subscription read for anyone but guests (the common case, checked first).
  if (!channel.invite_only && !isGuest(user)) return true;
  if (isSubscribed(h.store, channel.id, user.id)) return true;
  // Guests reach only what they are subscribed to, whatever groups name them (Zulip).
  if (isGuest(user)) return false;
  return (
    isUserInGroupSetting(h, user, channel.groups.can_add_subscribers_group) ||
    isUserInGroupSetting(h, user, channel.groups.can_subscribe_group)
  );
}

export function hasMetadataAccess(h: Hearth, user: UserRecord, channel: ChannelRecord): boolean {
  if (hasContentAccess(h, user, channel)) return true;
  if (!user.is_active || !channel.invite_only || isGuest(user)) return false;
  return isAdmin(user) || isUserInGroupSetting(h, user, channel.groups.can_administer_channel_group);
}

/** Organization administrators administer every channel as if listed in `can_administer_channel_group`. */
export function canAdministerChannel(h: Hearth, user: UserRecord, channel: ChannelRecord): boolean {
  if (!user.is_active) return false;
  if (isAdmin(user)) return true;
  return hasMetadataAccess(h, user, channel) && isUserInGroupSetting(h, user, channel.groups.can_administer_channel_group);
}

/** Joining oneself: any non-guest for public channels; `can_subscribe_group` or `can_add_subscribers_group` for private ones. */
export function canSubscribeSelf(h: Hearth, user: UserRecord, channel: ChannelRecord): boolean {
  return hasContentAccess(h, user, channel) || canAddSubscribers(h, user, channel);
}

/**
 * Adding other users: members of the channel's `can_add_subscribers_group` (no
 * subscription needed, FL 349), channel administrators, and members of the
 * organization's `can_add_subscribers_group` for channels whose content they can access.
 */
export function canAddSubscribers(h: Hearth, user: UserRecord, channel: ChannelRecord): boolean {
  if (!user.is_active) return false;
  if (isUserInGroupSetting(h, user, channel.groups.can_add_subscribers_group)) return true;
  if (canAdministerChannel(h, user, channel)) return true;
  return hasContentAccess(h, user, channel) && inRealmGroup(h, user, "can_add_subscribers_group");
}

/**
 * Removing other users: organization administrators anywhere; otherwise members of
 * the channel's `can_remove_subscribers_group` or channel administrators, who must be
 * able to see the channel (FL 349).
 */
export function canRemoveSubscribers(h: Hearth, user: UserRecord, channel: ChannelRecord): boolean {
  if (!user.is_active) return false;
  if (isAdmin(user)) return true;
  if (!hasMetadataAccess(h, user, channel)) return false;
  return (
    isUserInGroupSetting(h, user, channel.groups.can_remove_subscribers_group) ||
    isUserInGroupSetting(h, user, channel.groups.can_administer_channel_group)
  );
}

/** Posting: content access plus membership of `can_send_message_group`; never in archived channels. */
export function canPostInChannel(h: Hearth, user: UserRecord, channel: ChannelRecord): boolean {
  if (channel.is_archived) return false;
  return isUserInGroupSetting(h, user, channel.groups.can_send_message_group) && hasContentAccess(h, user, channel);
}

export interface AccessChannelOptions {
  /** Archived channels are invisible unless asked for (sending, subscribing and editing refuse them). */
  allowArchived?: boolean;
  /** Also require content access (reading messages); metadata access is the default. */
  requireContentAccess?: boolean;
}

export const invalidChannelId = () => badRequest("Invalid channel ID");

/** Fetches a channel by ID and checks the user may see it; missing and hidden channels fail alike. */
export function accessChannel(h: Hearth, user: UserRecord, channelId: number, options: AccessChannelOptions = {}): ChannelRecord {
  const channel = getChannel(h.store, channelId);
  if (!channel || (channel.is_archived && !options.allowArchived)) throw invalidChannelId();
  const allowed = options.requireContentAccess ? hasContentAccess(h, user, channel) : hasMetadataAccess(h, user, channel);
  if (!allowed) throw invalidChannelId();
  return channel;
}

/** By name (case-insensitive), with Zulip's "Invalid channel name" error for missing and hidden channels. */
export function accessChannelByName(h: Hearth, user: UserRecord, name: string, options: AccessChannelOptions = {}): ChannelRecord {
  const channel = getChannelByName(h.store, name);
  const invalid = () => badRequest(`Invalid channel name '${name}'`);
  if (!channel || (channel.is_archived && !options.allowArchived)) throw invalid();
  const allowed = options.requireContentAccess ? hasContentAccess(h, user, channel) : hasMetadataAccess(h, user, channel);
  if (!allowed) throw invalid();
  return channel;
}

/** Zulip's STREAM_DOES_NOT_EXIST error, with the extra field naming the channel. */
export function channelDoesNotExist(name: string): ApiError {
  return new ApiError(`Channel '${name}' does not exist`, "STREAM_DOES_NOT_EXIST", 400, { stream: name });
}

/** Active users (system bots excluded) who may see the channel: the recipients of its `stream` events. */
export function channelViewerIds(h: Hearth, channel: ChannelRecord): number[] {
  const ids: number[] = [];
  // From the cached active IDs and user records, not a decode of every account.
  for (const id of activeUserIdsOf(h.store)) if (hasMetadataAccess(h, getUser(h.store, id)!, channel)) ids.push(id);
  return ids;
}
