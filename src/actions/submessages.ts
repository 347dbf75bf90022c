import type { Hearth } from "../context";
import { commit } from "../events/commit";
import { badRequest } from "../errors";
import { checkWidgetEvent, MAX_SUBMESSAGE_LENGTH } from "../markdown/widgets";
import { getMessage, type MessageRecord } from "../store/messages";
import { replaceMessage } from "../store/user_messages";
import { ValidationError } from "../lib/validator";
import type { UserRecord } from "../store/users";
import { accessMessage, invalidMessage, messageAudience } from "../access/messages";
import { participationPolicyChanges, publishPolicyChanges, writePolicyChanges } from "./user_topics";

/** Readers' additions to one message (votes, tasks); each rewrites the message record, which holds them all. */
const MAX_SUBMESSAGES_PER_MESSAGE = 1000;

/** The widget a message carries: the `widget_type` of its first "widget" submessage. */
function widgetTypeOf(m: MessageRecord): string | null {
  const first = m.submessages.find((s) => s.msg_type === "widget");
  if (!first) return null;
  try {
    const type = (JSON.parse(first.content) as { widget_type?: unknown }).widget_type;
    return typeof type === "string" ? type : null;
  } catch {
    return null;
  }
}

/**
 * `POST /submessage` (Zulip's process_submessage): a reader adds to a message's widget
 * state, e.g. a poll vote. The sender attaches the first submessage; after that anyone
 * who can read the message may add one. Poll and todo changes are checked as Zulip
 * checks them. The `submessage` event goes to everyone who hears of changes to the
 * message (messageAudience: its holders, and the channel's subscribers where they may
 * read its history, as Zulip's event_recipient_ids_for_action_on_messages).
 */
export async function checkAddSubmessage(h: Hearth, user: UserRecord, messageId: number, msgType: string, content: string): Promise<void> {
  const { message } = accessMessage(h, user, messageId);
  if (message.sender_id !== user.id && !message.submessages.some((s) => s.sender_id === message.sender_id)) {
    throw badRequest("You cannot attach a submessage to this message.");
  }
  if (content.length > MAX_SUBMESSAGE_LENGTH) throw badRequest(`Submessage content is too long (limit: ${MAX_SUBMESSAGE_LENGTH} characters)`);
  let data: unknown;
  try {
    data = JSON.parse(content);
  } catch {
    throw badRequest("Invalid json for submessage");
  }
  const widgetType = widgetTypeOf(message);
  if (widgetType !== null) {
    try {
      checkWidgetEvent(widgetType, data, message.sender_id === user.id);
    } catch (e) {
      if (e instanceof ValidationError) throw badRequest(e.message);
      throw e;
    }
  }
  await commit(h, (tx) => {
    // Read again in the transaction: two votes at once must both be kept.
    const m = getMessage(h.store, messageId);
    if (!m) throw invalidMessage();
    if (m.submessages.length >= MAX_SUBMESSAGES_PER_MESSAGE) throw badRequest(`This message has too many submessages (limit: ${MAX_SUBMESSAGES_PER_MESSAGE})`);
    const submessage = { id: h.store.nextId("submessage"), message_id: m.id, sender_id: user.id, msg_type: msgType, content };
    replaceMessage(h.store, m, { ...m, submessages: [...m.submessages, submessage] });
    // Taking part (a vote) may follow the topic, in the same transaction (Zulip's rule).
    const policies = m.type === "stream" ? writePolicyChanges(h, participationPolicyChanges(h, user, m.channel_id!, m.topic)) : [];
    tx.notify(
      { type: "submessage", msg_type: msgType, message_id: messageId, submessage_id: submessage.id, sender_id: user.id, content },
      messageAudience(h, m),
    );
    publishPolicyChanges(tx, h, policies);
  });
}
