import { statePart } from "../events/state";
import { getReminders, getScheduledMessages } from "../actions/scheduled_messages";

/** Register parts of scheduled messages (FL 179) and reminders (FL 399): the user's undelivered ones. */

export const scheduledMessagesPart = statePart("scheduled_messages", ["scheduled_messages"], ({ h, user }) => ({
  scheduled_messages: user ? getScheduledMessages(h, user) : [],
}));

export const remindersPart = statePart("reminders", ["reminders"], ({ h, user }) => ({
  reminders: user ? getReminders(h, user) : [],
}));
