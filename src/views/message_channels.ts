import type { Hearth } from "../context";
import type { UserRecord } from "../store/users";

/**
 * What the messages layer needs to know about channels, subscriptions and user
 * groups, in one place: the channels layer owns those records and their permission
 * rules; these functions only adapt them.
 */
export interface MessageChannel {
  id: number;
  name: string;
  invite_only: boolean;
  history_public_to_subscribers: boolean;
  topics_policy: string;
  is_archived: boolean;
}

export function channelById(_h: Hearth, _id: number): MessageChannel | undefined {
  return undefined;
}

export function channelByName(_h: Hearth, _name: string): MessageChannel | undefined {
  return undefined;
}

export function channelSubscriberIds(_h: Hearth, _channelId: number): number[] {
  return [];
}

export function isSubscribedTo(_h: Hearth, _channelId: number, _userId: number): boolean {
  return false;
}

/** Whether the user may read the channel's messages at all. */
export function canReadChannel(_h: Hearth, _user: UserRecord, _channel: MessageChannel): boolean {
  return false;
}

export function canPostToChannel(_h: Hearth, _user: UserRecord, _channel: MessageChannel): boolean {
  return false;
}

/** A user group by name for `@*group*` mentions, with its members (recursively). */
export function groupForMention(_h: Hearth, _name: string): { id: number; name: string } | undefined {
  return undefined;
}

/** Every member of a group, through its subgroups. */
export function groupMemberIds(_h: Hearth, _groupId: number): number[] {
  return [];
}

/** Whether moving messages between topics / channels is allowed to the user by the realm's group settings. */
export function canMoveBetweenTopics(_h: Hearth, user: UserRecord): boolean {
  return user.role <= 400;
}
export function canMoveBetweenChannels(_h: Hearth, user: UserRecord): boolean {
  return user.role <= 400;
}
export function canDeleteAnyMessage(_h: Hearth, user: UserRecord): boolean {
  return user.role <= 200;
}
export function canDeleteOwnMessage(_h: Hearth, _user: UserRecord): boolean {
  return true;
}
