import type { Hearth } from "../context";
import { badRequest } from "../errors";
import type { RenderResult } from "../markdown";
import { inRealmGroup, isSystemGroupSetting, isUserInGroupSetting } from "../access/groups";
import { topicExists } from "../store/message_topics";
import { conversationKey } from "../store/messages";
import { idsInRange } from "../store/message_indexes";
import { getUserGroup } from "../store/user_groups";
import { getUser, type UserRecord } from "../store/users";
import { botOwner, canPostToChannel, channelSubscriberIds, type MessageChannel } from "../views/message_channels";
import { realmSetting, topicDisplayName } from "../views/messages";
import { renderMessageContent, type MessageTarget } from "./message_content";
import { topicParticipants } from "./message_mentions";

/** The sender's permissions for a message's place and content (Zulip's check_message), shared by sending and editing. */

/**
 * Where a topic comes from, for the topic rules: a message sent or scheduled, a topic
 * given in an edit, or a moved message's own topic (its channel changed, not its topic).
 */
export type TopicSource = "send" | "edit" | "move";

/**
 * Applies the channel's (or organization's) `topics_policy` and the organization's
 * `mandatory_topics` to a topic. Where a topic is required, the spec refuses "" and
 * "(no topic)" (already "" here) and also `realm_empty_topic_display_name`, the name a
 * client without the empty_topic_name capability shows for the empty topic and would
 * send back. A moved message's existing topic is judged by what it is: "" only.
 * Zulip raises these as plain JsonableErrors (BAD_REQUEST), in its words: its send
 * path says "Topics are required in this organization" without the edit path's period.
 */
export function checkTopicPolicy(h: Hearth, channel: MessageChannel, topic: string, source: TopicSource = "send"): void {
  let policy = channel.topics_policy;
  if (policy === "inherit" || !policy) policy = realmSetting(h, "topics_policy", "allow_empty_topic");
  const empty = topic === "" || (source !== "move" && topic === emptyTopicDisplayName(h));
  if (empty && policy === "disable_empty_topic") {
    throw badRequest("Sending messages to the general chat is not allowed in this channel.");
  }
  if (topic !== "" && policy === "empty_topic_only") {
    throw badRequest("Only the general chat topic is allowed in this channel.");
  }
  if (empty && realmSetting(h, "mandatory_topics", false)) {
    throw badRequest(source === "send" ? "Topics are required in this organization" : "Topics are required in this organization.");
  }
}

/** The organization's `realm_empty_topic_display_name`. */
function emptyTopicDisplayName(h: Hearth): string {
  return topicDisplayName(h, "", { allowEmptyTopicName: false });
}

/** The sender's permissions for a message (also checked when a message is scheduled); `rendered` if already at hand. */
export function checkMayPost(h: Hearth, sender: UserRecord, target: MessageTarget, content: string, rendered?: RenderResult): void {
  if (target.type === "stream" && !canPostToChannel(h, sender, target.channel)) {
    throw badRequest("You do not have permission to post in this channel.");
  }
  if (target.type === "stream") checkMayCreateTopic(h, sender, target.channel, target.topic);
  if (target.type === "private") checkDirectMessagePermission(h, sender, target.userIds);
  const render = () => (rendered ??= renderMessageContent(h, sender, content));
  checkWildcardPermission(h, sender, target, content, render);
  checkGroupMentionPermission(h, sender, content, render);
}

/**
 * A topic with no message yet in the channel needs the channel's `can_create_topic_group`
 * (FL 441); role:nobody means nobody, administrators included. A bot may also use its
 * owner's permission; the server's own bots are exempt.
 */
export function checkMayCreateTopic(h: Hearth, user: UserRecord, channel: MessageChannel, topic: string): void {
  const setting = channel.groups.can_create_topic_group;
  if (user.is_system_bot || setting === undefined || isSystemGroupSetting(h, setting, "role:everyone")) return;
  if (topicExists(h.store, channel.id, topic)) return;
  const may = (u: UserRecord | undefined) => u !== undefined && !isSystemGroupSetting(h, setting, "role:nobody") && isUserInGroupSetting(h, u, setting);
  if (!may(user) && !may(botOwner(h, user))) throw badRequest("You do not have permission to create new topics in this channel.");
}

/**
 * Zulip's `check_user_group_mention_allowed`: a (non-silent) `@*group*` mention needs
 * the group's `can_mention_group`; `role:everyone` lets anyone, even the server's bots.
 */
export function checkGroupMentionPermission(h: Hearth, sender: UserRecord, content: string, render: () => RenderResult): void {
  if (!content.includes("@*")) return;
  for (const id of render().mentionedGroupIds) {
    const group = getUserGroup(h.store, id);
    if (!group) continue;
    const setting = group.settings.can_mention_group;
    if (isSystemGroupSetting(h, setting, "role:everyone")) continue;
    if (sender.is_system_bot || !isUserInGroupSetting(h, sender, setting)) {
      throw badRequest(`You are not allowed to mention user group '${group.name}'.`);
    }
  }
}

/**
 * Zulip's direct-message policies: a conversation needs a member of
 * `direct_message_permission_group` (conversations with only bots or oneself are
 * always allowed), and starting a new one needs `direct_message_initiator_group`.
 */
function checkDirectMessagePermission(h: Hearth, sender: UserRecord, userIds: number[]): void {
  const others = userIds.filter((id) => id !== sender.id).map((id) => getUser(h.store, id)!);
  if (others.length === 0 || others.every((u) => u.is_bot)) return;
  const participants = [sender, ...others];
  if (!participants.some((u) => inRealmGroup(h, u, "direct_message_permission_group"))) {
    throw badRequest("This conversation does not include any users who can authorize it.");
  }
  if (!inRealmGroup(h, sender, "direct_message_initiator_group")) {
    let exists = false;
    for (const _ of idsInRange(h.store, "dmMessages", [conversationKey(userIds)], Number.MAX_SAFE_INTEGER, "older")) {
      exists = true;
      break;
    }
    if (!exists) throw badRequest("You do not have permission to initiate direct message conversations.");
  }
}

/** Mentioning many users at once (`@**all**` in a channel of more than 15 subscribers) needs `can_mention_many_users_group`. */
const WILDCARD_MENTION_THRESHOLD = 15;

export function checkWildcardPermission(h: Hearth, sender: UserRecord, target: MessageTarget, content: string, render: () => RenderResult): void {
  if (target.type !== "stream" || !/@\*\*(all|everyone|channel|stream|topic)\*\*/.test(content)) return;
  if (inRealmGroup(h, sender, "can_mention_many_users_group")) return;
  const rendered = render();
  if (rendered.channelWildcard && channelSubscriberIds(h, target.channel.id).length > WILDCARD_MENTION_THRESHOLD) {
    throw badRequest("You do not have permission to use channel wildcard mentions in this channel.");
  }
  if (rendered.topicWildcard && topicParticipants(h, target.channel.id, target.topic).size > WILDCARD_MENTION_THRESHOLD) {
    throw badRequest("You do not have permission to use topic wildcard mentions in this topic.");
  }
}
