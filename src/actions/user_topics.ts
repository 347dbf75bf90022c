import type { Hearth } from "../context";
import type { EventOf } from "../schemas/events";
import { commit, type Transaction } from "../events/commit";
import { badRequest } from "../errors";
import { accessChannel } from "../access/channels";
import { getUserTopic, policiesOnTopic, putUserTopic, VisibilityPolicy, type UserTopic } from "../store/user_topics";
import { getUser, type UserRecord } from "../store/users";
import { topicKey } from "../store/messages";
import { getSubscription } from "../store/subscriptions";
import { userSetting } from "../views/settings";
import { mutedTopicsView } from "../views/user_topics";
import { MAX_TOPIC_LENGTH, normalizeTopic } from "./message_content";

/**
 * `POST /user_topics`: sets one topic's visibility policy for the caller. Setting
 * the current policy again changes nothing (FL 170: no error either). Sends the
 * legacy `muted_topics` list and the `user_topic` event; each queue gets the one it
 * asked for.
 */
export async function doSetTopicVisibility(h: Hearth, user: UserRecord, channelId: number, topic: string, policy: number): Promise<void> {
  if (![0, 1, 2, 3].includes(policy)) throw badRequest("Invalid visibility_policy");
  // Code points, as Zulip counts topic lengths (an emoji is one).
  if ([...topic].length > MAX_TOPIC_LENGTH) throw badRequest(`topic is too long (limit: ${MAX_TOPIC_LENGTH} characters)`);
  // Same rules as sending: "(no topic)" is the empty topic (FL 370).
  const name = normalizeTopic(topic);
  accessChannel(h, user, channelId, { allowArchived: true });
  await applyPolicyChanges(h, [{ userId: user.id, channelId, topic: name, policy }]);
}

/** The legacy `PATCH /users/me/subscriptions/muted_topics` add. */
export async function doMuteTopic(h: Hearth, user: UserRecord, channelId: number, topic: string): Promise<void> {
  await doSetTopicVisibility(h, user, channelId, topic, VisibilityPolicy.MUTED);
}

/** The legacy `PATCH /users/me/subscriptions/muted_topics` remove: unmutes, and leaves a followed or unmuted topic alone. */
export async function doUnmuteTopic(h: Hearth, user: UserRecord, channelId: number, topic: string): Promise<void> {
  if (getUserTopic(h.store, user.id, channelId, normalizeTopic(topic))?.visibility_policy !== VisibilityPolicy.MUTED) return;
  await doSetTopicVisibility(h, user, channelId, topic, VisibilityPolicy.INHERIT);
}

export interface PolicyChange {
  userId: number;
  channelId: number;
  topic: string;
  policy: number;
}

/**
 * Writes policy changes (any users, any topics) in one transaction; then each change
 * is a `user_topic` event to its user, and each user whose policies changed gets the
 * legacy `muted_topics` list once, as it stands after all of them.
 */
async function applyPolicyChanges(h: Hearth, changes: readonly PolicyChange[]): Promise<void> {
  await commit(h, (tx) => publishPolicyChanges(tx, h, writePolicyChanges(h, changes)));
}

/** The policies a transaction wrote, for publishPolicyChanges. */
export type WrittenPolicies = { userId: number; topic: UserTopic }[];

/** Inside a transaction: writes the changes that change something. */
export function writePolicyChanges(h: Hearth, changes: readonly PolicyChange[]): WrittenPolicies {
  const written: WrittenPolicies = [];
  for (const { userId, channelId, topic, policy } of changes) {
    const current = getUserTopic(h.store, userId, channelId, topic);
    if ((current?.visibility_policy ?? VisibilityPolicy.INHERIT) === policy) continue;
    const next: UserTopic = { stream_id: channelId, topic_name: topic, visibility_policy: policy, last_updated: Math.floor(Date.now() / 1000) };
    putUserTopic(h.store, userId, next);
    written.push({ userId, topic: next });
  }
  return written;
}

type VisibilityPolicyValue = Extract<EventOf<"user_topic">, object>["visibility_policy"];

/** The legacy muted_topics list once per user, then each change as user_topic (in the transaction that wrote them). */
export function publishPolicyChanges(tx: Transaction, h: Hearth, written: WrittenPolicies): void {
  // Most sends change no policy.
  if (written.length === 0) return;
  for (const userId of new Set(written.map((d) => d.userId))) {
    tx.notify({ type: "muted_topics", muted_topics: mutedTopicsView(h, userId) }, [userId]);
  }
  for (const { userId, topic } of written) tx.notify({ type: "user_topic", ...topic, visibility_policy: topic.visibility_policy as VisibilityPolicyValue }, [userId]);
}

/** Zulip's get_visibility_policy_after_merge: the more visible of the two wins. */
function mergedPolicy(a: number, b: number): number {
  for (const policy of [VisibilityPolicy.FOLLOWED, VisibilityPolicy.UNMUTED, VisibilityPolicy.INHERIT]) if (a === policy || b === policy) return policy;
  return VisibilityPolicy.MUTED;
}

/**
 * Zulip's do_update_message rule when a whole topic moves: each user's policy moves
 * with it, merged with what they had set on the destination when it already has
 * messages (the more visible wins); users who cannot read the destination channel
 * just lose the policy. The changes to write in the move's own transaction
 * (writePolicyChanges), so a crash never leaves the messages moved without them.
 */
export function planMoveTopicPolicies(
  h: Hearth,
  move: { fromChannelId: number; fromTopic: string; toChannelId: number; toTopic: string; destinationHadMessages: boolean; lostAccess: ReadonlySet<number> },
): PolicyChange[] {
  // A rename that only changes case keeps the same topic, and its policies where they are.
  if (move.fromChannelId === move.toChannelId && topicKey(move.fromTopic) === topicKey(move.toTopic)) return [];
  const from = policiesOnTopic(h.store, move.fromChannelId, move.fromTopic);
  const to = policiesOnTopic(h.store, move.toChannelId, move.toTopic);
  const changes: PolicyChange[] = [];
  for (const userId of new Set([...from.keys(), ...to.keys()])) {
    const orig = from.get(userId) ?? VisibilityPolicy.INHERIT;
    if (orig !== VisibilityPolicy.INHERIT) changes.push({ userId, channelId: move.fromChannelId, topic: move.fromTopic, policy: VisibilityPolicy.INHERIT });
    if (move.lostAccess.has(userId)) continue;
    const target = to.get(userId) ?? VisibilityPolicy.INHERIT;
    const next = move.destinationHadMessages ? mergedPolicy(orig, target) : orig;
    if (next !== target) changes.push({ userId, channelId: move.toChannelId, topic: move.toTopic, policy: next });
  }
  return changes;
}

/** Zulip's delete-topic rule: the topic no longer exists, so neither do the policies on it. */
export async function doClearTopicPolicies(h: Hearth, channelId: number, topic: string): Promise<void> {
  const changes = [...policiesOnTopic(h.store, channelId, topic).keys()].map((userId) => ({ userId, channelId, topic, policy: VisibilityPolicy.INHERIT }));
  if (changes.length > 0) await applyPolicyChanges(h, changes);
}

/** Values of `automatically_follow_topics_policy` and `automatically_unmute_topics_in_muted_streams_policy`. */
const AutomaticPolicy = { ON_PARTICIPATION: 1, ON_SEND: 2, ON_INITIATION: 3, NEVER: 4 } as const;

function appliesOnSend(policy: unknown, startsTopic: boolean): boolean {
  return policy === AutomaticPolicy.ON_PARTICIPATION || policy === AutomaticPolicy.ON_SEND || (policy === AutomaticPolicy.ON_INITIATION && startsTopic);
}

/**
 * Zulip's automatic topic visibility for a channel message: the sender follows the
 * topic (or, in a muted channel, unmutes it) per their settings, and users mentioned
 * follow it when `automatically_follow_topics_where_mentioned`, unless they muted it.
 * Planned before the message commits and written in its transaction, so that, as in
 * Zulip's do_send_messages, clients hear of the new policies before the message.
 */
export function planAutomaticTopicPolicies(
  h: Hearth,
  sender: UserRecord,
  channelId: number,
  topic: string,
  startsTopic: boolean,
  mentionedUserIds: number[],
): PolicyChange[] {
  let senderPolicy: number | undefined;
  // The sender's settings and subscription first: when neither rule applies (most
  // sends), their policy on the topic is not looked up.
  const follows = appliesOnSend(userSetting(sender, "automatically_follow_topics_policy"), startsTopic);
  let unmutes = false;
  if (!follows && appliesOnSend(userSetting(sender, "automatically_unmute_topics_in_muted_streams_policy"), startsTopic)) {
    const subscription = getSubscription(h.store, channelId, sender.id);
    unmutes = subscription?.active === true && subscription.is_muted;
  }
  if (follows || unmutes) {
    const current = getUserTopic(h.store, sender.id, channelId, topic)?.visibility_policy ?? VisibilityPolicy.INHERIT;
    if (follows) {
      if (current !== VisibilityPolicy.FOLLOWED) senderPolicy = VisibilityPolicy.FOLLOWED;
    } else if (current === VisibilityPolicy.INHERIT) senderPolicy = VisibilityPolicy.UNMUTED;
  }
  // The sender could post there, so no access check is needed.
  const changes: PolicyChange[] = senderPolicy === undefined ? [] : [{ userId: sender.id, channelId, topic, policy: senderPolicy }];
  for (const id of mentionedUserIds) {
    const user = getUser(h.store, id);
    if (!user || user.is_bot || userSetting(user, "automatically_follow_topics_where_mentioned") !== true) continue;
    // Zulip: a topic the user muted stays muted ("explicitly muted takes precedence").
    if (getUserTopic(h.store, id, channelId, topic)?.visibility_policy === VisibilityPolicy.MUTED) continue;
    changes.push({ userId: id, channelId, topic, policy: VisibilityPolicy.FOLLOWED });
  }
  return changes;
}

/**
 * Zulip's rule for taking part in a topic without posting (a reaction, a poll vote):
 * a subscriber whose policy is "on participation" follows the topic, or in a muted
 * channel unmutes it. These policies only ever raise a topic's visibility. The
 * change to write in the participation's own transaction (writePolicyChanges), as
 * Zulip's check_add_reaction does.
 */
export function participationPolicyChanges(h: Hearth, user: UserRecord, channelId: number, topic: string): PolicyChange[] {
  if (user.is_bot) return [];
  // Zulip's access_stream_by_id: a subscription still held (rows stay after unsubscribing).
  const subscription = getSubscription(h.store, channelId, user.id);
  if (!subscription?.active) return [];
  let policy: number | undefined;
  if (userSetting(user, "automatically_follow_topics_policy") === AutomaticPolicy.ON_PARTICIPATION) policy = VisibilityPolicy.FOLLOWED;
  if (subscription.is_muted && userSetting(user, "automatically_unmute_topics_in_muted_streams_policy") === AutomaticPolicy.ON_PARTICIPATION) {
    policy = VisibilityPolicy.UNMUTED;
  }
  if (policy === undefined) return [];
  const current = getUserTopic(h.store, user.id, channelId, topic)?.visibility_policy;
  if (current === policy || (policy === VisibilityPolicy.UNMUTED && current === VisibilityPolicy.FOLLOWED)) return [];
  return [{ userId: user.id, channelId, topic, policy }];
}
