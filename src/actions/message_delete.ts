import type { Hearth } from "../context";
import { commit, type Transaction } from "../events/commit";
import { badRequest, mustBeAdmin } from "../errors";
import { accessChannel } from "../access/channels";
import { accessMessage, messageAudience } from "../access/messages";
import { topicMessageIds } from "../store/message_topics";
import { conversationKey, getMessage, topicKey, type MessageRecord } from "../store/messages";
import { deleteMessageRows, messageRecipientFlags } from "../store/user_messages";
import type { UserRecord } from "../store/users";
import { canDeleteAnyMessage, canDeleteOwnMessage, channelById } from "../views/message_channels";
import { realmSetting } from "../views/messages";
import { notifyFirstMessageIds, refreshFirstMessageIds } from "./channel_first_message";
import { notifyAttachmentEvents, removeAttachmentFiles, type AttachmentChanges } from "./uploads";
import { releaseDeletedMessages } from "./message_attachments";
import { doClearTopicPolicies } from "./user_topics";
import { isAdmin } from "../store/users";

/** Deleting messages and topics (Zulip's zerver/actions/message_delete.py). */

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
  await commit(h, (tx) => {
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
    const firstIdChanges = refreshFirstMessageIds(h, channelIds);
    notifyDeleteMessages(tx, out);
    notifyFirstMessageIds(tx, h, firstIdChanges);
    notifyAttachmentEvents(tx, h, attachmentChanges);
  });
  await removeAttachmentFiles(h, attachmentChanges.removed);
}

/** A `delete_message` event's conversation, before its message IDs. */
type ConversationOfDeleted = { type: "delete_message"; message_type: "stream"; stream_id: number; topic: string } | { type: "delete_message"; message_type: "private" };

/**
 * One event per conversation, listing its deleted messages (clients with
 * bulk_message_deletion get it whole; queues split it for the others).
 */
function notifyDeleteMessages(tx: Transaction, deleted: { message: MessageRecord; audience: number[] }[]): void {
  const groups = new Map<string, { event: ConversationOfDeleted; ids: number[]; audience: Set<number> }>();
  for (const { message: m, audience } of deleted) {
    const key = m.type === "stream" ? `c:${m.channel_id}:${topicKey(m.topic)}` : `d:${conversationKey(m.dm_user_ids!)}`;
    let group = groups.get(key);
    if (!group) {
      const event: ConversationOfDeleted =
        m.type === "stream"
          ? { type: "delete_message", message_type: "stream", stream_id: m.channel_id!, topic: m.topic }
          : { type: "delete_message", message_type: "private" };
      groups.set(key, (group = { event, ids: [], audience: new Set() }));
    }
    group.ids.push(m.id);
    for (const id of audience) group.audience.add(id);
  }
  for (const { event, ids: messageIds, audience } of groups.values()) {
    tx.notify({ ...event, message_ids: messageIds.sort((a, b) => a - b) }, audience);
  }
}

export async function checkDeleteTopic(h: Hearth, user: UserRecord, channelId: number, topic: string): Promise<void> {
  accessChannel(h, user, channelId, { requireContentAccess: true, allowArchived: true });
  if (!isAdmin(user)) throw mustBeAdmin();
  const ids = topicMessageIds(h.store, channelId, topic);
  // Batches keep each transaction small, as Zulip's delete_in_topic does.
  for (let i = 0; i < ids.length; i += 1000) await doDeleteMessages(h, ids.slice(i, i + 1000));
  // The topic no longer exists: neither do users' policies on it (Zulip's delete_in_topic).
  await doClearTopicPolicies(h, channelId, topic);
}
