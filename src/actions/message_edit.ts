import { createHash } from "node:crypto";
import type { Hearth } from "../context";
import type { EventOf } from "../schemas/events";
import { commit, type Transaction } from "../events/commit";
import { ApiError, badRequest } from "../errors";
import { appendTo } from "../lib/collections";
import { accessMessage, invalidMessage, messageAudience } from "../access/messages";
import { linkProperties, topicLinks, type RenderResult } from "../markdown";
import { flagList, getMessage, MENTION_BITS, MessageFlag, recipientIdFor, type EditHistoryEntry, type MessageRecord } from "../store/messages";
import { messageRecipientFlags, replaceMessage, setUserFlags } from "../store/user_messages";
import { relocateUnreadRows } from "../store/unread";
import type { UserRecord } from "../store/users";
import { canReadChannel, channelById, type MessageChannel } from "../views/message_channels";
import { realmSetting } from "../views/messages";
import { notifyFirstMessageIds, refreshFirstMessageIds } from "./channel_first_message";
import { checkGroupMentionPermission, checkWildcardPermission } from "./message_checks";
import { normalizeContent, normalizeTopic, renderMessageContent } from "./message_content";
import { alertWordBits, mentionBitsFor, mentionedGroupMembers, topicParticipants } from "./message_mentions";
import { checkMove, moveRowsToChannel, moveTopicPolicies, sendMoveNotifications, type MoveRequest } from "./message_move";
import { notifyAttachmentEvents, removeAttachmentFiles } from "./uploads";
import { attachmentView } from "../views/uploads";
import { setMessageAttachments } from "./message_attachments";
import { publishPolicyChanges, type WrittenPolicies } from "./user_topics";

/** Editing a message's content, topic or channel (Zulip's zerver/actions/message_edit.py). */

export interface EditRequest extends MoveRequest {
  content?: string;
  channelId?: number;
  /** FL 379: the SHA-256 (hex) of the raw content the editor started from. */
  prevContentSha256?: string;
}

const DEFAULT_CONTENT_EDIT_LIMIT = 600;

/** What an edit changes, once checked. */
interface EditPlan {
  newTopic?: string;
  newChannel?: MessageChannel;
  /** The messages rewritten: the edited one, and those moving with it. */
  ids: number[];
  onlyResolving: boolean;
  content?: { text: string; rendered: RenderResult };
}

export async function checkEditMessage(h: Hearth, user: UserRecord, messageId: number, req: EditRequest): Promise<{ detached_uploads: unknown[] }> {
  const { message } = accessMessage(h, user, messageId);
  const now = Math.floor(Date.now() / 1000);
  const { newTopic, newChannel } = checkEditTarget(h, user, message, req);
  // As Zulip, for any edit that names it, not only content edits: someone else changed the message since.
  if (req.prevContentSha256 !== undefined && req.prevContentSha256 !== createHash("sha256").update(message.content).digest("hex")) {
    throw new ApiError("'prev_content_sha256' value does not match the expected value.", "EXPECTATION_MISMATCH", 400);
  }
  if (req.content !== undefined) checkMayEditContent(h, user, message, now);
  const move = newTopic !== undefined || newChannel !== undefined ? checkMove(h, user, message, newTopic, newChannel, req, now) : { ids: [message.id], onlyResolving: false };
  const content = req.content === undefined ? undefined : checkNewContent(h, user, message, req.content, newTopic);
  return doEditMessage(h, user, message, { newTopic, newChannel, ...move, content }, req, now);
}

/** The new topic and channel asked for (undefined where unchanged), and that there is something to change. */
function checkEditTarget(h: Hearth, user: UserRecord, message: MessageRecord, req: EditRequest): { newTopic?: string; newChannel?: MessageChannel } {
  // Archived channels are read-only (accessChannel refuses editing them too).
  if (message.type === "stream" && channelById(h, message.channel_id!)?.is_archived) throw badRequest("Invalid channel ID");
  let newTopic = req.topic === undefined ? undefined : normalizeTopic(req.topic);
  const newChannel = req.channelId === undefined || req.channelId === message.channel_id ? undefined : channelById(h, req.channelId);
  if (req.channelId !== undefined && req.channelId !== message.channel_id && (!newChannel || !canReadChannel(h, user, newChannel))) {
    throw badRequest("Invalid channel ID");
  }
  if (newTopic !== undefined && message.type === "private") throw badRequest("Direct messages cannot have topics.");
  if (newChannel && message.type === "private") throw badRequest("Direct messages cannot be moved to channels.");
  if (newTopic === message.topic) newTopic = undefined;
  if (req.content === undefined && newTopic === undefined && !newChannel) throw badRequest("Nothing to change");
  return { newTopic, newChannel };
}

/** Only the sender edits content, while the organization allows it and within its time limit. */
function checkMayEditContent(h: Hearth, user: UserRecord, message: MessageRecord, now: number): void {
  if (message.sender_id !== user.id) throw badRequest("You don't have permission to edit this message");
  if (!realmSetting(h, "allow_message_editing", true)) throw badRequest("Your organization has turned off message editing");
  const limit = realmSetting<number | null>(h, "message_content_edit_limit_seconds", DEFAULT_CONTENT_EDIT_LIMIT);
  if (limit !== null && now - message.timestamp > limit) throw badRequest("The time limit for editing this message has passed");
  // Its submessages are the widget's state; new content could not keep them consistent.
  if (message.submessages.length > 0) throw badRequest("Widgets cannot be edited.");
}

/** The new content, normalized and rendered, with the mention permissions a send would need. */
function checkNewContent(h: Hearth, user: UserRecord, message: MessageRecord, raw: string, newTopic: string | undefined): { text: string; rendered: RenderResult } {
  const text = normalizeContent(raw);
  let rendered: RenderResult | undefined;
  const render = () => (rendered ??= renderMessageContent(h, user, text));
  checkGroupMentionPermission(h, user, text, render);
  if (message.type === "stream") {
    const channel = channelById(h, message.channel_id!)!;
    checkWildcardPermission(h, user, { type: "stream", channel, topic: newTopic ?? message.topic }, text, render);
  }
  return { text, rendered: render() };
}

async function doEditMessage(h: Hearth, user: UserRecord, message: MessageRecord, plan: EditPlan, req: EditRequest, now: number): Promise<{ detached_uploads: unknown[] }> {
  const { newTopic, newChannel } = plan;
  const moving = newTopic !== undefined || newChannel !== undefined;
  const result = await commit(h, (tx) => {
    const { changes, attachments } = rewriteMessages(h, user, message, plan, now);
    // Each message's recipients' flags, read once for the steps below; kept current as
    // the mention rewrite changes them.
    const flagsById = new Map<number, Map<number, number>>();
    const recipientFlags = (m: MessageRecord) => flagsById.get(m.id) ?? flagsById.set(m.id, messageRecipientFlags(h.store, m)).get(m.id)!;
    // Together: a run holding many of the moved messages is rewritten once.
    if (moving) relocateUnreadRows(h.store, changes.map(({ after }) => ({ message: after, holders: recipientFlags(after) })));
    // Deleted since it was checked: nothing to edit (the commit rolls back).
    const edited = changes.find((c) => c.after.id === message.id)?.after;
    if (!edited) throw invalidMessage();
    const holders = recipientFlags(edited);
    if (plan.content) rewriteMentionFlags(h, message, edited, plan.content.rendered, holders);
    const lostAccess = newChannel ? moveRowsToChannel(h, message.channel_id!, newChannel, changes.map((c) => c.after), holders, recipientFlags) : new Set<number>();
    const firstIdChanges = newChannel ? refreshFirstMessageIds(h, [message.channel_id!, newChannel.id]) : [];
    const policies: WrittenPolicies = moving ? moveTopicPolicies(h, user, message, { ids: plan.ids, newTopic, newChannel, lostAccess }, req.propagateMode) : [];
    if (lostAccess.size > 0) {
      tx.notify(
        { type: "delete_message", message_type: "stream", message_ids: changes.map((c) => c.after.id).sort((a, b) => a - b), stream_id: message.channel_id!, topic: message.topic },
        lostAccess,
      );
    }
    notifyUpdateMessage(tx, h, user, message, changes, holders, req, now);
    notifyFirstMessageIds(tx, h, firstIdChanges);
    notifyAttachmentEvents(tx, h, attachments);
    publishPolicyChanges(tx, h, policies);
    return { changes, policies, attachments };
  });
  await removeAttachmentFiles(h, result.attachments.removed);
  if (moving) await sendMoveNotifications(h, user, message, result.changes.length, newChannel, newTopic, req);
  return { detached_uploads: result.attachments.detached.map((a) => attachmentView(h, a)) };
}

/** Inside the edit's commit: each message's new record, with its edit-history entry. */
function rewriteMessages(h: Hearth, user: UserRecord, message: MessageRecord, plan: EditPlan, now: number) {
  const { newTopic, newChannel, content } = plan;
  const moving = newTopic !== undefined || newChannel !== undefined;
  let attachments: ReturnType<typeof setMessageAttachments> = { updated: [], removed: [], detached: [] };
  const changes: { before: MessageRecord; after: MessageRecord }[] = [];
  for (const id of plan.ids) {
    const before = getMessage(h.store, id);
    if (!before) continue;
    const entry: EditHistoryEntry = { user_id: user.id, timestamp: now };
    const after: MessageRecord = { ...before };
    if (id === message.id && content !== undefined) {
      // FL 365: the time of the last content edit only; moves have their own.
      after.last_edit_timestamp = now;
      entry.prev_content = before.content;
      entry.prev_rendered_content = before.rendered_content;
      entry.prev_rendered_content_version = 1;
      after.content = content.text;
      after.rendered_content = content.rendered.html;
      after.is_me_message = /^\/me /.test(content.text);
      Object.assign(after, linkProperties(content.rendered.linkUrls));
      // Only the sender edits content, so their rights decide which links claim uploads.
      attachments = setMessageAttachments(h, user, id, content.rendered.linkUrls);
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
    if (moving && !plan.onlyResolving) after.last_moved_timestamp = now;
    after.edit_history = [entry, ...before.edit_history];
    replaceMessage(h.store, before, after);
    changes.push({ before, after });
  }
  return { changes, attachments };
}

/** Inside the edit's commit: mention and alert-word flags follow the new content. */
function rewriteMentionFlags(h: Hearth, original: MessageRecord, edited: MessageRecord, rendered: RenderResult, holders: Map<number, number>): void {
  const groupMembers = mentionedGroupMembers(h, rendered);
  const topicUsers = rendered.topicWildcard && original.type === "stream" ? topicParticipants(h, original.channel_id!, original.topic) : new Set<number>();
  const alertWordBit = alertWordBits(h, original.sender_id, edited.content);
  for (const [userId, bits] of holders) {
    const next =
      (bits & ~MENTION_BITS & ~MessageFlag.has_alert_word) |
      mentionBitsFor(userId, original.sender_id, rendered, groupMembers, topicUsers) |
      alertWordBit(userId);
    if (next !== bits) {
      setUserFlags(h.store, userId, edited, bits, next);
      holders.set(userId, next);
    }
  }
}

type UpdateMessageEvent = EventOf<"update_message">;

function notifyUpdateMessage(
  tx: Transaction,
  h: Hearth,
  user: UserRecord,
  original: MessageRecord,
  changes: { before: MessageRecord; after: MessageRecord }[],
  holders: Map<number, number>,
  req: EditRequest,
  now: number,
): void {
  const target = changes.find((c) => c.after.id === original.id)!;
  const base: { -readonly [K in keyof UpdateMessageEvent]: UpdateMessageEvent[K] } = {
    type: "update_message",
    flags: [],
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
    base.stream_id = original.channel_id!;
    const name = channelById(h, original.channel_id!)?.name;
    if (name !== undefined) base.stream_name = name;
    if (target.before.topic !== target.after.topic || target.before.channel_id !== target.after.channel_id) {
      base.propagate_mode = req.propagateMode;
      base.orig_subject = target.before.topic;
      if (target.before.topic !== target.after.topic) {
        base.subject = target.after.topic;
        base.topic_links = target.after.topic === "" ? [] : topicLinks(target.after.topic, realmSetting(h, "linkifiers", []));
      }
      if (target.before.channel_id !== target.after.channel_id) base.new_stream_id = target.after.channel_id!;
    }
  }
  // Those who may read it now; subscribers without a row get flags ["read"], as Zulip's subscriber_info gives them.
  const audience = new Map<number, number>();
  for (const id of messageAudience(h, target.after, holders.keys())) audience.set(id, holders.get(id) ?? MessageFlag.read);
  notifyPerFlagSet(audience, (flags, userIds) => tx.notify({ ...base, flags }, userIds));
}

/** One event per distinct flag set, so each recipient sees their own flags. */
function notifyPerFlagSet(flagsByUser: Map<number, number>, build: (flags: string[], userIds: number[]) => void): void {
  const groups = new Map<number, number[]>();
  for (const [userId, bits] of flagsByUser) appendTo(groups, bits, userId);
  for (const [bits, userIds] of groups) build(flagList(bits), userIds);
}
