import { defineStatePart } from "../events/state";
import { getReminders, getScheduledMessages } from "../actions/scheduled_messages";

/** Register parts of scheduled messages (FL 179) and reminders (FL 399): the user's undelivered ones. */

defineStatePart("scheduled_messages", ["scheduled_messages"], ({ h, user }) => ({
  scheduled_messages: user ? getScheduledMessages(h, user) : [],
}));

defineStatePart("reminders", ["reminders"], ({ h, user }) => ({
  reminders: user ? getReminders(h, user) : [],
}));
