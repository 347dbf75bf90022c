import type { Hearth } from "../context";
import { ApiError, badRequest } from "../errors";
import { readableChannels, readableMessage } from "../access/messages";
import { topicLinkSyntax } from "../markdown/links";
import { silentMention } from "../markdown/syntax";
import { everSubscribedIds } from "../store/subscriptions";
import { topicMessageIds } from "../store/message_topics";
import { getMessage, MessageFlag, RESOLVED_TOPIC_PREFIX, type MessageRecord } from "../store/messages";
import { addUserRows, getUserFlags, removeUserRows } from "../store/user_messages";
import { getSystemBot } from "../store/system_bots";
import { getUser, type UserRecord } from "../store/users";
import { canMoveBetweenChannels, canMoveBetweenTopics, canPostToChannel, canResolveTopics, channelById, channelSubscriberIds, type MessageChannel } from "../views/message_channels";
import { realmSetting } from "../views/messages";
import { checkMayCreateTopic, checkTopicPolicy } from "./message_checks";
import { doSendMessage } from "./message_send";
import { planMoveTopicPolicies, writePolicyChanges, type WrittenPolicies } from "./user_topics";
import { isGuest, isModerator } from "../store/users";
import { VisibilityPolicy, visibilityPolicyOf } from "../store/user_topics";
import { userSetting } from "../views/settings";

/** Moving messages to another topic or channel: the part of Zulip's message_edit.py that a content edit does not need. */

export type PropagateMode = "change_one" | "change_later" | "change_all";

/** What a move reads of its edit request. */
export interface MoveRequest {
  /** The new topic as the client sent it (before normalizing). */
  topic?: string;
  propagateMode: PropagateMode;
  sendNotificationToOldThread: boolean;
  sendNotificationToNewThread: boolean;
}

const DEFAULT_MOVE_LIMIT = 7 * 86400;

/**
 * Whether renaming a topic only adds or removes the resolved mark, by Zulip's rules:
 * resolving is exactly the mark plus the old name (as the client sent it, before the
 * new name is cut to the length limit); unresolving strips every leading mark and space.
 */
export function togglesResolved(from: string, to: string, toAsSent: string): boolean {
  const resolved = (topic: string) => topic.startsWith(RESOLVED_TOPIC_PREFIX);
  if (resolved(to) && !resolved(from)) return toAsSent.trim().slice(RESOLVED_TOPIC_PREFIX.length) === from;
  if (!resolved(to) && resolved(from)) return from.replace(/^[✔ ]+/u, "") === to;
  return false;
}

/**
 * The mover's permissions and the messages that move (one, the later ones of the
 * topic, or all of it). FL 365: resolving or unresolving a topic in place is no move
 * for `last_moved_timestamp` (`onlyResolving`).
 */
export function checkMove(
  h: Hearth,
  user: UserRecord,
  message: MessageRecord,
  newTopic: string | undefined,
  newChannel: MessageChannel | undefined,
  req: MoveRequest,
  now: number,
): { ids: number[]; onlyResolving: boolean } {
  if (message.type !== "stream") throw badRequest("Invalid propagate_mode for a direct message");
  const fromChannel = channelById(h, message.channel_id!)!;
  // Marking a topic resolved or unresolved is its own permission (Zulip FL 367/402),
  // with no time limit on it.
  const resolving = newTopic !== undefined && togglesResolved(message.topic, newTopic, req.topic!);
  if (resolving && !canResolveTopics(h, user, fromChannel, newChannel ?? fromChannel)) {
    throw badRequest("You don't have permission to resolve topics in this channel.");
  }
  if (newTopic !== undefined && !resolving && !canMoveBetweenTopics(h, user, fromChannel) && message.sender_id !== user.id) {
    throw badRequest("You don't have permission to edit this message");
  }
  if (newChannel) {
    if (!canMoveBetweenChannels(h, user, fromChannel)) throw badRequest("You don't have permission to move this message");
    if (!canPostToChannel(h, user, newChannel)) throw badRequest("You do not have permission to post in this channel.");
  }
  const target = newChannel ?? fromChannel;
  if (newTopic !== undefined) checkTopicPolicy(h, target, newTopic, "edit");
  else checkTopicPolicy(h, target, message.topic, "move");
  if (!resolving) checkMayCreateTopic(h, user, target, newTopic ?? message.topic);
  let ids = [message.id];
  if (req.propagateMode !== "change_one") {
    ids = topicMessageIds(h.store, message.channel_id!, message.topic).filter((id) => req.propagateMode === "change_all" || id >= message.id);
  }
  if (!isModerator(user) && !(resolving && !newChannel)) checkMoveTimeLimit(h, ids, newChannel !== undefined, req.propagateMode, now);
  return { ids, onlyResolving: resolving && !newChannel };
}

/** The organization's time limit on moves: all of `ids` must be young enough to move. */
function checkMoveTimeLimit(h: Hearth, ids: number[], toOtherChannel: boolean, propagateMode: PropagateMode, now: number): void {
  const limit = realmSetting<number | null>(h, toOtherChannel ? "move_messages_between_streams_limit_seconds" : "move_messages_within_stream_limit_seconds", DEFAULT_MOVE_LIMIT);
  if (limit === null) return;
  const allowed = ids.filter((id) => {
    const m = getMessage(h.store, id);
    return m !== undefined && now - m.timestamp <= limit;
  });
  if (propagateMode === "change_one" && allowed.length === 0) {
    throw badRequest(toOtherChannel ? "The time limit for editing this message's channel has passed" : "The time limit for editing this message's topic has passed.");
  }
  if (allowed.length < ids.length) {
    throw new ApiError(`You only have permission to move the ${allowed.length} most recent messages in this topic.`, "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED", 400, {
      first_message_id_allowed_to_move: allowed[0] ?? null,
      total_messages_in_topic: ids.length,
      total_messages_allowed_to_move: allowed.length,
    });
  }
}

/**
 * Inside the move's commit: users' rows follow the messages to another channel, by
 * Zulip's rules. Everyone ever subscribed to the old channel who is not subscribed to
 * the new one (deactivated accounts included) loses their rows. A private destination
 * takes the messages away from all of them, a public one from guests only: those get
 * delete_message (the returned set); the others still read them there (public
 * history) and hear of the move. A destination with protected history gives its
 * subscribers rows (read), so they can see them. `holders` (who hears of the edit,
 * with their flags) is updated to match.
 */
export function moveRowsToChannel(
  h: Hearth,
  fromChannelId: number,
  newChannel: MessageChannel,
  moved: readonly MessageRecord[],
  holders: Map<number, number>,
  recipientFlags: (m: MessageRecord) => Map<number, number>,
): Set<number> {
  const lostAccess = new Set<number>();
  const newSubscribers = new Set(channelSubscriberIds(h, newChannel.id));
  const losingRows = new Set(everSubscribedIds(h.store, fromChannelId).filter((id) => !newSubscribers.has(id)));
  for (const userId of losingRows) {
    const u = getUser(h.store, userId);
    if (newChannel.invite_only || !u || isGuest(u)) lostAccess.add(userId);
  }
  const removals = moved.map((message) => ({ message, rows: new Map([...recipientFlags(message)].filter(([userId]) => losingRows.has(userId))) }));
  removeUserRows(h.store, removals);
  for (const { rows } of removals) for (const userId of rows.keys()) holders.delete(userId);
  if (!newChannel.history_public_to_subscribers) {
    for (const message of moved) {
      addUserRows(h.store, message, [...newSubscribers].filter((userId) => getUserFlags(h.store, userId, message.id) === undefined), MessageFlag.read);
    }
    for (const userId of newSubscribers) if (!holders.has(userId)) holders.set(userId, MessageFlag.read);
  }
  // Old-channel subscribers who keep access without rows see the messages leave,
  // where that channel's history was theirs to read (as in Zulip).
  const oldChannel = channelById(h, fromChannelId);
  if (oldChannel && (!oldChannel.invite_only || oldChannel.history_public_to_subscribers)) {
    for (const userId of channelSubscriberIds(h, oldChannel.id)) {
      if (!holders.has(userId) && !lostAccess.has(userId)) holders.set(userId, MessageFlag.read);
    }
  }
  return lostAccess;
}

/**
 * Inside the move's commit: Zulip moves users' topic policies with a whole topic —
 * propagate_mode change_all, or no message of the old topic left that the mover can read.
 */
export function moveTopicPolicies(
  h: Hearth,
  user: UserRecord,
  original: MessageRecord,
  moved: { ids: readonly number[]; newTopic: string | undefined; newChannel: MessageChannel | undefined; lostAccess: Set<number> },
  propagateMode: PropagateMode,
): WrittenPolicies {
  const readable = readableChannels(h, user);
  const movedWholeTopic =
    propagateMode === "change_all" || !topicMessageIds(h.store, original.channel_id!, original.topic).some((id) => readableMessage(h, user, id, readable));
  if (!movedWholeTopic) return [];
  const toChannelId = moved.newChannel?.id ?? original.channel_id!;
  const toTopic = moved.newTopic ?? original.topic;
  // The destination's own messages, besides those just moved there (policies then merge).
  const movedIds = new Set(moved.ids);
  const destinationHadMessages = topicMessageIds(h.store, toChannelId, toTopic).some((id) => !movedIds.has(id));
  const plan = { fromChannelId: original.channel_id!, fromTopic: original.topic, toChannelId, toTopic, destinationHadMessages, lostAccess: moved.lostAccess };
  return writePolicyChanges(h, planMoveTopicPolicies(h, plan));
}

/**
 * A user's resolved_topic_notice_auto_read_policy (FL 385): "always" marks resolve and
 * unresolve notices read, "except_followed" unless they follow the topic, "never" not.
 */
function resolveNoticeStartsRead(h: Hearth, userId: number, channelId: number, topic: string): boolean {
  const user = getUser(h.store, userId);
  const policy = user ? userSetting(user, "resolved_topic_notice_auto_read_policy") : "never";
  if (policy === "always") return true;
  return policy === "except_followed" && visibilityPolicyOf(h.store, userId, channelId, topic) !== VisibilityPolicy.FOLLOWED;
}

/**
 * Zulip's Notification Bot messages after a move: "moved here from" in the new
 * thread and "moved to" in the old one (as the client asked), or the resolve /
 * unresolve notice when only the ✔ prefix changed.
 */
export async function sendMoveNotifications(
  h: Hearth,
  user: UserRecord,
  original: MessageRecord,
  count: number,
  newChannel: MessageChannel | undefined,
  newTopic: string | undefined,
  req: MoveRequest,
): Promise<void> {
  const bot = getSystemBot(h.store, "notification");
  if (!bot) return;
  const oldChannel = channelById(h, original.channel_id!);
  if (!oldChannel) return;
  const toChannel = newChannel ?? oldChannel;
  const toTopic = newTopic ?? original.topic;
  const actor = silentMention(user);
  const send = (channel: MessageChannel, topic: string, content: string) =>
    doSendMessage(h, bot, { target: { type: "stream", channel, topic }, content, client: "Internal", readBySender: true });
  if (!newChannel && newTopic !== undefined && togglesResolved(original.topic, newTopic, req.topic ?? newTopic)) {
    const resolved = newTopic.startsWith(RESOLVED_TOPIC_PREFIX);
    const content = `${actor} has marked this topic as ${resolved ? "resolved" : "unresolved"}.`;
    await doSendMessage(h, bot, { target: { type: "stream", channel: toChannel, topic: toTopic }, content, client: "Internal", readBySender: true, readFor: (id) => resolveNoticeStartsRead(h, id, toChannel.id, toTopic) });
    return;
  }
  const link = (channel: MessageChannel, topic: string) => topicLinkSyntax(channel.id, channel.name, topic);
  const what = req.propagateMode === "change_all" ? "This topic was" : count === 1 ? "A message was" : `${count} messages were`;
  if (req.sendNotificationToNewThread) await send(toChannel, toTopic, `${what} moved here from ${link(oldChannel, original.topic)} by ${actor}.`);
  if (req.sendNotificationToOldThread) await send(oldChannel, original.topic, `${what} moved to ${link(toChannel, toTopic)} by ${actor}.`);
}
