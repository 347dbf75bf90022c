import type { Hearth } from "../context";
import type { MessageEventJson } from "../schemas/events";
import { commit, commitInfallible, type Transaction } from "../events/commit";
import { ApiError, badRequest } from "../errors";
import { linkProperties, type RenderResult } from "../markdown";
import { widgetFromContent, type WidgetContent } from "../markdown/widgets";
import { topicExists } from "../store/message_topics";
import { conversationKey, existingRecipientId, flagList, MAX_DM_PARTICIPANTS, MessageFlag, recipientIdFor, type MessageRecord } from "../store/messages";
import { insertMessage } from "../store/user_messages";
import { RecipientFlags } from "../store/recipient_flags";
import { alertWordsByUser } from "../store/personal";
import { getChannelInTransaction, putChannel } from "../store/channels";
import { getUser, inactiveUserIdsOf, type UserRecord } from "../store/users";
import { sharedSubscriberIds } from "../store/subscriptions";
import { botOwner, canReadChannel, channelById, channelByName, isSubscribedTo, type MessageChannel } from "../views/message_channels";
import { formatMessage } from "../views/messages";
import { apiEmail } from "../views/users";
import { notifyFirstMessageIds } from "./channel_first_message";
import { checkMayPost, checkTopicPolicy } from "./message_checks";
import { normalizeContent, normalizeTopic, renderMessageContent, type MessageTarget } from "./message_content";
import { alertWordBits, mentionBitsFor, mentionedGroupMembers, topicParticipants } from "./message_mentions";
import { announceMessageSent } from "./message_sent";
import { outgoingWebhookTriggers, recordOutgoingWebhookCalls } from "./outgoing_webhook_services";
import { notifyAttachmentEvents, removeAttachmentFiles, type AttachmentChanges } from "./uploads";
import { setMessageAttachments } from "./message_attachments";
import { planAutomaticTopicPolicies, publishPolicyChanges, writePolicyChanges, type WrittenPolicies } from "./user_topics";
import { visibleUserByEmail } from "../access/users";
import { missedMessageTriggers, recordMissedMessages } from "./missed_message_emails";

/** Sending a message (Zulip's zerver/actions/message_send.py): its recipients, checks, rows and event. */

/**
 * A recipient by ID or by email. By email as Zulip looks one up: the address the
 * sender sees — the placeholder always, a real address only where the sender may
 * see it — so a hidden address cannot be probed by messaging it.
 */
export function resolveRecipientUser(h: Hearth, sender: UserRecord, item: unknown): UserRecord {
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
  /** Recipients for whom the message starts read (a resolve notice, by their resolved_topic_notice_auto_read_policy). */
  readFor?: (userId: number) => boolean;
  localId?: string;
  queueId?: string;
  /** Writes (and their events) that must commit with the message or not at all (a scheduled message marked delivered). */
  alsoInTransaction?: (messageId: number, tx: Transaction) => void;
  /** The content's rendering when the checks already made it (rendering scans users; once per send is enough). */
  rendered?: RenderResult;
  /** A bot's widget (POST /messages `widget_content`, checked); otherwise `/poll` and `/todo` content starts one. */
  widget?: WidgetContent;
}

/**
 * A channel's active subscribers, by the shared subscriber list they were computed
 * from, with the deactivated accounts' set they left out: both are the same objects
 * until a subscription or an account is written, so a send to a channel whose
 * subscribers did not change filters nothing again.
 */
const activeSubscribers = new WeakMap<readonly number[], { inactive: ReadonlySet<number>; ids: readonly number[] }>();

function recipientsOf(h: Hearth, target: MessageTarget): readonly number[] {
  if (target.type === "private") return target.userIds;
  const inactive = inactiveUserIdsOf(h.store);
  const subscribers = sharedSubscriberIds(h.store, target.channel.id);
  const known = activeSubscribers.get(subscribers);
  if (known && known.inactive === inactive) return known.ids;
  const ids = subscribers.filter((id) => !inactive.has(id));
  activeSubscribers.set(subscribers, { inactive, ids });
  return ids;
}

export async function checkSendMessage(h: Hearth, sender: UserRecord, req: SendRequest): Promise<SentMessage> {
  const content = normalizeContent(req.content);
  const rendered = renderMessageContent(h, sender, content);
  checkMayPost(h, sender, req.target, content, rendered);
  return sendNormalized(h, sender, req, content, rendered);
}

export interface SentMessage {
  id: number;
  /** The sender's topic visibility changed by their automatic policies (FL 214). */
  automatic_new_visibility_policy?: number;
  /** The record written, for what the answer derives from it (its links). */
  message: MessageRecord;
}

/** Sends without permission checks: for checked requests and the server's own bots. */
export async function doSendMessage(h: Hearth, sender: UserRecord, req: SendRequest): Promise<SentMessage> {
  const content = normalizeContent(req.content);
  return sendNormalized(h, sender, req, content, req.rendered ?? renderMessageContent(h, sender, content));
}

/** A send whose content is normalized and rendered (checkSendMessage did both: not again, nor a copy of the request). */
async function sendNormalized(h: Hearth, sender: UserRecord, req: SendRequest, content: string, rendered: RenderResult): Promise<SentMessage> {
  // Topics the server composes (moderation reports, notices) get the same length and
  // character rules as a client's; for a client's own topic this changes nothing (and
  // the target is kept as it is).
  let target = req.target;
  if (target.type === "stream") {
    const topic = normalizeTopic(target.topic);
    if (topic !== target.topic) target = { ...target, topic };
  }
  const groupMembers = mentionedGroupMembers(h, rendered);
  const now = Math.floor(Date.now() / 1000);
  const recipientIds = recipientsOf(h, target);
  const topicUsers = target.type === "stream" && rendered.topicWildcard ? topicParticipants(h, target.channel.id, target.topic) : new Set<number>();
  const alertWordBit = alertWordBits(h, sender.id, content);
  // Most recipients are neither mentioned nor have alert words: they all get the same
  // bits, and only the others are looked at one by one (the per-recipient cost of a
  // send to a large channel).
  const commonBits = rendered.channelWildcard ? MessageFlag.stream_wildcard_mentioned : 0;
  // A channel's recipients are its ascending subscriber list (recipientsOf), not checked again.
  const flagsByUser = new RecipientFlags(recipientIds, commonBits, target.type === "stream");
  const alertWordUsers = alertWordsByUser(h.store);
  // Usually nobody is mentioned and nobody has alert words: no set of them is built.
  if (rendered.mentionedUserIds.size + groupMembers.size + topicUsers.size + alertWordUsers.size > 0) {
    for (const userId of new Set<number>([...rendered.mentionedUserIds, ...groupMembers, ...topicUsers, ...alertWordUsers.keys()])) {
      if (userId !== sender.id && flagsByUser.has(userId)) flagsByUser.set(userId, mentionBitsFor(userId, sender.id, rendered, groupMembers, topicUsers) | alertWordBit(userId));
    }
  }
  // The sender always gets a row, so they see what they sent even without subscribing.
  flagsByUser.set(sender.id, mentionBitsFor(sender.id, sender.id, rendered, groupMembers, topicUsers) | (req.readBySender ? MessageFlag.read : 0));
  // Setting a recipient's flags leaves the list as it is: walked without a copy.
  if (req.readFor) for (const id of flagsByUser.ids) if (req.readFor(id)) flagsByUser.set(id, flagsByUser.get(id)! | MessageFlag.read);
  // Zulip: a message sent in a direct message conversation with oneself is read.
  if (target.type === "private" && target.userIds.length === 1) flagsByUser.set(sender.id, flagsByUser.get(sender.id)! | MessageFlag.read);

  const serviceTriggers = outgoingWebhookTriggers(h, sender, target, rendered, groupMembers);
  const startsTopic = target.type === "stream" && !topicExists(h.store, target.channel.id, target.topic);
  const mentioned = flagsByUser.usersWith(MessageFlag.mentioned).filter((id) => id !== sender.id);
  const automaticPolicies =
    target.type === "stream" && !sender.is_system_bot
      ? planAutomaticTopicPolicies(h, sender, target.channel.id, target.topic, startsTopic, mentioned)
      : [];
  // Who gets a missed-message email for it (usually nobody: no row, no work).
  const missedEmails = missedMessageTriggers(h, sender, target, flagsByUser, rendered, groupMembers, topicUsers);
  let policiesWritten: WrittenPolicies = [];
  let attachmentChanges: AttachmentChanges = { updated: [], removed: [] };
  // Every check ran above, so this phase only writes (commitInfallible), unless
  // the caller's hook may still abandon the send (scheduled delivery): then it must
  // be able to roll back.
  const write = req.alsoInTransaction ? commit : commitInfallible;
  const recipientKey = target.type === "stream" ? `c:${target.channel.id}` : `d:${conversationKey(target.userIds)}`;
  // Given out once per conversation and never changed: read (cached) before the transaction, allocated in it the first time.
  const knownRecipientId = existingRecipientId(h.store, recipientKey);
  const message = await write(h, (tx) => {
    let firstInChannel = false;
    // The channel as this transaction read it, for the event (whether it is public) without reading it again.
    let channelNow: MessageChannel | undefined;
    const id = h.store.nextId("message");
    const record: MessageRecord = {
      id,
      sender_id: sender.id,
      type: target.type,
      channel_id: target.type === "stream" ? target.channel.id : null,
      topic: target.type === "stream" ? target.topic : "",
      dm_user_ids: target.type === "private" ? target.userIds : null,
      recipient_id: knownRecipientId ?? recipientIdFor(h.store, recipientKey),
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
    recordMissedMessages(h, id, missedEmails);
    policiesWritten = writePolicyChanges(h, automaticPolicies);
    if (record.has_attachment) attachmentChanges = setMessageAttachments(h, sender, id, rendered.linkUrls);
    if (target.type === "stream") {
      // The channels layer shows these (`first_message_id`, `is_recently_active`).
      // `is_recently_active` needs minute precision at most, so busy channels are rewritten once a minute.
      const channel = (channelNow = getChannelInTransaction(h.store, target.channel.id));
      if (channel && (channel.first_message_id === null || channel.last_message_at === null || now - channel.last_message_at >= 60)) {
        putChannel(h.store, { ...channel, first_message_id: channel.first_message_id ?? id, last_message_at: now });
        if (channel.first_message_id === null) firstInChannel = true;
      }
    }
    // The message's event is built once it is committed, outside the write batch.
    tx.afterCommit(() => {
      if (firstInChannel && target.type === "stream") {
        // Zulip announces a channel's first message ID (clients show "no older messages").
        notifyFirstMessageIds(tx, h, [{ channel: target.channel, first: record.id }]);
      }
      // Zulip's order: the topic policies the message set, then the message.
      publishPolicyChanges(tx, h, policiesWritten);
      notifyNewMessage(tx, h, sender, record, flagsByUser, req, channelNow);
      notifyAttachmentEvents(tx, h, attachmentChanges);
    });
    // Last, so that the events it queues follow the message's.
    req.alsoInTransaction?.(id, tx);
    return record;
  });
  if (attachmentChanges.removed.length > 0) await removeAttachmentFiles(h, attachmentChanges.removed);
  announceMessageSent(h, { messageId: message.id, serviceTriggers });
  // What the commit wrote, not what was planned: a send batched behind another that set the same policy changes nothing.
  const policy = policiesWritten.find((written) => written.userId === sender.id)?.topic.visibility_policy;
  return policy === undefined ? { id: message.id, message } : { id: message.id, automatic_new_visibility_policy: policy, message };
}

/** The event's message: the raw Markdown in `content` (rendered_content is added beside it), the empty topic as it is. */
const NEW_MESSAGE_VIEW = { applyMarkdown: false, allowEmptyTopicName: true } as const;

/**
 * One `message` event for all recipients: each user's flags ride in `perUser`, the
 * client's `local_id` goes only to the queue that sent it, and the message carries
 * both the raw Markdown (`content`) and the HTML (`rendered_content`) so each queue
 * gets what its client registered for (apply_markdown, client_gravatar).
 */
function notifyNewMessage(tx: Transaction, h: Hearth, sender: UserRecord, m: MessageRecord, flagsByUser: RecipientFlags, req: SendRequest, channel: MessageChannel | undefined): void {
  const formatted = formatMessage(h, sender, m, null, NEW_MESSAGE_VIEW);
  // Both forms of the content; each queue keeps the one its client asked for. formatMessage
  // builds the message field by field (a new object: completed in place, not copied); the
  // tests hold every delivered one to its schema.
  formatted.rendered_content = m.rendered_content;
  const message = formatted as unknown as MessageEventJson & { rendered_content: string };
  // One fields object per flags value: the queues share each (and its JSON).
  const fieldsByBits = new Map<number, Record<string, unknown>>();
  // The common value (unless every recipient differs from it) and the exceptions', without a set of them first.
  if (flagsByUser.exceptions.size < flagsByUser.size) fieldsByBits.set(flagsByUser.common, { flags: flagList(flagsByUser.common) });
  for (const bits of flagsByUser.exceptions.values()) if (!fieldsByBits.has(bits)) fieldsByBits.set(bits, { flags: flagList(bits) });
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
  tx.notify({ type: "message", message, flags: [] }, flagsByUser, {
    perUser,
    perQueue,
    toAllPublicStreamsQueues: channel !== undefined && !channel.invite_only,
  });
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
