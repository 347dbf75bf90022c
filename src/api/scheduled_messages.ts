import { Type as t } from "@sinclair/typebox";
import type { Hearth } from "../context";
import { ApiRoutes } from "../http/route";
import { param } from "../http/params";
import { pathId } from "../http/path";
import { clientName, isHumanClient } from "./messages";
import { checkEditScheduledMessage, checkScheduleMessage, checkScheduleReminder, doDeleteReminder, doDeleteScheduledMessage } from "../actions/scheduled_messages";
import { getReminders, getScheduledMessages } from "../views/scheduled_state";

const MessageType = param.oneOf(["direct", "channel", "stream", "private"] as const);
// Zulip's `Json[int | list[int]]`: a channel ID or a list of user IDs (no names here).
const Recipients = param.json(t.Union([t.Integer(), t.Array(t.Integer())]));

/** Scheduled messages (FL 173–184) and message reminders (FL 381–415). */
export function scheduledMessagesRoutes(h: Hearth) {
  return new ApiRoutes(h)
    .get("/scheduled_messages", {}, ({ user }) => ({ scheduled_messages: getScheduledMessages(h, user) }))
    .post(
      "/scheduled_messages",
      {
        params: {
          type: MessageType,
          to: Recipients,
          content: param.string(),
          topic: param.string().optional(),
          scheduled_delivery_timestamp: param.int(),
          read_by_sender: param.bool().optional(),
        },
      },
      async ({ user, params, request }) => {
        const client = clientName(request);
        const id = await checkScheduleMessage(h, user, {
          type: params.type,
          to: params.to,
          topic: params.topic,
          content: params.content,
          deliverAt: params.scheduled_delivery_timestamp,
          readBySender: params.read_by_sender ?? isHumanClient(client),
          client,
        });
        return { scheduled_message_id: id };
      },
    )
    .patch(
      "/scheduled_messages/:scheduled_message_id",
      {
        params: {
          type: MessageType.optional(),
          to: Recipients.optional(),
          content: param.string().optional(),
          topic: param.string().optional(),
          scheduled_delivery_timestamp: param.int().optional(),
        },
      },
      async ({ user, params, path }) => {
        await checkEditScheduledMessage(h, user, pathId(path.scheduled_message_id, "scheduled message ID"), {
          type: params.type,
          to: params.to,
          topic: params.topic,
          content: params.content,
          deliverAt: params.scheduled_delivery_timestamp,
        });
        return {};
      },
    )
    .delete("/scheduled_messages/:scheduled_message_id", {}, async ({ user, path }) => {
      await doDeleteScheduledMessage(h, user, pathId(path.scheduled_message_id, "scheduled message ID"));
      return {};
    })
    .get("/reminders", {}, ({ user }) => ({ reminders: getReminders(h, user) }))
    .post(
      "/reminders",
      {
        params: {
          message_id: param.int(),
          scheduled_delivery_timestamp: param.int(),
          note: param.string().optional(),
        },
      },
      async ({ user, params, request }) => ({
        reminder_id: await checkScheduleReminder(h, user, {
          messageId: params.message_id,
          deliverAt: params.scheduled_delivery_timestamp,
          note: params.note,
          client: clientName(request),
        }),
      }),
    )
    .delete("/reminders/:reminder_id", {}, async ({ user, path }) => {
      await doDeleteReminder(h, user, pathId(path.reminder_id, "reminder ID"));
      return {};
    });
}
