import { statePart } from "./state_parts";
import type { ReminderJson, ScheduledMessageJson } from "../schemas/scheduled_messages";
import type { Hearth } from "../context";
import { scheduledOfOwner, type ScheduledRecord } from "../store/scheduled_messages";
import type { UserRecord } from "../store/users";

/** Zulip's ScheduledMessage object (legacy type names, `topic` only for channel messages). */
export function scheduledMessageView(r: ScheduledRecord): ScheduledMessageJson {
  return {
    scheduled_message_id: r.id,
    type: r.type,
    to: r.to,
    ...(r.type === "stream" ? { topic: r.topic } : {}),
    content: r.content,
    rendered_content: r.rendered_content,
    scheduled_delivery_timestamp: r.deliver_at,
    failed: r.failed,
  };
}

/** Zulip's Reminder object (FL 399). */
export function reminderView(r: ScheduledRecord): ReminderJson {
  return {
    reminder_id: r.id,
    type: "private",
    to: r.to as number[],
    content: r.content,
    rendered_content: r.rendered_content,
    scheduled_delivery_timestamp: r.deliver_at,
    failed: r.failed,
    reminder_target_message_id: r.reminder_target_message_id!,
  };
}

/** The owner's undelivered items of one kind, soonest first (failed ones included: the owner must see them). */
function undelivered(h: Hearth, ownerId: number, kind: ScheduledRecord["kind"]): ScheduledRecord[] {
  return scheduledOfOwner(h.store, ownerId)
    .filter((r) => r.kind === kind && r.delivered_message_id === null)
    .sort((a, b) => a.deliver_at - b.deliver_at || a.id - b.id);
}

export const getScheduledMessages = (h: Hearth, user: UserRecord) => undelivered(h, user.id, "message").map(scheduledMessageView);
export const getReminders = (h: Hearth, user: UserRecord) => undelivered(h, user.id, "reminder").map(reminderView);

/** Register parts of scheduled messages (FL 179) and reminders (FL 399): the user's undelivered ones. */

export const scheduledMessagesPart = statePart("scheduled_messages", ["scheduled_messages"], ({ h, user }) => ({
  scheduled_messages: user ? getScheduledMessages(h, user) : [],
}));

export const remindersPart = statePart("reminders", ["reminders"], ({ h, user }) => ({
  reminders: user ? getReminders(h, user) : [],
}));
