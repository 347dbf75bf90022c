import type { Hearth } from "../context";
import { badRequest } from "../errors";
import { getChannel, type ChannelRecord } from "../store/channels";
import { subscriberIds } from "../store/subscriptions";
import { getMessage, MessageFlag, type MessageRecord } from "../store/messages";
import { getUserFlags, messageRecipientIds } from "../store/user_messages";
import type { UserRecord } from "../store/users";
import { hasContentAccess } from "./channels";

/** Zulip's one error for a message that does not exist and one the user may not see. */
export const invalidMessage = () => badRequest("Invalid message(s)");

/** A channel by ID if `user` may read its messages, else undefined. */
export type ReadableChannels = (channelId: number) => ChannelRecord | undefined;

/**
 * The channels `user` may read, each looked up once: a walk over many messages
 * (walkNarrow) asks once per channel rather than reading the channel per message.
 */
export function readableChannels(h: Hearth, user: UserRecord): ReadableChannels {
  const known = new Map<number, ChannelRecord | undefined>();
  return (channelId) => {
    if (!known.has(channelId)) {
      const channel = getChannel(h.store, channelId);
      known.set(channelId, channel && hasContentAccess(h, user, channel) ? channel : undefined);
    }
    return known.get(channelId);
  };
}

/**
 * The flags a user sees on a message: their row, or — for a channel message they
 * may read without having received it — Zulip's `read` + `historical`.
 * Undefined when the user may not see the message at all.
 */
export function visibleFlags(h: Hearth, user: UserRecord, m: MessageRecord, readable: ReadableChannels = readableChannels(h, user), knownOwn?: number | null): number | undefined {
  // `knownOwn`: the user's own flags when the caller already knows them; null when it knows they hold no row.
  const own = knownOwn === undefined ? getUserFlags(h.store, user.id, m.id) : (knownOwn ?? undefined);
  if (m.type !== "stream") return own;
  // Zulip's has_message_access: a row is not enough in a channel. Someone who left a
  // private channel (or a guest who left any channel) keeps their rows, but no longer
  // reads its messages.
  const channel = readable(m.channel_id!);
  if (!channel) return undefined;
  if (own !== undefined) return own;
  // Private channels with protected history show subscribers only what they received.
  if (channel.invite_only && !channel.history_public_to_subscribers) return undefined;
  return MessageFlag.read | MessageFlag.historical;
}

/** Reads a message and its flags for `user`, or undefined when they may not see it. */
export function readableMessage(
  h: Hearth,
  user: UserRecord,
  id: number,
  readable: ReadableChannels = readableChannels(h, user),
): { message: MessageRecord; flags: number } | undefined {
  const message = getMessage(h.store, id);
  if (!message) return undefined;
  const flags = visibleFlags(h, user, message, readable);
  return flags === undefined ? undefined : { message, flags };
}

/** Fetches a message the user may see, with their flags; Zulip's single error for missing and hidden ones. */
export function accessMessage(h: Hearth, user: UserRecord, id: number): { message: MessageRecord; flags: number } {
  const found = readableMessage(h, user, id);
  if (!found) throw invalidMessage();
  return found;
}

/**
 * Who hears of a change to a message (Zulip's event_recipient_ids_for_action_on_messages):
 * a direct message's recipients; in a public channel, its recipients and the
 * channel's subscribers; in a private channel, only those who may still read it —
 * its subscribers where history is shared, its subscribers who received it where
 * history is protected. Someone who left a private channel keeps their rows but no
 * longer reads its messages, so hears of no change to them.
 */
export function messageAudience(h: Hearth, m: MessageRecord, holders: Iterable<number> = messageRecipientIds(h.store, m)): number[] {
  if (m.type !== "stream") return [...new Set(holders)];
  const channel = getChannel(h.store, m.channel_id!);
  if (!channel) return [];
  const subscribers = new Set(subscriberIds(h.store, channel.id));
  if (!channel.invite_only) return [...new Set([...holders, ...subscribers])];
  if (channel.history_public_to_subscribers) return [...subscribers];
  return [...new Set(holders)].filter((id) => subscribers.has(id));
}
