import type { Hearth } from "../context";
import { commit } from "../events/commit";
import type { ApiEvent } from "../events/hub";
import type { EventQueue } from "../events/event_queue";
import { guardedTick } from "../lib/background";
import type { RenderResult } from "../markdown";
import { dueMissedMessageBatches, missedMessagesDueAt, putMissedMessage, takeMissedMessages, type MissedMessageTrigger } from "../store/account_emails";
import { getMessage, MessageFlag } from "../store/messages";
import { isMuted } from "../store/personal";
import { getPresence } from "../store/presence";
import { getSubscription } from "../store/subscriptions";
import { getSystemBot } from "../store/system_bots";
import { getUserFlags } from "../store/user_messages";
import { topicFollowers, visibilityPolicyOf, VisibilityPolicy } from "../store/user_topics";
import { getUser, type UserRecord } from "../store/users";
import { buildMissedMessageEmail, conversationOf, type MissedMessage } from "../views/missed_message_email";
import { userSetting } from "../views/settings";
import { signAccountToken, TokenPurpose } from "./account_tokens";
import type { MessageTarget } from "./message_content";
import { queueEmail } from "./email";

/**
 * Missed-message emails, as Zulip sends them (its notification triggers, its
 * MissedMessageWorker and handle_missedmessage_emails):
 *
 * 1. At send, each recipient who would want an email for this message (a DM, a
 *    personal or group mention, a wildcard mention they get notified for, a message
 *    in a topic they follow with followed-topic emails on) and is offline gets one
 *    row in the send's own transaction: nothing else for everyone else, so a plain
 *    channel message adds no work beyond a look at the topic's followers.
 * 2. Offline means what Zulip's Tornado decides: no event queue that receives
 *    messages (receiver_is_off_zulip), or no client reporting the user active in the
 *    last 140 seconds (presence idle, Zulip's OFFLINE_THRESHOLD_SECS).
 * 3. A user's rows are batched: the first opens a batch due after their
 *    `email_notifications_batching_period_seconds` (default 120); later ones join it.
 * 4. When the batch is due, a background job takes it in one transaction with the
 *    emails it queues (so each batch is sent once): messages read, deleted or no
 *    longer received by then are dropped, and the rest make one email per
 *    conversation (a channel topic or a DM conversation), oldest conversation first.
 *    `enable_offline_email_notifications` off by then sends nothing, as in Zulip.
 */

/** Zulip's OFFLINE_THRESHOLD_SECS: presence older than this counts as idle. */
const ACTIVE_PRESENCE_SECONDS = 140;

function receivesMessagesNow(h: Hearth, userId: number, nowMs: number, except?: EventQueue): boolean {
  for (const queue of h.queues.queuesOf(userId)) {
    if (queue === except || queue.idleExpired(nowMs)) continue;
    const types = queue.settings.eventTypes;
    if (types === null || types.includes("message")) return true;
  }
  return false;
}

/** Whether the user counts as away for notifications (see above). */
export function isOfflineForNotifications(h: Hearth, userId: number, nowMs = Date.now()): boolean {
  if (!receivesMessagesNow(h, userId, nowMs)) return true;
  const presence = getPresence(h.store, userId);
  return presence === undefined || nowMs / 1000 - presence.last_active_time > ACTIVE_PRESENCE_SECONDS;
}

/** Wildcard mentions notify unless the user turned them off (per channel or overall) or muted the conversation. */
function wildcardNotifies(h: Hearth, user: UserRecord, channelId: number, topic: string): boolean {
  const sub = getSubscription(h.store, channelId, user.id);
  const setting = sub?.wildcard_mentions_notify ?? userSetting(user, "wildcard_mentions_notify");
  if (setting !== true) return false;
  const policy = visibilityPolicyOf(h.store, user.id, channelId, topic);
  if (policy === VisibilityPolicy.MUTED) return false;
  return !(sub?.is_muted && policy !== VisibilityPolicy.UNMUTED && policy !== VisibilityPolicy.FOLLOWED);
}

/** Where a message is: a channel topic, or null for a direct message. */
type Place = { channelId: number; topic: string } | null;

/** Zulip's get_email_notification_trigger, for one recipient of a message. */
function triggerFor(h: Hearth, user: UserRecord, bits: number, place: Place, followed: boolean): MissedMessageTrigger | null {
  if (place === null) return "private_message";
  if (bits & MessageFlag.mentioned) return "mentioned";
  const topicWildcard = (bits & MessageFlag.topic_wildcard_mentioned) !== 0;
  const channelWildcard = (bits & MessageFlag.stream_wildcard_mentioned) !== 0;
  if (topicWildcard || channelWildcard) {
    if (followed && userSetting(user, "enable_followed_topic_wildcard_mentions_notify") === true) {
      return topicWildcard ? "topic_wildcard_mentioned_in_followed_topic" : "stream_wildcard_mentioned_in_followed_topic";
    }
    if (wildcardNotifies(h, user, place.channelId, place.topic)) return topicWildcard ? "topic_wildcard_mentioned" : "stream_wildcard_mentioned";
  }
  if (followed && userSetting(user, "enable_followed_topic_email_notifications") === true) return "followed_topic_email_notify";
  return null;
}

/**
 * The recipients of a message about to be sent who get a missed-message row, with
 * why. Only the users a message singles out are looked at (DM members, those
 * mentioned, the topic's followers), all recipients only for a channel-wide mention.
 */
export function missedMessageTriggers(
  h: Hearth,
  sender: UserRecord,
  target: MessageTarget,
  flagsByUser: ReadonlyMap<number, number>,
  rendered: RenderResult,
  mentionedGroupMembers: ReadonlySet<number>,
  topicParticipants: ReadonlySet<number>,
): Map<number, MissedMessageTrigger> {
  const out = new Map<number, MissedMessageTrigger>();
  // No mail server: nothing could be sent, so nothing is recorded (and the send does no work for it).
  if (h.email.mailer === null) return out;
  // Welcome Bot greets every new account as it is made: an onboarding message, not one to email about.
  if (sender.is_system_bot && sender.id === getSystemBot(h.store, "welcome")?.id) return out;
  const followers = target.type === "stream" ? new Set(topicFollowers(h.store, target.channel.id, target.topic)) : new Set<number>();
  let candidates: Iterable<number>;
  if (target.type === "private" || rendered.channelWildcard) candidates = flagsByUser.keys();
  else candidates = new Set([...rendered.mentionedUserIds, ...mentionedGroupMembers, ...(rendered.topicWildcard ? topicParticipants : []), ...followers]);
  const place: Place = target.type === "stream" ? { channelId: target.channel.id, topic: target.topic } : null;
  const now = Date.now();
  for (const userId of candidates) {
    const bits = flagsByUser.get(userId);
    if (bits === undefined || userId === sender.id || bits & MessageFlag.read) continue;
    const user = getUser(h.store, userId);
    if (!user || !user.is_active || user.is_bot) continue;
    if (userSetting(user, "enable_offline_email_notifications") !== true) continue;
    const trigger = triggerFor(h, user, bits, place, followers.has(userId));
    if (trigger === null || isMuted(h.store, userId, sender.id)) continue;
    if (!isOfflineForNotifications(h, userId, now)) continue;
    out.set(userId, trigger);
  }
  return out;
}

/** Call inside the send's transaction: one row per recipient `missedMessageTriggers` chose. */
export function recordMissedMessages(h: Hearth, messageId: number, triggers: ReadonlyMap<number, MissedMessageTrigger>): void {
  if (triggers.size === 0) return;
  const now = Date.now();
  for (const [userId, trigger] of triggers) {
    const user = getUser(h.store, userId)!;
    const period = Number(userSetting(user, "email_notifications_batching_period_seconds"));
    const due = missedMessagesDueAt(h.store, userId) ?? now + period * 1000;
    putMissedMessage(h.store, userId, messageId, { trigger, due });
  }
}

/**
 * Zulip's missedmessage_hook: when a user's last queue receiving messages is dropped
 * for idleness (the client went away without saying so), the messages it still held
 * were never seen, and the user was online when they arrived, so no row was made
 * then. Each one that would have made a row for an offline user makes it now.
 */
async function recordMissedOfCollectedQueue(h: Hearth, queue: EventQueue, events: readonly ApiEvent[]): Promise<void> {
  const userId = queue.userId;
  if (h.email.mailer === null || receivesMessagesNow(h, userId, Date.now(), queue)) return;
  const messageIds = events.filter((e) => e.type === "message").map((e) => (e.message as { id: number }).id);
  if (messageIds.length === 0) return;
  const triggers = new Map<number, MissedMessageTrigger>();
  const user = getUser(h.store, userId);
  if (!user || !user.is_active || user.is_bot || userSetting(user, "enable_offline_email_notifications") !== true) return;
  for (const id of messageIds) {
    const message = getMessage(h.store, id);
    const bits = getUserFlags(h.store, userId, id);
    if (!message || bits === undefined || bits & MessageFlag.read || message.sender_id === userId) continue;
    if (isMuted(h.store, userId, message.sender_id)) continue;
    const place: Place = message.type === "stream" ? { channelId: message.channel_id!, topic: message.topic } : null;
    const followed = place !== null && topicFollowers(h.store, place.channelId, place.topic).includes(userId);
    const trigger = triggerFor(h, user, bits, place, followed);
    if (trigger !== null) triggers.set(id, trigger);
  }
  if (triggers.size === 0) return;
  await commit(h, () => {
    const period = Number(userSetting(user, "email_notifications_batching_period_seconds"));
    const due = missedMessagesDueAt(h.store, userId) ?? Date.now() + period * 1000;
    for (const [messageId, trigger] of triggers) putMissedMessage(h.store, userId, messageId, { trigger, due });
  });
}

export function unsubscribeUrl(h: Hearth, user: UserRecord): string {
  const token = signAccountToken(h, TokenPurpose.unsubscribe, { u: user.id, k: "missed_messages" });
  return `${h.realmUrl()}/accounts/unsubscribe/missed_messages/${token}`;
}

/** Takes one user's due batch and queues its emails, in one transaction. Answers how many emails it queued. */
async function sendBatch(h: Hearth, userId: number): Promise<number> {
  return commit(h, (tx) => {
    const rows = takeMissedMessages(h.store, userId);
    const user = getUser(h.store, userId);
    if (!user || !user.is_active || userSetting(user, "enable_offline_email_notifications") !== true) return 0;
    const byConversation = new Map<string, MissedMessage[]>();
    for (const [messageId, row] of rows) {
      const message = getMessage(h.store, messageId);
      const flags = getUserFlags(h.store, userId, messageId);
      if (!message || flags === undefined || flags & MessageFlag.read) continue;
      const key = conversationOf(message);
      let list = byConversation.get(key);
      if (!list) byConversation.set(key, (list = []));
      list.push({ message, trigger: row.trigger });
    }
    if (byConversation.size === 0) return 0;
    const unsubscribe = unsubscribeUrl(h, user);
    const newest = (list: MissedMessage[]) => Math.max(...list.map((m) => m.message.id));
    const conversations = [...byConversation.values()].sort((a, b) => newest(a) - newest(b));
    for (const missed of conversations) {
      const email = buildMissedMessageEmail(h, user, missed, unsubscribe);
      queueEmail(h, tx, {
        to: user.email,
        ...email,
        kind: "missed_messages",
        autoSubmitted: true,
        headers: { "List-Unsubscribe": `<${unsubscribe}>`, "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" },
      });
    }
    return conversations.length;
  });
}

/** Sends every batch due by now; answers how many emails were queued. */
export async function sendDueMissedMessageEmails(h: Hearth, now = Date.now()): Promise<number> {
  let queued = 0;
  for (;;) {
    const due = dueMissedMessageBatches(h.store, now);
    if (due.length === 0) return queued;
    for (const { userId } of due) queued += await sendBatch(h, userId);
  }
}

/** The background job: looks for due batches every `intervalMs` (a range read of one small key space). */
export function startMissedMessageEmailJob(h: Hearth, intervalMs = 1000): { stop(): Promise<void> } {
  let current: Promise<unknown> | null = null;
  const tick = guardedTick("Sending missed-message emails", () => {
    current ??= sendDueMissedMessageEmails(h).finally(() => (current = null));
    return current;
  });
  const timer = setInterval(tick, intervalMs);
  (timer as { unref?: () => void }).unref?.();
  let stopped = false;
  h.queues.onIdleCollected((queue, events) => {
    if (!stopped) recordMissedOfCollectedQueue(h, queue, events).catch((error) => console.error("Recording missed messages of a collected queue failed:", error));
  });
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await current?.catch(() => undefined);
    },
  };
}
