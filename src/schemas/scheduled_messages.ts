import { type Static, Type as t } from "@sinclair/typebox";
import { success } from "./common";

/**
 * Scheduled messages and reminders, from Zulip's OpenAPI (ScheduledMessage, FL 179/181;
 * Reminder, FL 399): both objects are closed there (`additionalProperties: false`).
 */
export const ScheduledMessage = t.Object(
  {
    scheduled_message_id: t.Integer(),
    // The object keeps the legacy names although requests also accept channel/direct.
    type: t.Union([t.Literal("stream"), t.Literal("private")]),
    to: t.Union([t.Integer(), t.Array(t.Integer())]),
    topic: t.Optional(t.String()),
    content: t.String(),
    rendered_content: t.String(),
    scheduled_delivery_timestamp: t.Integer(),
    failed: t.Boolean(),
  },
  { additionalProperties: false },
);

export const Reminder = t.Object(
  {
    reminder_id: t.Integer(),
    type: t.Literal("private"),
    to: t.Array(t.Integer()),
    content: t.String(),
    rendered_content: t.String(),
    scheduled_delivery_timestamp: t.Integer(),
    failed: t.Boolean(),
    reminder_target_message_id: t.Integer(),
  },
  { additionalProperties: false },
);

export const CreateScheduledMessageResponse = success({ scheduled_message_id: t.Integer() });
export const ScheduledMessagesResponse = success({ scheduled_messages: t.Array(ScheduledMessage) });
export const CreateReminderResponse = success({ reminder_id: t.Integer() });
export const RemindersResponse = success({ reminders: t.Array(Reminder) });

const EventBase = { id: t.Integer() };

export const ScheduledMessagesEvent = t.Union([
  t.Object({ ...EventBase, type: t.Literal("scheduled_messages"), op: t.Literal("add"), scheduled_messages: t.Array(ScheduledMessage) }, { additionalProperties: false }),
  t.Object({ ...EventBase, type: t.Literal("scheduled_messages"), op: t.Literal("update"), scheduled_message: ScheduledMessage }, { additionalProperties: false }),
  t.Object({ ...EventBase, type: t.Literal("scheduled_messages"), op: t.Literal("remove"), scheduled_message_id: t.Integer() }, { additionalProperties: false }),
]);

export const RemindersEvent = t.Union([
  t.Object({ ...EventBase, type: t.Literal("reminders"), op: t.Literal("add"), reminders: t.Array(Reminder) }, { additionalProperties: false }),
  t.Object({ ...EventBase, type: t.Literal("reminders"), op: t.Literal("remove"), reminder_id: t.Integer() }, { additionalProperties: false }),
]);

export type ScheduledMessageJson = Static<typeof ScheduledMessage>;
export type ReminderJson = Static<typeof Reminder>;
