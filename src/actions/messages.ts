import { fitsKey } from "../store/db";
import { getSystemBot } from "../store/system_bots";
import { topicLinkSyntax } from "../markdown/links";
import { escapeRegExp } from "../lib/text";
import { silentMention, truncateContent } from "../markdown/syntax";
import type { Hearth } from "../context";
import { appendTo } from "../lib/collections";
import { inRealmGroup, isSystemGroupSetting, isUserInGroupSetting } from "../access/groups";
import { getUserGroup } from "../store/user_groups";
import { alertWordsByUser } from "../store/personal";
import { doClearTopicPolicies, participationPolicyChanges, planMoveTopicPolicies, planAutomaticTopicPolicies, publishPolicyChanges, writePolicyChanges, type WrittenPolicies } from "./user_topics";
import { activeRealmEmojiByName } from "../store/realm_emoji";
import { checkEmojiRequest, emojiCodeByName, emojiTypeByName, type ReactionInput } from "./realm_emoji";
import { realmEmojiPath } from "../views/realm_emoji";
import { ApiError, badRequest, mustBeAdmin } from "../errors";
import { allUsers, getUser, inactiveUserIdsOf, type UserRecord } from "../store/users";
import { everSubscribedIds, getChannel, getSubscription, putChannel } from "../store/channels";
import { visibilityPolicyOf, VisibilityPolicy } from "../store/user_topics";
import { accessChannel, channelViewerIds } from "../access/channels";
import {
  conversationKey,
  MAX_DM_PARTICIPANTS,
  deleteMessageRows,
  flagList,
  getMessage,
  getUserFlags,
  idsInRange,
  indexRows,
  insertMessage,
  unreadMessageIds,
  relocateUnreadRows,
  removeUserRows,
  addUserRows,
  messageRecipientFlags,
  messageRecipientIds,
  messageLocation,
  type MessageLocation,
  MENTION_BITS,
  MessageFlag,
  RESOLVED_TOPIC_PREFIX,
  recipientIdFor,
  replaceMessage,
  setUserFlags,
  setUserFlagsOfMessages,
  topicKey,
  type EditHistoryEntry,
  type MessageRecord,
  type Reaction,
} from "../store/messages";
import { linkProperties, renderMarkdown, topicLinks, type MentionableUser, type RenderContext, type RenderResult } from "../markdown";
import { DIFF_CELLS_PER_REQUEST, htmlDiff } from "../markdown/html_diff";
import { widgetFromContent, type WidgetContent } from "../markdown/widgets";
import { emojiCodeFor, emojiNameFor } from "../markdown/emoji";
import { apiEmail } from "../views/users";
import { visibleUserByEmail } from "../access/users";
import { isAdmin, isGuest, isModerator } from "../store/users";
import {
  canDeleteAnyMessage,
  canDeleteOwnMessage,
  canMoveBetweenChannels,
  canMoveBetweenTopics,
  canResolveTopics,
  canPostToChannel,
  canReadChannel,
  channelById,
  channelByName,
  channelSubscriberIds,
  groupForMention,
  groupMemberIds,
  isSubscribedTo,
  botOwner,
  type MessageChannel,
} from "../views/message_channels";
import { fetchRange, type AnchorSpec, type CompiledNarrow } from "../views/narrow";
import { editHistoryPolicy, formatMessage, readableChannels, readableMessage, realmSetting, topicDisplayName, visibleFlags } from "../views/messages";
import { userSetting } from "../views/settings";
import { outgoingWebhookTriggers, recordOutgoingWebhookCalls, startOutgoingWebhookCalls } from "./outgoing_webhooks";
import { attachmentView, notifyAttachmentChanges, releaseDeletedMessages, setMessageAttachments, type AttachmentChanges } from "./uploads";

export const MAX_MESSAGE_LENGTH = 10000;
export const MAX_TOPIC_LENGTH = 60;

export const invalidMessage = () => badRequest("Invalid message(s)");

/** Fetches a message the user may see, with their flags; Zulip's single error for missing and hidden ones. */
export function accessMessage(h: Hearth, user: UserRecord, id: number): { message: MessageRecord; flags: number } {
  const found = readableMessage(h, user, id);
  if (!found) throw invalidMessage();
  return found;
}

// ---------------------------------------------------------------------------
// Rendering

/** The most messages one render reads to find topic links' `with` messages. */
const TOPIC_LINK_READS = 1000;

/** Lookups for the renderer, as seen by the sender (hidden channels are not linked). */
export function renderContextFor(h: Hearth, sender: UserRecord): RenderContext {
  let byName: Map<string, MentionableUser[]> | null = null;
  let readable: ReturnType<typeof readableChannels> | undefined;
  const topicLinkIds = new Map<string, number | undefined>();
  let topicLinkReads = 0;
  return {
    userById(id) {
      const u = getUser(h.store, id);
      return u && !u.is_system_bot ? { id: u.id, full_name: u.full_name, is_active: u.is_active } : undefined;
    },
    usersByName(name) {
      if (!byName) {
        byName = new Map();
        for (const u of allUsers(h.store)) {
          if (u.is_system_bot) continue;
          const key = u.full_name.toLowerCase();
          appendTo(byName, key, { id: u.id, full_name: u.full_name, is_active: u.is_active });
        }
      }
      const matches = byName.get(name.toLowerCase()) ?? [];
      // A deactivated namesake does not make an active user's name ambiguous.
      const active = matches.filter((u) => u.is_active !== false);
      return active.length > 0 ? active : matches;
    },
    groupByName: (name) => groupForMention(h, name),
    channelByName(name) {
      const c = channelByName(h, name);
      return c && (sender.is_system_bot || canReadChannel(h, sender, c)) ? { id: c.id, name: c.name } : undefined;
    },
    linkifiers: realmSetting(h, "linkifiers", [] as { pattern: string; url_template: string }[]),
    realmEmojiByName(name) {
      const e = activeRealmEmojiByName(h.store, name);
      // A relative URL, as Zulip renders it: the page's origin serves it.
      return e ? { id: e.id, url: realmEmojiPath(e) } : undefined;
    },
    topicLinkMessageId(channelId, topic) {
      // Zulip's get_first_message_for_user_in_topic: the oldest the writer can read.
      // Each topic is looked up once per message, and one message reads at most
      // TOPIC_LINK_READS messages in all (a topic the writer cannot read from its start
      // gets a link without `with`): a message repeating a link must not cost a
      // topic's whole history each time.
      // A topic longer than any key (the link's text is the writer's) was never stored.
      if (!fitsKey(topicKey(topic))) return undefined;
      const key = `${channelId}\u0000${topicKey(topic)}`;
      if (topicLinkIds.has(key)) return topicLinkIds.get(key);
      readable ??= readableChannels(h, sender);
      let found: number | undefined;
      for (const id of idsInRange(h.store, "topicMessages", [channelId, topicKey(topic)], 0, "newer")) {
        if (topicLinkReads++ >= TOPIC_LINK_READS) break;
        if (sender.is_system_bot || readableMessage(h, sender, id, readable)) {
          found = id;
          break;
        }
      }
      topicLinkIds.set(key, found);
      return found;
    },
    emptyTopicDisplayName: topicDisplayName(h, "", { allowEmptyTopicName: false }),
    ownUrl: h.realmUrl(),
    translateEmoticons: userSetting(sender, "translate_emoticons") === true,
    defaultCodeBlockLanguage: realmSetting(h, "default_code_block_language", ""),
  };
}

export function renderMessageContent(h: Hearth, sender: UserRecord, content: string): RenderResult {
  return renderMarkdown(content, renderContextFor(h, sender));
}

// ---------------------------------------------------------------------------
// Sending

export type MessageTarget =
  | { type: "stream"; channel: MessageChannel; topic: string }
  | { type: "private"; userIds: number[] };

/** Zulip truncates over-long content instead of refusing it. */
export function normalizeContent(content: string): string {
  // Zulip's normalize_body: trailing whitespace and leading blank lines go; NUL is refused.
  const trimmed = content.replace(/\s+$/, "").replace(/^\n+/, "");
  if (trimmed.trim() === "") throw badRequest("Message must not be empty");
  if (trimmed.includes("\0")) throw badRequest("Message must not contain null bytes");
  return truncateContent(trimmed, MAX_MESSAGE_LENGTH);
}

/** Topic rules: trimmed, `(no topic)` is the empty topic, no control characters, 60 characters (truncated like Zulip). */
export function normalizeTopic(raw: string): string {
  let topic = raw.trim();
  if (topic === "(no topic)") topic = "";
  const bad = [...topic].findIndex((ch) => /[\p{Cc}\p{Cs}\p{Cn}]/u.test(ch));
  if (bad !== -1) throw badRequest(`Invalid character in topic, at position ${bad + 1}!`);
  if ([...topic].length > MAX_TOPIC_LENGTH) topic = [...topic].slice(0, MAX_TOPIC_LENGTH - 3).join("") + "...";
  return topic;
}

/** Applies the channel's (or organization's) `topics_policy` to a topic. */
function checkTopicPolicy(h: Hearth, channel: MessageChannel, topic: string): void {
  let policy = channel.topics_policy;
  if (policy === "inherit" || !policy) policy = realmSetting(h, "topics_policy", "allow_empty_topic");
  if (topic === "" && policy === "disable_empty_topic") {
    throw new ApiError("Sending messages to the general chat is not allowed in this channel.", "TOPICS_REQUIRED");
  }
  if (topic !== "" && policy === "empty_topic_only") {
    throw badRequest("Only the general chat topic is allowed in this channel.");
  }
  if (topic === "" && realmSetting(h, "mandatory_topics", false)) throw new ApiError("Topics are required in this organization.", "TOPICS_REQUIRED");
}

/**
 * A recipient by ID or by email. By email as Zulip looks one up: the address the
 * sender sees — the placeholder always, a real address only where the sender may
 * see it — so a hidden address cannot be probed by messaging it.
 */
function resolveRecipientUser(h: Hearth, sender: UserRecord, item: unknown): UserRecord {
  let u: UserRecord | undefined;
  if (typeof item === "number") u = getUser(h.store, item);
  else if (typeof item === "string") u = visibleUserByEmail(h, sender, item.trim());
  if (!u || u.is_system_bot) {
    throw badRequest(typeof item === "string" ? `Invalid email '${item}'` : `Invalid user ID ${String(item)}`);
  }
  if (!u.is_active) throw badRequest(`'${apiEmail(h, u)}' is no longer using Zulip.`);
  return u;
}

/** Resolves POST /messages `type` and `to` (every form clients send) into a target. */
export function resolveTarget(h: Hearth, sender: UserRecord, type: string, to: unknown, topic: string | undefined): MessageTarget {
  if (type === "private" || type === "direct") {
    let items: unknown[];
    if (Array.isArray(to)) items = to;
    else if (typeof to === "number") items = [to];
    else if (typeof to === "string") items = to.split(",").map((s) => s.trim()).filter(Boolean);
    else throw badRequest("Invalid 'to' parameter");
    if (items.length === 0) throw badRequest("Message must have recipients");
    if (items.length >= MAX_DM_PARTICIPANTS) throw badRequest(`A direct message can have at most ${MAX_DM_PARTICIPANTS - 1} recipients.`);
    const ids = items.map((x) => resolveRecipientUser(h, sender, x).id);
    return { type: "private", userIds: [...new Set([...ids, sender.id])].sort((a, b) => a - b) };
  }
  if (type !== "stream" && type !== "channel") throw badRequest("Invalid type");
  let operand = Array.isArray(to) && to.length === 1 ? to[0] : to;
  // Zulip's Addressee.legacy_build: a channel message naming no channel goes to the bot's default one.
  const defaultChannelId = sender.bot_defaults?.sending_channel_id;
  if (Array.isArray(to) && to.length === 0 && defaultChannelId !== undefined && defaultChannelId !== null) operand = defaultChannelId;
  let channel: MessageChannel | undefined;
  // Zulip's access_stream_for_send_message: a bot may post wherever its owner is subscribed.
  const owner = botOwner(h, sender);
  const mayUse = (c: MessageChannel) => canReadChannel(h, sender, c) || (owner !== undefined && isSubscribedTo(h, c.id, owner.id));
  if (typeof operand === "number") {
    channel = channelById(h, operand);
    if (!channel || !mayUse(channel)) throw badRequest(`Channel with ID '${operand}' does not exist`);
  } else if (typeof operand === "string") {
    channel = channelByName(h, operand);
    if (!channel || !mayUse(channel)) {
      throw new ApiError(`Channel '${operand}' does not exist`, "STREAM_DOES_NOT_EXIST", 400, { stream: operand });
    }
  } else throw badRequest("Invalid 'to' parameter");
  if (channel.is_archived) throw badRequest("Not authorized to send to channel");
  const normalized = normalizeTopic(topic ?? "");
  checkTopicPolicy(h, channel, normalized);
  return { type: "stream", channel, topic: normalized };
}

export interface SendRequest {
  target: MessageTarget;
  content: string;
  client: string;
  readBySender: boolean;
  localId?: string;
  queueId?: string;
  /** Writes that must commit with the message or not at all (a scheduled message marked delivered). */
  alsoInTransaction?: (messageId: number) => void;
  /** The content's rendering when the checks already made it (rendering scans users; once per send is enough). */
  rendered?: RenderResult;
  /** A bot's widget (POST /messages `widget_content`, checked); otherwise `/poll` and `/todo` content starts one. */
  widget?: WidgetContent;
}

/** Users mentioned by `@topic`: those who posted in the topic. */
function topicParticipants(h: Hearth, channelId: number, topic: string): Set<number> {
  const ids = new Set<number>();
  for (const id of idsInRange(h.store, "topicMessages", [channelId, topicKey(topic)], Number.MAX_SAFE_INTEGER, "older")) {
    const m = getMessage(h.store, id);
    if (m) ids.add(m.sender_id);
  }
  return ids;
}

/** The mention bits a recipient gets from a rendering. */
function mentionBitsFor(userId: number, senderId: number, rendered: RenderResult, groupMembers: Set<number>, topicUsers: Set<number>): number {
  let bits = 0;
  if (rendered.mentionedUserIds.has(userId) || groupMembers.has(userId)) bits |= MessageFlag.mentioned;
  if (rendered.channelWildcard) bits |= MessageFlag.stream_wildcard_mentioned;
  if (rendered.topicWildcard && topicUsers.has(userId)) bits |= MessageFlag.topic_wildcard_mentioned;
  return userId === senderId ? bits & ~MessageFlag.stream_wildcard_mentioned & ~MessageFlag.topic_wildcard_mentioned : bits;
}


/**
 * The `has_alert_word` bit of each recipient, for one message: any of their alert
 * words in the message, case insensitive, standing alone between Zulip's separators
 * (spaces, quotes, brackets, punctuation); never for one's own messages. Only users
 * who have alert words are checked (a message to 1,000 users usually checks a few).
 */
function alertWordBits(h: Hearth, senderId: number, content: string): (userId: number) => number {
  const byUser = alertWordsByUser(h.store);
  let lower: string | undefined;
  return (userId) => {
    const pattern = userId === senderId ? undefined : alertWordPattern(byUser, userId);
    if (!pattern) return 0;
    lower ??= content.toLowerCase();
    return pattern.test(lower) ? MessageFlag.has_alert_word : 0;
  };
}

/**
 * A user's alert words as one pattern: any of them, standing as a word. Compiled once
 * per version of the alert-word map (a change of anyone's words replaces the map).
 */
const alertWordPatterns = new WeakMap<ReadonlyMap<number, readonly string[]>, Map<number, RegExp>>();

function alertWordPattern(byUser: ReadonlyMap<number, readonly string[]>, userId: number): RegExp | undefined {
  let patterns = alertWordPatterns.get(byUser);
  if (!patterns) alertWordPatterns.set(byUser, (patterns = new Map()));
  let pattern = patterns.get(userId);
  if (pattern) return pattern;
  const words = byUser.get(userId)?.filter((word) => word !== "");
  if (!words || words.length === 0) return undefined;
  const alternatives = words.map((word) => escapeRegExp(word.toLowerCase())).join("|");
  pattern = new RegExp(`(?<![^\\s'"(,:<])(?:${alternatives})(?![^\\s'"),.:;?!>])`, "u");
  patterns.set(userId, pattern);
  return pattern;
}

/** Members of the groups a message mentions: they get the `mentioned` flag. */
function mentionedGroupMembers(h: Hearth, rendered: RenderResult): Set<number> {
  const members = new Set<number>();
  for (const id of rendered.mentionedGroupIds) for (const member of groupMemberIds(h, id)) members.add(member);
  return members;
}

function recipientsOf(h: Hearth, target: MessageTarget): number[] {
  if (target.type === "private") return target.userIds;
  const inactive = inactiveUserIdsOf(h.store);
  return channelSubscriberIds(h, target.channel.id).filter((id) => !inactive.has(id));
}

/** Publishes one event per distinct flag set, so each recipient sees their own flags. */
function publishPerFlags(h: Hearth, flagsByUser: Map<number, number>, build: (flags: string[], userIds: number[]) => void): void {
  const groups = new Map<number, number[]>();
  for (const [userId, bits] of flagsByUser) appendTo(groups, bits, userId);
  for (const [bits, userIds] of groups) build(flagList(bits), userIds);
}

export async function checkSendMessage(h: Hearth, sender: UserRecord, req: SendRequest): Promise<SentMessage> {
  const content = normalizeContent(req.content);
  const rendered = renderMessageContent(h, sender, content);
  checkMayPost(h, sender, req.target, content, rendered);
  return doSendMessage(h, sender, { ...req, content, rendered });
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
function checkMayCreateTopic(h: Hearth, user: UserRecord, channel: MessageChannel, topic: string): void {
  const setting = channel.groups.can_create_topic_group;
  if (user.is_system_bot || setting === undefined || isSystemGroupSetting(h, setting, "role:everyone")) return;
  if (h.store.dbs.topics.get([channel.id, topicKey(topic)]) !== undefined) return;
  const may = (u: UserRecord | undefined) => u !== undefined && !isSystemGroupSetting(h, setting, "role:nobody") && isUserInGroupSetting(h, u, setting);
  if (!may(user) && !may(botOwner(h, user))) throw badRequest("You do not have permission to create new topics in this channel.");
}

/**
 * Zulip's `check_user_group_mention_allowed`: a (non-silent) `@*group*` mention needs
 * the group's `can_mention_group`; `role:everyone` lets anyone, even the server's bots.
 */
function checkGroupMentionPermission(h: Hearth, sender: UserRecord, content: string, render: () => RenderResult): void {
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

function checkWildcardPermission(h: Hearth, sender: UserRecord, target: MessageTarget, content: string, render: () => RenderResult): void {
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

/** Sends without permission checks: for checked requests and the server's own bots. */
export interface SentMessage {
  id: number;
  /** The sender's topic visibility changed by their automatic policies (FL 214). */
  automatic_new_visibility_policy?: number;
}

export async function doSendMessage(h: Hearth, sender: UserRecord, req: SendRequest): Promise<SentMessage> {
  const content = normalizeContent(req.content);
  // Topics the server composes (moderation reports, notices) get the same length and
  // character rules as a client's; for a client's own topic this changes nothing.
  const target = req.target.type === "stream" ? { ...req.target, topic: normalizeTopic(req.target.topic) } : req.target;
  const rendered = req.rendered ?? renderMessageContent(h, sender, content);
  const groupMembers = mentionedGroupMembers(h, rendered);
  const now = Math.floor(Date.now() / 1000);
  const recipientIds = recipientsOf(h, target);
  const topicUsers = target.type === "stream" && rendered.topicWildcard ? topicParticipants(h, target.channel.id, target.topic) : new Set<number>();
  const flagsByUser = new Map<number, number>();
  const alertWordBit = alertWordBits(h, sender.id, content);
  // Most recipients are neither mentioned nor have alert words: they all get the same
  // bits, found with one set lookup each instead of a check per kind (~0.25 ms a
  // message to 1,000 users).
  const ownBits = new Set<number>([sender.id, ...rendered.mentionedUserIds, ...groupMembers, ...topicUsers, ...alertWordsByUser(h.store).keys()]);
  const commonBits = rendered.channelWildcard ? MessageFlag.stream_wildcard_mentioned : 0;
  for (const userId of recipientIds) {
    flagsByUser.set(userId, ownBits.has(userId) ? mentionBitsFor(userId, sender.id, rendered, groupMembers, topicUsers) | alertWordBit(userId) : commonBits);
  }
  // The sender always gets a row, so they see what they sent even without subscribing.
  flagsByUser.set(sender.id, (flagsByUser.get(sender.id) ?? mentionBitsFor(sender.id, sender.id, rendered, groupMembers, topicUsers)) | (req.readBySender ? MessageFlag.read : 0));
  // Zulip: a message sent in a direct message conversation with oneself is read.
  if (target.type === "private" && target.userIds.length === 1) flagsByUser.set(sender.id, flagsByUser.get(sender.id)! | MessageFlag.read);

  const serviceTriggers = outgoingWebhookTriggers(h, sender, target, rendered, groupMembers);
  let firstInChannel = false;
  const startsTopic = target.type === "stream" && h.store.dbs.topics.get([target.channel.id, topicKey(target.topic)]) === undefined;
  const mentioned: number[] = [];
  for (const [id, bits] of flagsByUser) if (id !== sender.id && (bits & MessageFlag.mentioned) !== 0) mentioned.push(id);
  const automaticPolicies =
    target.type === "stream" && !sender.is_system_bot
      ? planAutomaticTopicPolicies(h, sender, target.channel.id, target.topic, startsTopic, mentioned)
      : [];
  let policiesWritten: WrittenPolicies = [];
  let attachmentChanges: AttachmentChanges = { updated: [], removed: [] };
  // Every check ran above, so this phase only writes (Store.commitInfallible), unless
  // the caller's hook may still abandon the send (scheduled delivery): then it must
  // be able to roll back.
  const commit = req.alsoInTransaction ? h.store.commit.bind(h.store) : h.store.commitInfallible.bind(h.store);
  const message = await commit(() => {
    const id = h.store.nextId("message");
    const recipientKey = target.type === "stream" ? `c:${target.channel.id}` : `d:${conversationKey(target.userIds)}`;
    const record: MessageRecord = {
      id,
      sender_id: sender.id,
      type: target.type,
      channel_id: target.type === "stream" ? target.channel.id : null,
      topic: target.type === "stream" ? target.topic : "",
      dm_user_ids: target.type === "private" ? target.userIds : null,
      recipient_id: recipientIdFor(h.store, recipientKey),
      content,
      rendered_content: rendered.html,
      timestamp: now,
      client: req.client,
      is_me_message: /^\/me /.test(content),
      ...linkProperties(rendered.linkUrls),
      reactions: [],
      submessages: [],
      edit_history: [],
      last_edit_timestamp: null,
      last_moved_timestamp: null,
    };
    // Zulip's do_widget_post_save_actions: the widget's first submessage, from the sender, goes out with the message.
    const widget = req.widget ?? widgetFromContent(content);
    if (widget) {
      record.submessages = [
        { id: h.store.nextId("submessage"), message_id: id, sender_id: sender.id, msg_type: "widget", content: JSON.stringify({ widget_type: widget.widget_type, extra_data: widget.extra_data }) },
      ];
    }
    insertMessage(h.store, record, flagsByUser);
    recordOutgoingWebhookCalls(h, id, serviceTriggers);
    policiesWritten = writePolicyChanges(h, automaticPolicies);
    req.alsoInTransaction?.(id);
    if (record.has_attachment) attachmentChanges = setMessageAttachments(h, sender, id, rendered.linkUrls);
    if (target.type === "stream") {
      // The channels layer shows these (`first_message_id`, `is_recently_active`).
      // `is_recently_active` needs minute precision at most, so busy channels are rewritten once a minute.
      const channel = getChannel(h.store, target.channel.id);
      if (channel && (channel.first_message_id === null || channel.last_message_at === null || now - channel.last_message_at >= 60)) {
        putChannel(h.store, { ...channel, first_message_id: channel.first_message_id ?? id, last_message_at: now });
        if (channel.first_message_id === null) firstInChannel = true;
      }
    }
    return record;
  }, {
    onCommitted: (message) => {
      if (firstInChannel && target.type === "stream") {
        // Zulip announces a channel's first message ID (clients show "no older messages").
        notifyFirstMessageIds(h, [{ channel: target.channel, first: message.id }]);
      }
      // Zulip's order: the topic policies the message set, then the message.
      publishPolicyChanges(h, policiesWritten);
      notifyNewMessage(h, sender, message, flagsByUser, req);
    },
  });
  await notifyAttachmentChanges(h, attachmentChanges);
  startOutgoingWebhookCalls(h, message.id, serviceTriggers);
  // What the commit wrote, not what was planned: a send batched behind another that set the same policy changes nothing.
  const policy = policiesWritten.find((written) => written.userId === sender.id)?.topic.visibility_policy;
  return policy === undefined ? { id: message.id } : { id: message.id, automatic_new_visibility_policy: policy };
}

/**
 * One `message` event for all recipients: each user's flags ride in `perUser`, the
 * client's `local_id` goes only to the queue that sent it, and the message carries
 * both the raw Markdown (`content`) and the HTML (`rendered_content`) so each queue
 * gets what its client registered for (apply_markdown, client_gravatar).
 */
function notifyNewMessage(h: Hearth, sender: UserRecord, m: MessageRecord, flagsByUser: Map<number, number>, req: SendRequest): void {
  const message = formatMessage(h, sender, m, 0, { applyMarkdown: false, allowEmptyTopicName: true });
  delete message.flags;
  message.rendered_content = m.rendered_content;
  // One fields object per flags value: the queues share each (and its JSON).
  const fieldsByBits = new Map<number, Record<string, unknown>>();
  for (const bits of flagsByUser.values()) if (!fieldsByBits.has(bits)) fieldsByBits.set(bits, { flags: flagList(bits) });
  const perUser = {
    get: (userId: number) => {
      const bits = flagsByUser.get(userId);
      return bits === undefined ? undefined : fieldsByBits.get(bits);
    },
  };
  const perQueue = new Map<string, Record<string, unknown>>();
  // Only the sender's own queue: another user's queue ID must not reach that client's outbox matching.
  if (req.localId !== undefined && req.queueId !== undefined && h.queues.isOwnQueue(req.queueId, sender.id)) {
    perQueue.set(req.queueId, { local_message_id: req.localId });
  }
  const channel = m.type === "stream" ? channelById(h, m.channel_id!) : undefined;
  h.events.publish({ type: "message", message, flags: [] }, flagsByUser, {
    perUser,
    perQueue,
    toAllPublicStreamsQueues: channel !== undefined && !channel.invite_only,
  });
}

// ---------------------------------------------------------------------------
// Flags

export const EDITABLE_FLAGS = ["read", "starred", "collapsed"] as const;
const ALL_FLAG_NAMES = ["read", "starred", "collapsed", "mentioned", "wildcard_mentioned", "has_alert_word", "historical"];

export function checkFlagName(flag: string): "read" | "starred" | "collapsed" {
  if (!ALL_FLAG_NAMES.includes(flag)) throw badRequest(`Invalid flag: '${flag}'`);
  if (!(EDITABLE_FLAGS as readonly string[]).includes(flag)) throw badRequest(`Flag not editable: '${flag}'`);
  return flag as "read" | "starred" | "collapsed";
}

/** Zulip's `message_details` of a flag removal, for the unread counts of clients. */
function messageDetails(h: Hearth, userId: number, ids: number[]): Record<string, unknown> {
  const details: Record<string, unknown> = {};
  for (const id of ids) {
    const m = getMessage(h.store, id);
    if (!m) continue;
    const bits = getUserFlags(h.store, userId, id) ?? 0;
    const d: Record<string, unknown> = { type: m.type };
    if (bits & MENTION_BITS) d.mentioned = true;
    if (m.type === "stream") {
      d.stream_id = m.channel_id;
      d.topic = m.topic;
      // Zulip: a muted channel's message counts only in a topic unmuted or followed there; elsewhere a muted topic does not count.
      const policy = visibilityPolicyOf(h.store, userId, m.channel_id!, m.topic);
      d.unmuted_stream_msg = getSubscription(h.store, m.channel_id!, userId)?.is_muted
        ? policy === VisibilityPolicy.UNMUTED || policy === VisibilityPolicy.FOLLOWED
        : policy !== VisibilityPolicy.MUTED;
    } else d.user_ids = m.dm_user_ids!.filter((x) => x !== userId);
    details[String(id)] = d;
  }
  return details;
}

/**
 * Adds or removes a flag on messages for one user; returns the IDs whose flag
 * changed. Messages the user only sees historically get a `historical` row when
 * starred or collapsed (as Zulip does); marking them read or unread changes nothing.
 */
export async function doUpdateFlags(h: Hearth, user: UserRecord, ids: number[], op: "add" | "remove", flag: "read" | "starred" | "collapsed", options: { all?: boolean } = {}): Promise<number[]> {
  const changed = await h.store.commit(() => applyFlagChange(h, user, ids, op, flag));
  publishFlagChange(h, user, changed, op, flag, options.all ?? false);
  return changed;
}

/** Inside a commit: sets or clears one flag on the messages; returns the IDs whose flags changed. */
export function applyFlagChange(h: Hearth, user: UserRecord, ids: number[], op: "add" | "remove", flag: "read" | "starred" | "collapsed"): number[] {
  const bit = MessageFlag[flag];
  const changes: { message: MessageRecord; before: number | undefined; after: number }[] = [];
  const readable = readableChannels(h, user);
  for (const id of new Set(ids)) {
    const m = getMessage(h.store, id);
    if (!m) continue;
    const before = getUserFlags(h.store, user.id, id);
    let current = before;
    if (current === undefined) {
      if (flag === "read" || visibleFlags(h, user, m, readable) === undefined) continue;
      current = MessageFlag.read | MessageFlag.historical;
    }
    const after = op === "add" ? current | bit : current & ~bit;
    if (after !== current) changes.push({ message: m, before, after });
  }
  // Written together: marking a backlog read rewrites each run of it once, not once per message.
  setUserFlagsOfMessages(h.store, user.id, changes);
  return changes.map((change) => change.message.id);
}

export function publishFlagChange(h: Hearth, user: UserRecord, changed: number[], op: "add" | "remove", flag: string, all = false): void {
  if (changed.length === 0 && !all) return;
  const event: Record<string, unknown> = { type: "update_message_flags", op, operation: op, flag, messages: changed, all };
  if (op === "remove" && flag === "read") event.message_details = messageDetails(h, user.id, changed);
  h.events.publish(event as any, [user.id]);
}

/**
 * The messages a flag change applies to. Marking unread in channels one is not
 * subscribed to would create unreads nobody can clear from the channel list: Zulip
 * (FL 355) skips those messages and names the channels (ascending; empty for any
 * other change).
 */
function flagTargets(h: Hearth, user: UserRecord, messages: readonly MessageRecord[], op: "add" | "remove", flag: string): { ids: number[]; ignoredChannels: number[] } {
  if (flag !== "read" || op !== "remove") return { ids: messages.map((m) => m.id), ignoredChannels: [] };
  const ignored = new Set<number>();
  const ids: number[] = [];
  for (const message of messages) {
    if (message.type === "stream" && !isSubscribedTo(h, message.channel_id!, user.id)) ignored.add(message.channel_id!);
    else ids.push(message.id);
  }
  return { ids, ignoredChannels: [...ignored].sort((a, b) => a - b) };
}

/** POST /messages/flags (see flagTargets for `ignoredChannels`). */
export async function checkUpdateFlags(h: Hearth, user: UserRecord, ids: number[], op: string, flag: string): Promise<{ changed: number[]; ignoredChannels: number[] }> {
  if (op !== "add" && op !== "remove") throw badRequest(`Invalid message flag operation: '${op}'`);
  const name = checkFlagName(flag);
  const readable = readableChannels(h, user);
  const messages: MessageRecord[] = [];
  for (const id of ids) {
    const found = readableMessage(h, user, id, readable);
    if (!found) throw invalidMessage();
    messages.push(found.message);
  }
  const targets = flagTargets(h, user, messages, op, name);
  return { changed: await doUpdateFlags(h, user, targets.ids, op, name), ignoredChannels: targets.ignoredChannels };
}

/** Unread messages of the user whose location matches `test`, oldest first (reads index rows only). */
function unreadIds(h: Hearth, user: UserRecord, test: (location: MessageLocation) => boolean): number[] {
  const ids: number[] = [];
  for (const { id, value } of indexRows(h.store, user.id, "unread", 0, "newer")) {
    const m = value === true ? getMessage(h.store, id) : undefined; // rows from before locations were stored
    if (test(m ? messageLocation(m) : (value as MessageLocation))) ids.push(id);
  }
  return ids;
}

/** `POST /messages/flags/narrow`: the flag change over one window of a narrow, with Zulip's counts. */
export async function checkUpdateFlagsForNarrow(
  h: Hearth,
  user: UserRecord,
  req: { narrow: CompiledNarrow; anchor: AnchorSpec; includeAnchor: boolean; numBefore: number; numAfter: number; op: "add" | "remove"; flag: string },
): Promise<Record<string, unknown>> {
  const flag = checkFlagName(req.flag);
  const range = fetchRange(h, user, req.narrow, req.anchor, req.includeAnchor, req.numBefore, req.numAfter);
  const processed = range.matches.map((m) => m.message.id);
  const targets = flagTargets(h, user, range.matches.map((m) => m.message), req.op, flag);
  const changed = await doUpdateFlags(h, user, targets.ids, req.op, flag);
  return {
    processed_count: processed.length,
    updated_count: changed.length,
    first_processed_id: processed[0] ?? null,
    last_processed_id: processed[processed.length - 1] ?? null,
    found_oldest: range.found_oldest,
    found_newest: range.found_newest,
    // Always present (FL 355), empty unless marking unread.
    ignored_because_not_subscribed_channels: targets.ignoredChannels,
  };
}

export async function doMarkAllAsRead(h: Hearth, user: UserRecord): Promise<void> {
  const ids = unreadIds(h, user, () => true);
  await doUpdateFlags(h, user, ids, "add", "read", { all: true });
}

export function unreadFromSender(h: Hearth, user: UserRecord, senderId: number): number[] {
  const ids: number[] = [];
  for (const id of unreadMessageIds(h.store, user.id, 0, "newer")) {
    if (getMessage(h.store, id)?.sender_id === senderId) ids.push(id);
  }
  return ids;
}

/** `POST /mark_stream_as_read` and `/mark_topic_as_read`: a channel whose messages the user may read. */
export async function checkMarkChannelAsRead(h: Hearth, user: UserRecord, channelId: number, topic?: string): Promise<void> {
  accessChannel(h, user, channelId, { requireContentAccess: true, allowArchived: true });
  await doMarkChannelAsRead(h, user, channelId, topic);
}

async function doMarkChannelAsRead(h: Hearth, user: UserRecord, channelId: number, topic?: string): Promise<void> {
  const key = topic === undefined ? null : topicKey(topic);
  const ids = unreadIds(h, user, (loc) => Array.isArray(loc) && loc[0] === channelId && (key === null || topicKey(loc[1]) === key));
  await doUpdateFlags(h, user, ids, "add", "read");
}

// ---------------------------------------------------------------------------
// Reactions

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
  const channel = channelById(h, m.channel_id!);
  if (!channel) return [];
  const subscribers = new Set(channelSubscriberIds(h, channel.id));
  if (!channel.invite_only) return [...new Set([...holders, ...subscribers])];
  if (channel.history_public_to_subscribers) return [...subscribers];
  return [...new Set(holders)].filter((id) => subscribers.has(id));
}

export async function checkReaction(h: Hearth, user: UserRecord, messageId: number, op: "add" | "remove", input: ReactionInput): Promise<void> {
  const { message } = accessMessage(h, user, messageId);
  let reaction: Omit<Reaction, "user_id">;
  if (op === "add") {
    // Zulip: adding an emoji someone already reacted with is a vote for that reaction,
    // under its name and without checking the emoji again (it may be a custom emoji
    // deactivated since).
    const type = input.reaction_type ?? emojiTypeByName(h, input.emoji_name);
    const code = input.emoji_code ?? emojiCodeByName(h, input.emoji_name, type);
    const voted = message.reactions.find((r) => r.emoji_code === code && r.reaction_type === type);
    reaction = voted ? { emoji_name: voted.emoji_name, emoji_code: voted.emoji_code, reaction_type: voted.reaction_type } : checkEmojiRequest(h, input);
  } else {
    const name = input.emoji_name ?? (input.emoji_code ? emojiNameFor(input.emoji_code) : undefined);
    reaction = { emoji_name: name ?? "", emoji_code: input.emoji_code ?? emojiCodeFor(name ?? "") ?? "", reaction_type: (input.reaction_type ?? "unicode_emoji") as Reaction["reaction_type"] };
  }
  const same = (r: Reaction) => r.user_id === user.id && r.reaction_type === reaction.reaction_type && (r.emoji_code === reaction.emoji_code || (!input.emoji_code && r.emoji_name === reaction.emoji_name));
  const stored = await h.store.commit(() => {
    const m = getMessage(h.store, messageId);
    if (!m) throw invalidMessage();
    const existing = m.reactions.find(same);
    if (op === "add" && existing) throw new ApiError("Reaction already exists.", "REACTION_ALREADY_EXISTS");
    if (op === "remove" && !existing) throw new ApiError("Reaction doesn't exist.", "REACTION_DOES_NOT_EXIST");
    const reactions = op === "add" ? [...m.reactions, { ...reaction, user_id: user.id }] : m.reactions.filter((r) => r !== existing);
    h.store.dbs.messages.put(m.id, { ...m, reactions });
    // Reacting to a message one only sees historically gives it a row, as in Zulip.
    if (op === "add" && getUserFlags(h.store, user.id, m.id) === undefined) setUserFlags(h.store, user.id, m, undefined, MessageFlag.read | MessageFlag.historical);
    const policies = op === "add" && m.type === "stream" ? writePolicyChanges(h, participationPolicyChanges(h, user, m.channel_id!, m.topic)) : [];
    return { message: m, reaction: op === "add" ? { ...reaction, user_id: user.id } : existing!, policies };
  });
  h.events.publish(
    {
      type: "reaction",
      op,
      user_id: user.id,
      user: { user_id: user.id, email: apiEmail(h, user), full_name: user.full_name },
      message_id: messageId,
      emoji_name: stored.reaction.emoji_name,
      emoji_code: stored.reaction.emoji_code,
      reaction_type: stored.reaction.reaction_type,
    },
    messageAudience(h, stored.message),
  );
  publishPolicyChanges(h, stored.policies);
}

// ---------------------------------------------------------------------------
// Editing, moving and deleting

export type PropagateMode = "change_one" | "change_later" | "change_all";

export interface EditRequest {
  content?: string;
  topic?: string;
  channelId?: number;
  propagateMode: PropagateMode;
  sendNotificationToOldThread: boolean;
  sendNotificationToNewThread: boolean;
}

const DEFAULT_CONTENT_EDIT_LIMIT = 600;
const DEFAULT_MOVE_LIMIT = 7 * 86400;

function topicMessageIds(h: Hearth, channelId: number, topic: string): number[] {
  return [...idsInRange(h.store, "topicMessages", [channelId, topicKey(topic)], 0, "newer")];
}

/**
 * Whether renaming a topic only adds or removes the resolved mark, by Zulip's rules:
 * resolving is exactly the mark plus the old name (as the client sent it, before the
 * new name is cut to the length limit); unresolving strips every leading mark and space.
 */
function togglesResolved(from: string, to: string, toAsSent: string): boolean {
  const resolved = (topic: string) => topic.startsWith(RESOLVED_TOPIC_PREFIX);
  if (resolved(to) && !resolved(from)) return toAsSent.trim().slice(RESOLVED_TOPIC_PREFIX.length) === from;
  if (!resolved(to) && resolved(from)) return from.replace(/^[✔ ]+/u, "") === to;
  return false;
}

export async function checkEditMessage(h: Hearth, user: UserRecord, messageId: number, req: EditRequest): Promise<{ detached_uploads: unknown[] }> {
  const { message } = accessMessage(h, user, messageId);
  // Archived channels are read-only (accessChannel refuses editing them too).
  if (message.type === "stream" && channelById(h, message.channel_id!)?.is_archived) throw badRequest("Invalid channel ID");
  const now = Math.floor(Date.now() / 1000);
  const contentChange = req.content !== undefined;
  let newTopic = req.topic === undefined ? undefined : normalizeTopic(req.topic);
  const newChannel = req.channelId === undefined || req.channelId === message.channel_id ? undefined : channelById(h, req.channelId);
  if (req.channelId !== undefined && req.channelId !== message.channel_id && (!newChannel || !canReadChannel(h, user, newChannel))) {
    throw badRequest("Invalid channel ID");
  }
  if (newTopic !== undefined && message.type === "private") throw badRequest("Direct messages cannot have topics.");
  if (newChannel && message.type === "private") throw badRequest("Direct messages cannot be moved to channels.");
  if (newTopic === message.topic) newTopic = undefined;
  if (!contentChange && newTopic === undefined && !newChannel) throw badRequest("Nothing to change");
  if (contentChange) {
    if (message.sender_id !== user.id) throw badRequest("You don't have permission to edit this message");
    if (!realmSetting(h, "allow_message_editing", true)) throw badRequest("Your organization has turned off message editing");
    const limit = realmSetting<number | null>(h, "message_content_edit_limit_seconds", DEFAULT_CONTENT_EDIT_LIMIT);
    if (limit !== null && now - message.timestamp > limit) throw badRequest("The time limit for editing this message has passed");
    // Its submessages are the widget's state; new content could not keep them consistent.
    if (message.submessages.length > 0) throw badRequest("Widgets cannot be edited.");
  }
  const moving = newTopic !== undefined || newChannel !== undefined;
  // FL 365: resolving or unresolving a topic is no move for `last_moved_timestamp`.
  let onlyResolving = false;
  let ids = [message.id];
  if (moving) {
    if (message.type !== "stream") throw badRequest("Invalid propagate_mode for a direct message");
    const fromChannel = channelById(h, message.channel_id!)!;
    // Marking a topic resolved or unresolved is its own permission (Zulip FL 367/402),
    // with no time limit on it.
    const resolving = newTopic !== undefined && togglesResolved(message.topic, newTopic, req.topic!);
    onlyResolving = resolving && !newChannel;
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
    const target = newChannel ?? channelById(h, message.channel_id!)!;
    checkTopicPolicy(h, target, newTopic ?? message.topic);
    if (!resolving) checkMayCreateTopic(h, user, target, newTopic ?? message.topic);
    if (req.propagateMode !== "change_one") {
      ids = topicMessageIds(h, message.channel_id!, message.topic).filter((id) => req.propagateMode === "change_all" || id >= message.id);
    }
    if (!isModerator(user) && !(resolving && !newChannel)) {
      const limit = realmSetting<number | null>(h, newChannel ? "move_messages_between_streams_limit_seconds" : "move_messages_within_stream_limit_seconds", DEFAULT_MOVE_LIMIT);
      if (limit !== null) {
        const allowed = ids.filter((id) => {
          const m = getMessage(h.store, id);
          return m !== undefined && now - m.timestamp <= limit;
        });
        if (req.propagateMode === "change_one" && allowed.length === 0) {
          throw badRequest(newChannel ? "The time limit for editing this message's channel has passed" : "The time limit for editing this message's topic has passed.");
        }
        if (allowed.length < ids.length) {
          throw new ApiError(`You only have permission to move the ${allowed.length} most recent messages in this topic.`, "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED", 400, {
            first_message_id_allowed_to_move: allowed[0] ?? null,
            total_messages_in_topic: ids.length,
            total_messages_allowed_to_move: allowed.length,
          });
        }
      }
    }
  }
  const content = contentChange ? normalizeContent(req.content!) : undefined;
  let renderedContent: RenderResult | undefined;
  const render = () => (renderedContent ??= renderMessageContent(h, user, content!));
  if (content !== undefined) {
    checkGroupMentionPermission(h, user, content, render);
    if (message.type === "stream") {
      const channel = channelById(h, message.channel_id!)!;
      checkWildcardPermission(h, user, { type: "stream", channel, topic: newTopic ?? message.topic }, content, render);
    }
  }
  const rendered = content !== undefined ? render() : undefined;

  let attachmentChanges: ReturnType<typeof setMessageAttachments> = { updated: [], removed: [], detached: [] };
  const result = await h.store.commit(() => {
    const changes: { before: MessageRecord; after: MessageRecord }[] = [];
    for (const id of ids) {
      const before = getMessage(h.store, id);
      if (!before) continue;
      const entry: EditHistoryEntry = { user_id: user.id, timestamp: now };
      const after: MessageRecord = { ...before };
      if (id === message.id && content !== undefined && rendered) {
        // FL 365: the time of the last content edit only; moves have their own.
        after.last_edit_timestamp = now;
        entry.prev_content = before.content;
        entry.prev_rendered_content = before.rendered_content;
        entry.prev_rendered_content_version = 1;
        after.content = content;
        after.rendered_content = rendered.html;
        after.is_me_message = /^\/me /.test(content);
        Object.assign(after, linkProperties(rendered.linkUrls));
        // Only the sender edits content, so their rights decide which links claim uploads.
        attachmentChanges = setMessageAttachments(h, user, id, rendered.linkUrls);
      }
      if (newTopic !== undefined) {
        entry.prev_topic = before.topic;
        entry.topic = newTopic;
        after.topic = newTopic;
      }
      if (newChannel) {
        entry.prev_stream = before.channel_id!;
        entry.stream = newChannel.id;
        after.channel_id = newChannel.id;
        after.recipient_id = recipientIdFor(h.store, `c:${newChannel.id}`);
      }
      if (moving && !onlyResolving) after.last_moved_timestamp = now;
      after.edit_history = [entry, ...before.edit_history];
      replaceMessage(h.store, before, after);
      changes.push({ before, after });
    }
    // Each message's recipients' flags, read once for the steps below; kept current as
    // the mention rewrite changes them.
    const flagsById = new Map<number, Map<number, number>>();
    const recipientFlags = (m: MessageRecord) => flagsById.get(m.id) ?? flagsById.set(m.id, messageRecipientFlags(h.store, m)).get(m.id)!;
    // Together: a run holding many of the moved messages is rewritten once.
    if (moving) relocateUnreadRows(h.store, changes.map(({ after }) => ({ message: after, holders: recipientFlags(after) })));
    // Mention and alert-word flags follow the new content.
    // Deleted since it was checked: nothing to edit (the commit rolls back).
    const edited = changes.find((c) => c.after.id === message.id)?.after;
    if (!edited) throw invalidMessage();
    const holders = recipientFlags(edited);
    if (rendered) {
      const groupMembers = mentionedGroupMembers(h, rendered);
      const topicUsers = rendered.topicWildcard && message.type === "stream" ? topicParticipants(h, message.channel_id!, message.topic) : new Set<number>();
      const alertWordBit = alertWordBits(h, message.sender_id, edited.content);
      for (const [userId, bits] of holders) {
        const next =
          (bits & ~MENTION_BITS & ~MessageFlag.has_alert_word) |
          mentionBitsFor(userId, message.sender_id, rendered, groupMembers, topicUsers) |
          alertWordBit(userId);
        if (next !== bits) {
          setUserFlags(h.store, userId, edited, bits, next);
          holders.set(userId, next);
        }
      }
    }
    // A move to another channel, by Zulip's rules. Everyone ever subscribed to the old
    // channel who is not subscribed to the new one (deactivated accounts included)
    // loses their rows. A private destination takes the messages away from all of
    // them, a public one from guests only: those get delete_message; the others still
    // read them there (public history) and hear of the move. A destination with
    // protected history gives its subscribers rows (read), so they can see them.
    const lostAccess = new Set<number>();
    if (newChannel) {
      const newSubscribers = new Set(channelSubscriberIds(h, newChannel.id));
      const losingRows = new Set(everSubscribedIds(h.store, message.channel_id!).filter((id) => !newSubscribers.has(id)));
      for (const userId of losingRows) {
        const u = getUser(h.store, userId);
        if (newChannel.invite_only || !u || isGuest(u)) lostAccess.add(userId);
      }
      const removals = changes.map(({ after }) => ({ message: after, rows: new Map([...recipientFlags(after)].filter(([userId]) => losingRows.has(userId))) }));
      removeUserRows(h.store, removals);
      for (const { rows } of removals) for (const userId of rows.keys()) holders.delete(userId);
      if (!newChannel.history_public_to_subscribers) {
        for (const { after } of changes) {
          addUserRows(h.store, after, [...newSubscribers].filter((userId) => getUserFlags(h.store, userId, after.id) === undefined), MessageFlag.read);
        }
        for (const userId of newSubscribers) if (!holders.has(userId)) holders.set(userId, MessageFlag.read);
      }
      // Old-channel subscribers who keep access without rows see the messages leave,
      // where that channel's history was theirs to read (as in Zulip).
      const oldChannel = channelById(h, message.channel_id!);
      if (oldChannel && (!oldChannel.invite_only || oldChannel.history_public_to_subscribers)) {
        for (const userId of channelSubscriberIds(h, oldChannel.id)) {
          if (!holders.has(userId) && !lostAccess.has(userId)) holders.set(userId, MessageFlag.read);
        }
      }
    }
    const firstIdChanges = newChannel ? refreshFirstMessageIds(h, [message.channel_id!, newChannel.id]) : [];
    // Zulip moves users' topic policies with a whole topic, in the same transaction:
    // propagate_mode change_all, or no message of the old topic left that the mover can read.
    const readable = readableChannels(h, user);
    const movedWholeTopic =
      moving && (req.propagateMode === "change_all" || !topicMessageIds(h, message.channel_id!, message.topic).some((id) => readableMessage(h, user, id, readable)));
    let policies: WrittenPolicies = [];
    if (movedWholeTopic) {
      const toChannelId = newChannel?.id ?? message.channel_id!;
      const toTopic = newTopic ?? message.topic;
      // The destination's own messages, besides those just moved there (policies then merge).
      const moved = new Set(ids);
      const destinationHadMessages = topicMessageIds(h, toChannelId, toTopic).some((id) => !moved.has(id));
      const plan = { fromChannelId: message.channel_id!, fromTopic: message.topic, toChannelId, toTopic, destinationHadMessages, lostAccess };
      policies = writePolicyChanges(h, planMoveTopicPolicies(h, plan));
    }
    return { changes, holders, firstIdChanges, lostAccess, policies };
  });
  if (result.lostAccess.size > 0) {
    h.events.publish(
      { type: "delete_message", message_type: "stream", message_ids: result.changes.map((c) => c.after.id).sort((a, b) => a - b), stream_id: message.channel_id, topic: message.topic },
      result.lostAccess,
    );
  }
  notifyUpdateMessage(h, user, message, result.changes, result.holders, req, now);
  notifyFirstMessageIds(h, result.firstIdChanges);
  await notifyAttachmentChanges(h, attachmentChanges);
  publishPolicyChanges(h, result.policies);
  if (moving) await sendMoveNotifications(h, user, message, result.changes.length, newChannel, newTopic, req);
  return { detached_uploads: attachmentChanges.detached.map((a) => attachmentView(h, a)) };
}


/**
 * Zulip's Notification Bot messages after a move: "moved here from" in the new
 * thread and "moved to" in the old one (as the client asked), or the resolve /
 * unresolve notice when only the ✔ prefix changed.
 */
async function sendMoveNotifications(
  h: Hearth,
  user: UserRecord,
  original: MessageRecord,
  count: number,
  newChannel: MessageChannel | undefined,
  newTopic: string | undefined,
  req: EditRequest,
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
    await send(toChannel, toTopic, `${actor} has marked this topic as ${resolved ? "resolved" : "unresolved"}.`);
    return;
  }
  const link = (channel: MessageChannel, topic: string) => topicLinkSyntax(channel.id, channel.name, topic);
  const what = req.propagateMode === "change_all" ? "This topic was" : count === 1 ? "A message was" : `${count} messages were`;
  if (req.sendNotificationToNewThread) await send(toChannel, toTopic, `${what} moved here from ${link(oldChannel, original.topic)} by ${actor}.`);
  if (req.sendNotificationToOldThread) await send(oldChannel, original.topic, `${what} moved to ${link(toChannel, toTopic)} by ${actor}.`);
}

function notifyUpdateMessage(
  h: Hearth,
  user: UserRecord,
  original: MessageRecord,
  changes: { before: MessageRecord; after: MessageRecord }[],
  holders: Map<number, number>,
  req: EditRequest,
  now: number,
): void {
  const target = changes.find((c) => c.after.id === original.id)!;
  const base: Record<string, unknown> = {
    type: "update_message",
    user_id: user.id,
    edit_timestamp: now,
    message_id: original.id,
    message_ids: changes.map((c) => c.after.id).sort((a, b) => a - b),
    rendering_only: false,
    is_me_message: target.after.is_me_message,
  };
  if (target.before.content !== target.after.content) {
    Object.assign(base, {
      orig_content: target.before.content,
      orig_rendered_content: target.before.rendered_content,
      content: target.after.content,
      rendered_content: target.after.rendered_content,
      prev_rendered_content_version: 1,
    });
  }
  if (original.type === "stream") {
    base.stream_id = original.channel_id;
    base.stream_name = channelById(h, original.channel_id!)?.name;
    if (target.before.topic !== target.after.topic || target.before.channel_id !== target.after.channel_id) {
      base.propagate_mode = req.propagateMode;
      base.orig_subject = target.before.topic;
      if (target.before.topic !== target.after.topic) {
        base.subject = target.after.topic;
        base.topic_links = target.after.topic === "" ? [] : topicLinks(target.after.topic, realmSetting(h, "linkifiers", []));
      }
      if (target.before.channel_id !== target.after.channel_id) base.new_stream_id = target.after.channel_id;
    }
  }
  // Those who may read it now; subscribers without a row get flags ["read"], as Zulip's subscriber_info gives them.
  const audience = new Map<number, number>();
  for (const id of messageAudience(h, target.after, holders.keys())) audience.set(id, holders.get(id) ?? MessageFlag.read);
  publishPerFlags(h, audience, (flags, userIds) => h.events.publish({ ...base, type: "update_message", flags }, userIds));
}

export async function checkDeleteMessage(h: Hearth, user: UserRecord, messageId: number): Promise<void> {
  const { message } = accessMessage(h, user, messageId);
  const channel = message.type === "stream" ? channelById(h, message.channel_id!) : undefined;
  if (!canDeleteAnyMessage(h, user, channel)) {
    if (message.sender_id !== user.id || !canDeleteOwnMessage(h, user, channel)) throw badRequest("You don't have permission to delete this message");
    const limit = realmSetting<number | null>(h, "message_content_delete_limit_seconds", null);
    if (limit !== null && Date.now() / 1000 - message.timestamp > limit) throw badRequest("The time limit for deleting this message has passed");
  }
  await doDeleteMessages(h, [messageId]);
}

/** Deletes messages with every row and index entry; notifies everyone who could see them. */
export async function doDeleteMessages(h: Hearth, ids: number[]): Promise<void> {
  let attachmentChanges: AttachmentChanges = { updated: [], removed: [] };
  const { deleted, firstIdChanges } = await h.store.commit(() => {
    const out: { message: MessageRecord; audience: number[]; recipients: Map<number, number> }[] = [];
    for (const id of ids) {
      const m = getMessage(h.store, id);
      if (!m) continue;
      const recipients = messageRecipientFlags(h.store, m);
      out.push({ message: m, audience: messageAudience(h, m, recipients.keys()), recipients });
    }
    deleteMessageRows(h.store, out);
    attachmentChanges = releaseDeletedMessages(h, out.map((d) => d.message.id));
    const channelIds = out.filter((d) => d.message.type === "stream").map((d) => d.message.channel_id!);
    return { deleted: out, firstIdChanges: refreshFirstMessageIds(h, channelIds) };
  });
  // One event per conversation, listing its deleted messages (clients with
  // bulk_message_deletion get it whole; queues split it for the others).
  const groups = new Map<string, { event: Record<string, unknown>; ids: number[]; audience: Set<number> }>();
  for (const { message: m, audience } of deleted) {
    const key = m.type === "stream" ? `c:${m.channel_id}:${topicKey(m.topic)}` : `d:${conversationKey(m.dm_user_ids!)}`;
    let group = groups.get(key);
    if (!group) {
      const event: Record<string, unknown> = { type: "delete_message", message_type: m.type };
      if (m.type === "stream") {
        event.stream_id = m.channel_id;
        event.topic = m.topic;
      }
      groups.set(key, (group = { event, ids: [], audience: new Set() }));
    }
    group.ids.push(m.id);
    for (const id of audience) group.audience.add(id);
  }
  for (const { event, ids: messageIds, audience } of groups.values()) {
    h.events.publish({ ...event, type: "delete_message", message_ids: messageIds.sort((a, b) => a - b) }, audience);
  }
  notifyFirstMessageIds(h, firstIdChanges);
  await notifyAttachmentChanges(h, attachmentChanges);
}

type FirstIdChange = { channel: MessageChannel; first: number | null };

/**
 * Recomputes `first_message_id` of channels whose messages left or arrived (deletion,
 * moves); call inside `commit`. Returns the channels that changed.
 */
function refreshFirstMessageIds(h: Hearth, channelIds: Iterable<number>): FirstIdChange[] {
  const changes: FirstIdChange[] = [];
  for (const channelId of new Set(channelIds)) {
    const channel = getChannel(h.store, channelId);
    if (!channel) continue;
    let first: number | null = null;
    for (const id of idsInRange(h.store, "channelMessages", [channelId], 0, "newer")) {
      first = id;
      break;
    }
    if (first === channel.first_message_id) continue;
    putChannel(h.store, { ...channel, first_message_id: first });
    changes.push({ channel, first });
  }
  return changes;
}

/** Zulip announces a channel's new first message ID to everyone who can see the channel. */
function notifyFirstMessageIds(h: Hearth, changes: FirstIdChange[]): void {
  for (const { channel, first } of changes) {
    h.events.publish(
      { type: "stream", op: "update", property: "first_message_id", value: first, stream_id: channel.id, name: channel.name },
      channelViewerIds(h, channel),
    );
  }
}

export async function checkDeleteTopic(h: Hearth, user: UserRecord, channelId: number, topic: string): Promise<void> {
  accessChannel(h, user, channelId, { requireContentAccess: true, allowArchived: true });
  if (!isAdmin(user)) throw mustBeAdmin();
  const ids = topicMessageIds(h, channelId, topic);
  // Batches keep each transaction small, as Zulip's delete_in_topic does.
  for (let i = 0; i < ids.length; i += 1000) await doDeleteMessages(h, ids.slice(i, i + 1000));
  // The topic no longer exists: neither do users' policies on it (Zulip's delete_in_topic).
  await doClearTopicPolicies(h, channelId, topic);
}

// ---------------------------------------------------------------------------
// Typing

/** Users who turned off `receives_typing_notifications` get no typing events. */
function typingReceivers(h: Hearth, ids: number[]): number[] {
  return ids.filter((id) => {
    const u = getUser(h.store, id);
    return u !== undefined && u.is_active && u.settings.receives_typing_notifications !== false;
  });
}

export function doTypingDirect(h: Hearth, sender: UserRecord, op: "start" | "stop", to: unknown[]): void {
  const users = to.map((x) => resolveRecipientUser(h, sender, x));
  const ids = [...new Set([...users.map((u) => u.id), sender.id])].sort((a, b) => a - b);
  // A user who opted out of sending typing notifications sends none (Zulip: `send_private_typing_notifications`).
  if (sender.settings.send_private_typing_notifications === false) return;
  h.events.publish(
    {
      type: "typing",
      op,
      message_type: "direct",
      sender: { user_id: sender.id, email: apiEmail(h, sender) },
      recipients: ids.map((id) => ({ user_id: id, email: apiEmail(h, getUser(h.store, id)!) })),
    },
    typingReceivers(h, ids),
  );
}

export function doTypingChannel(h: Hearth, sender: UserRecord, op: "start" | "stop", channelId: number, rawTopic: string): void {
  accessChannel(h, sender, channelId, { requireContentAccess: true, allowArchived: true });
  // The topic as a message to it would be stored: one that long cannot be typed into, and
  // an unbounded one would be copied into every subscriber's queue.
  const topic = normalizeTopic(rawTopic);
  if (sender.settings.send_stream_typing_notifications === false) return;
  const recipients = channelSubscriberIds(h, channelId).filter((id) => id !== sender.id);
  h.events.publish(
    { type: "typing", op, message_type: "stream", sender: { user_id: sender.id, email: apiEmail(h, sender) }, stream_id: channelId, topic },
    typingReceivers(h, recipients),
  );
}

/** FL 351: someone is editing a message. */
export function doTypingEditMessage(h: Hearth, sender: UserRecord, op: "start" | "stop", messageId: number): void {
  const { message } = accessMessage(h, sender, messageId);
  const recipient =
    message.type === "stream"
      ? { type: "channel", channel_id: message.channel_id, topic: message.topic }
      : { type: "direct", user_ids: message.dm_user_ids };
  const audience = typingReceivers(h, messageAudience(h, message).filter((id) => id !== sender.id));
  h.events.publish({ type: "typing_edit_message", op, sender_id: sender.id, message_id: messageId, recipient }, audience);
}

// ---------------------------------------------------------------------------

/**
 * GET /messages/{id}/history: oldest first, each entry the state after that change.
 * Without `allowEmptyTopicName` (FL 334) a channel message's "" topic shows as the
 * realm's display name.
 */
export function messageHistory(h: Hearth, user: UserRecord, messageId: number, allowEmptyTopicName = false): Record<string, unknown>[] {
  const { message } = accessMessage(h, user, messageId);
  const policy = editHistoryPolicy(h);
  if (policy === "none") throw badRequest("Message edit history is disabled in this organization");
  const entries: Record<string, unknown>[] = [];
  // One budget for the whole history: a long message edited many times stays cheap to ask for.
  const diffBudget = { cells: DIFF_CELLS_PER_REQUEST };
  let content = message.content;
  let rendered = message.rendered_content;
  let topic = message.topic;
  let stream = message.channel_id;
  // Walk back from the current state; edit_history is newest first.
  for (const e of message.edit_history) {
    const snapshot: Record<string, unknown> = { user_id: e.user_id, timestamp: e.timestamp, topic, content, rendered_content: rendered };
    if (e.prev_content !== undefined && policy === "all") {
      snapshot.prev_content = e.prev_content;
      snapshot.prev_rendered_content = e.prev_rendered_content;
      // What the edit changed, word by word, as Zulip marks it.
      if (e.prev_rendered_content !== undefined) snapshot.content_html_diff = htmlDiff(e.prev_rendered_content, rendered, diffBudget);
      content = e.prev_content;
      rendered = e.prev_rendered_content ?? rendered;
    }
    if (e.prev_topic !== undefined) {
      snapshot.prev_topic = e.prev_topic;
      topic = e.prev_topic;
    }
    if (e.prev_stream !== undefined) {
      snapshot.prev_stream = e.prev_stream;
      snapshot.stream = stream;
      stream = e.prev_stream;
    }
    entries.push(snapshot);
  }
  entries.push({ user_id: message.sender_id, timestamp: message.timestamp, topic, content, rendered_content: rendered });
  if (message.type === "stream" && !allowEmptyTopicName) {
    for (const entry of entries) {
      for (const key of ["topic", "prev_topic"]) {
        if (entry[key] !== undefined) entry[key] = topicDisplayName(h, entry[key] as string, { allowEmptyTopicName });
      }
    }
  }
  return entries.reverse();
}

export function readReceipts(h: Hearth, user: UserRecord, messageId: number): number[] {
  if (!realmSetting<boolean>(h, "enable_read_receipts", true)) throw badRequest("Read receipts are disabled in this organization.");
  const { message } = accessMessage(h, user, messageId);
  const ids: number[] = [];
  for (const [userId, bits] of messageRecipientFlags(h.store, message)) {
    if (userId === message.sender_id || !(bits & MessageFlag.read) || bits & MessageFlag.historical) continue;
    const u = getUser(h.store, userId);
    if (!u || !u.is_active || u.settings.send_read_receipts === false) continue;
    ids.push(userId);
  }
  return ids.sort((a, b) => a - b);
}

/**
 * A direct message from a system bot (Notification Bot) to one user, best effort: the
 * change it tells of is already done, so a failure is logged, never passed on.
 */
export async function sendSystemBotDm(h: Hearth, bot: UserRecord, recipientId: number, content: string, what: string): Promise<void> {
  try {
    const userIds = [bot.id, recipientId].sort((a, b) => a - b);
    await doSendMessage(h, bot, { target: { type: "private", userIds }, content, client: "Internal", readBySender: true });
  } catch (error) {
    console.error(`Could not send ${what}:`, error);
  }
}
