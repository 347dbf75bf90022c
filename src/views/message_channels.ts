import type { Hearth } from "../context";
import { getUser, type UserRecord } from "../store/users";
import { allChannels, getChannel, getChannelByName, type ChannelRecord } from "../store/channels";
import { isSubscribed, subscriberIds } from "../store/subscriptions";
import { getUserGroupByName } from "../store/user_groups";
import { canPostInChannel, hasContentAccess } from "../access/channels";
import { inRealmGroup, isUserInGroupSetting, usersInGroupSetting } from "../access/groups";

/**
 * What the messages layer needs to know about channels, subscriptions and user
 * groups, in one place: the channels layer owns those records and their permission
 * rules (src/access/channels.ts); these functions only adapt them.
 */
export type MessageChannel = ChannelRecord;

export function channelById(h: Hearth, id: number): MessageChannel | undefined {
  return getChannel(h.store, id);
}

export function channelByName(h: Hearth, name: string): MessageChannel | undefined {
  return getChannelByName(h.store, name);
}

export function channelSubscriberIds(h: Hearth, channelId: number): number[] {
  return subscriberIds(h.store, channelId);
}

export function isSubscribedTo(h: Hearth, channelId: number, userId: number): boolean {
  return isSubscribed(h.store, channelId, userId);
}

/** The archived channels whose messages the user may read (the `channels:archived` narrow). */
export function readableArchivedChannels(h: Hearth, user: UserRecord): MessageChannel[] {
  const out: MessageChannel[] = [];
  for (const channel of allChannels(h.store)) if (channel.is_archived && hasContentAccess(h, user, channel)) out.push(channel);
  return out;
}

/** Whether the user may read the channel's messages at all (Zulip's content access). */
export function canReadChannel(h: Hearth, user: UserRecord, channel: MessageChannel): boolean {
  return hasContentAccess(h, user, channel);
}

/** A bot's owner: Zulip lets a bot post, and start topics, with its owner's permission where its own falls short. */
export function botOwner(h: Hearth, user: UserRecord): UserRecord | undefined {
  return user.is_bot && user.bot_owner_id !== null ? getUser(h.store, user.bot_owner_id) : undefined;
}

/**
 * Content access plus `can_send_message_group`; never archived channels. A bot may also
 * use its owner's: Zulip's access_stream_for_send_message lets bots post wherever their
 * owner is subscribed, and falls back to the owner's `can_send_message_group`.
 */
export function canPostToChannel(h: Hearth, user: UserRecord, channel: MessageChannel): boolean {
  if (canPostInChannel(h, user, channel)) return true;
  const owner = botOwner(h, user);
  if (!owner || channel.is_archived) return false;
  const group = channel.groups.can_send_message_group;
  const mayPost = isUserInGroupSetting(h, user, group) || isUserInGroupSetting(h, owner, group);
  return mayPost && (hasContentAccess(h, user, channel) || isSubscribedTo(h, channel.id, owner.id));
}

/**
 * A user group by name for `@*group*` mentions (system groups cannot be mentioned); a
 * deactivated group's mention renders silent, as Zulip renders it.
 */
export function groupForMention(h: Hearth, name: string): { id: number; name: string; deactivated: boolean } | undefined {
  const group = getUserGroupByName(h.store, name);
  if (!group || group.is_system_group) return undefined;
  return { id: group.id, name: group.name, deactivated: group.deactivated };
}

/** Every member of a group, through its subgroups. */
export function groupMemberIds(h: Hearth, groupId: number): number[] {
  return usersInGroupSetting(h, groupId);
}

/*
 * Message permissions, as Zulip grants them: the organization's group, or the
 * channel's own group for messages in that channel (DMs have only the former).
 */
const inChannelGroup = (h: Hearth, user: UserRecord, channel: MessageChannel | undefined, name: keyof MessageChannel["groups"]) =>
  channel !== undefined && isUserInGroupSetting(h, user, channel.groups[name]);

export function canMoveBetweenTopics(h: Hearth, user: UserRecord, channel: MessageChannel): boolean {
  return inRealmGroup(h, user, "can_move_messages_between_topics_group") || inChannelGroup(h, user, channel, "can_move_messages_within_channel_group");
}
/** Zulip's can_resolve_topics: the organization's group, or either channel's own. */
export function canResolveTopics(h: Hearth, user: UserRecord, from: MessageChannel, to: MessageChannel): boolean {
  return (
    inRealmGroup(h, user, "can_resolve_topics_group") ||
    inChannelGroup(h, user, from, "can_resolve_topics_group") ||
    (to.id !== from.id && inChannelGroup(h, user, to, "can_resolve_topics_group"))
  );
}
export function canMoveBetweenChannels(h: Hearth, user: UserRecord, from: MessageChannel): boolean {
  return inRealmGroup(h, user, "can_move_messages_between_channels_group") || inChannelGroup(h, user, from, "can_move_messages_out_of_channel_group");
}
export function canDeleteAnyMessage(h: Hearth, user: UserRecord, channel: MessageChannel | undefined): boolean {
  return inRealmGroup(h, user, "can_delete_any_message_group") || inChannelGroup(h, user, channel, "can_delete_any_message_group");
}
export function canDeleteOwnMessage(h: Hearth, user: UserRecord, channel: MessageChannel | undefined): boolean {
  return inRealmGroup(h, user, "can_delete_own_message_group") || inChannelGroup(h, user, channel, "can_delete_own_message_group");
}
