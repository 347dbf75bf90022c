import type { Hearth } from "../context";
import { notifyWithoutCommit } from "../events/commit";
import { accessChannel } from "../access/channels";
import { accessMessage, messageAudience } from "../access/messages";
import { getUser, type UserRecord } from "../store/users";
import { channelSubscriberIds } from "../views/message_channels";
import { apiEmail } from "../views/users";
import { normalizeTopic } from "./message_content";
import { resolveRecipientUser } from "./message_send";

/** Typing notices (Zulip's zerver/actions/typing.py): events that record no state. */

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
  notifyWithoutCommit(
    h,
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
  notifyWithoutCommit(
    h,
    { type: "typing", op, message_type: "stream", sender: { user_id: sender.id, email: apiEmail(h, sender) }, stream_id: channelId, topic },
    typingReceivers(h, recipients),
  );
}

/** FL 351: someone is editing a message. */
export function doTypingEditMessage(h: Hearth, sender: UserRecord, op: "start" | "stop", messageId: number): void {
  const { message } = accessMessage(h, sender, messageId);
  const recipient =
    message.type === "stream"
      ? { type: "channel" as const, channel_id: message.channel_id!, topic: message.topic }
      : { type: "direct" as const, user_ids: message.dm_user_ids! };
  const audience = typingReceivers(h, messageAudience(h, message).filter((id) => id !== sender.id));
  notifyWithoutCommit(h, { type: "typing_edit_message", op, sender_id: sender.id, message_id: messageId, recipient }, audience);
}
