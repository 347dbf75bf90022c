import { getSystemBot } from "../store/system_bots";
import { messageLinkSyntax } from "../markdown/links";
import { silentMention, truncateContent, unusedFence } from "../markdown/syntax";
import type { Hearth } from "../context";
import { commit, type Transaction } from "../events/commit";
import { ApiError, badRequest } from "../errors";
import { getUser, type UserRecord } from "../store/users";
import { dueScheduled, getScheduled, putScheduled, removeScheduled, type ScheduledRecord } from "../store/scheduled_messages";
import { messageNearUrl } from "../views/messages";
import { reminderView, scheduledMessageView } from "../views/scheduled_state";
import { canReadChannel, channelById } from "../views/message_channels";
import { accessMessage } from "../access/messages";
import { checkMayPost } from "./message_checks";
import { MAX_MESSAGE_LENGTH, normalizeContent, renderMessageContent, type MessageTarget } from "./message_content";
import { checkSendMessage, doSendMessage, resolveTarget, sendSystemBotDm } from "./message_send";

/** Zulip's MAX_REMINDER_NOTE_LENGTH (FL 415), announced in register as `max_reminder_note_length`. */
export const MAX_REMINDER_NOTE_LENGTH = 1000;

const scheduledMessageMissing = () => new ApiError("Scheduled message does not exist", "BAD_REQUEST", 404);
const reminderMissing = () => new ApiError("Reminder does not exist", "BAD_REQUEST", 404);
const pastDeliveryTime = () => badRequest("Scheduled delivery time must be in the future.");

type RequestType = "stream" | "channel" | "private" | "direct";
const isChannelType = (type: string) => type === "stream" || type === "channel";

function checkFutureTimestamp(timestamp: number, now = Date.now() / 1000): void {
  if (timestamp <= now) throw pastDeliveryTime();
}

// ---------------------------------------------------------------------------
// Scheduled messages

/**
 * Resolves a scheduled message's recipient like POST /messages, except that a missing
 * channel is Zulip's `STREAM_DOES_NOT_EXIST` with `stream_id` (the documented error of
 * this endpoint, which only takes channel IDs).
 */
function resolveScheduledTarget(h: Hearth, user: UserRecord, type: string, to: unknown, topic: string | undefined): MessageTarget {
  if (isChannelType(type)) {
    const id = Array.isArray(to) && to.length === 1 ? to[0] : to;
    if (typeof id === "number") {
      const channel = channelById(h, id);
      if (!channel || !canReadChannel(h, user, channel)) {
        throw new ApiError(`Channel with ID '${id}' does not exist`, "STREAM_DOES_NOT_EXIST", 400, { stream_id: id });
      }
    }
  }
  return resolveTarget(h, user, type, to, topic);
}

/**
 * `to` as Zulip shows it: the channel ID, or the direct-message recipients — the
 * other user of a one-to-one conversation, oneself alone, or every member of a group.
 */
function recipientsView(owner: UserRecord, target: MessageTarget): number | number[] {
  if (target.type === "stream") return target.channel.id;
  const others = target.userIds.filter((id) => id !== owner.id);
  if (others.length === 0) return [owner.id];
  return others.length === 1 ? others : target.userIds;
}

/** Everything of a scheduled message that depends on its recipient and content. */
function checkedMessageFields(h: Hearth, owner: UserRecord, type: string, to: unknown, topic: string | undefined, content: string) {
  const target = resolveScheduledTarget(h, owner, type, to, topic);
  const normalized = normalizeContent(content);
  const rendered = renderMessageContent(h, owner, normalized);
  checkMayPost(h, owner, target, normalized, rendered);
  return {
    type: target.type,
    to: recipientsView(owner, target),
    topic: target.type === "stream" ? target.topic : "",
    content: normalized,
    rendered_content: rendered.html,
  };
}

export interface ScheduleMessageRequest {
  type: RequestType;
  to: number | number[];
  topic?: string;
  content: string;
  deliverAt: number;
  readBySender: boolean;
  client: string;
}

export async function checkScheduleMessage(h: Hearth, owner: UserRecord, req: ScheduleMessageRequest): Promise<number> {
  checkFutureTimestamp(req.deliverAt);
  const fields = checkedMessageFields(h, owner, req.type, req.to, req.topic, req.content);
  const record = await commit(h, (tx) => {
    const r: ScheduledRecord = {
      id: h.store.nextId("scheduled_message"),
      kind: "message",
      owner_id: owner.id,
      ...fields,
      deliver_at: req.deliverAt,
      read_by_sender: req.readBySender,
      client: req.client,
      failed: false,
      failure_message: null,
      delivered_message_id: null,
      reminder_target_message_id: null,
    };
    putScheduled(h.store, r);
    tx.notify({ type: "scheduled_messages", op: "add", scheduled_messages: [scheduledMessageView(r)] }, [owner.id]);
    return r;
  });
  return record.id;
}

export interface EditScheduledMessageRequest {
  type?: RequestType;
  to?: number | number[];
  topic?: string;
  content?: string;
  deliverAt?: number;
}

/** PATCH /scheduled_messages/{id}, with Zulip's rules (FL 184) and messages. */
export async function checkEditScheduledMessage(h: Hearth, owner: UserRecord, id: number, req: EditScheduledMessageRequest): Promise<void> {
  if (req.type === undefined && req.to === undefined && req.topic === undefined && req.content === undefined && req.deliverAt === undefined) {
    throw badRequest("Nothing to change");
  }
  if (req.type !== undefined && req.to === undefined) throw badRequest("Recipient required when updating type of scheduled message.");
  if (req.type !== undefined && isChannelType(req.type) && req.topic === undefined) {
    throw badRequest("Topic required when updating scheduled message type to channel.");
  }
  if (req.deliverAt !== undefined) checkFutureTimestamp(req.deliverAt);
  const existing = getScheduled(h.store, owner.id, id);
  if (!existing || existing.kind !== "message") throw scheduledMessageMissing();
  if (existing.delivered_message_id !== null) throw badRequest("Scheduled message was already sent");
  // A message the server failed to send needs a new time (Zulip: the old one has passed).
  if (existing.failed && req.deliverAt === undefined) throw pastDeliveryTime();
  let fields = {};
  if (req.type !== undefined || req.to !== undefined || req.topic !== undefined || req.content !== undefined) {
    const type = req.type ?? existing.type;
    fields = checkedMessageFields(
      h,
      owner,
      type,
      req.to ?? existing.to,
      // Zulip ignores `topic` for direct messages.
      isChannelType(type) ? (req.topic ?? existing.topic) : undefined,
      req.content ?? existing.content,
    );
  }
  await commit(h, (tx) => {
    const current = getScheduled(h.store, owner.id, id);
    // Delivery may have happened since the checks above.
    if (!current) throw scheduledMessageMissing();
    if (current.delivered_message_id !== null) throw badRequest("Scheduled message was already sent");
    const next: ScheduledRecord = { ...current, ...fields, deliver_at: req.deliverAt ?? current.deliver_at, failed: false, failure_message: null };
    putScheduled(h.store, next, current);
    tx.notify({ type: "scheduled_messages", op: "update", scheduled_message: scheduledMessageView(next) }, [owner.id]);
  });
}

export async function doDeleteScheduledMessage(h: Hearth, owner: UserRecord, id: number): Promise<void> {
  await commit(h, (tx) => {
    const r = getScheduled(h.store, owner.id, id);
    if (!r || r.kind !== "message") throw scheduledMessageMissing();
    removeScheduled(h.store, r);
    tx.notify({ type: "scheduled_messages", op: "remove", scheduled_message_id: id }, [owner.id]);
  });
}

// ---------------------------------------------------------------------------
// Reminders


/**
 * Zulip's reminder text (get_reminder_formatted_content): which message, the note
 * quoted, then who wrote it with a `[said](…/near/<id>)` link and the message quoted
 * (a poll or todo list is named instead). The quote is shortened so the whole text
 * fits the message length limit (else truncation would cut the closing fence).
 */
function reminderContent(h: Hearth, message: ReturnType<typeof accessMessage>["message"], note: string): string {
  const sender = getUser(h.store, message.sender_id);
  const narrow = messageNearUrl(h, message);
  let content: string;
  if (message.type === "stream") {
    const channel = channelById(h, message.channel_id!);
    const link = messageLinkSyntax(message.channel_id!, channel?.name ?? "unknown", message.topic, message.id);
    content = note ? `You requested a reminder for ${link}. Note:\n > ${note}` : `You requested a reminder for ${link}.`;
  } else {
    content = note ? `You requested a reminder for the following direct message. Note:\n > ${note}` : "You requested a reminder for the following direct message.";
  }
  const author = silentMention({ id: message.sender_id, full_name: sender?.full_name ?? "Unknown user" });
  content += "\n\n";
  if (message.content.startsWith("/poll")) return `${content}${author} [sent](${narrow}) a poll.`;
  if (message.content.startsWith("/todo")) return `${content}${author} [sent](${narrow}) a todo list.`;
  content += `${author} [said](${narrow}):\n`;
  const fence = unusedFence(content);
  const quote = (text: string) => `${content}${fence}quote\n${text}\n${fence}`;
  return quote(truncateContent(message.content, MAX_MESSAGE_LENGTH - quote("").length));
}

export interface ScheduleReminderRequest {
  messageId: number;
  deliverAt: number;
  note: string | undefined;
  client: string;
}

export async function checkScheduleReminder(h: Hearth, owner: UserRecord, req: ScheduleReminderRequest): Promise<number> {
  checkFutureTimestamp(req.deliverAt);
  const { message } = accessMessage(h, owner, req.messageId);
  // Zulip's normalize_note_text: trailing whitespace and leading blank lines go.
  const note = (req.note ?? "").trimEnd().replace(/^\n+/, "");
  if ([...note].length > MAX_REMINDER_NOTE_LENGTH) throw badRequest(`Maximum reminder note length: ${MAX_REMINDER_NOTE_LENGTH} characters`);
  const content = reminderContent(h, message, note);
  const renderer = getSystemBot(h.store, "notification") ?? owner;
  const record = await commit(h, (tx) => {
    const r: ScheduledRecord = {
      id: h.store.nextId("scheduled_message"),
      kind: "reminder",
      owner_id: owner.id,
      type: "private",
      to: [owner.id],
      topic: "",
      content,
      rendered_content: renderMessageContent(h, renderer, content).html,
      deliver_at: req.deliverAt,
      read_by_sender: false,
      client: req.client,
      failed: false,
      failure_message: null,
      delivered_message_id: null,
      reminder_target_message_id: message.id,
    };
    putScheduled(h.store, r);
    tx.notify({ type: "reminders", op: "add", reminders: [reminderView(r)] }, [owner.id]);
    return r;
  });
  return record.id;
}

export async function doDeleteReminder(h: Hearth, owner: UserRecord, id: number): Promise<void> {
  await commit(h, (tx) => {
    const r = getScheduled(h.store, owner.id, id);
    if (!r || r.kind !== "reminder") throw reminderMissing();
    removeScheduled(h.store, r);
    tx.notify({ type: "reminders", op: "remove", reminder_id: id }, [owner.id]);
  });
}

// ---------------------------------------------------------------------------
// Delivery

/** Thrown inside the sending transaction when the item changed meanwhile: the message is rolled back. */
class Superseded extends Error {}

/**
 * Sends one due item. The message and the "delivered" mark commit in one transaction,
 * so a crash can neither lose the item nor send it twice; an edit or deletion that
 * commits first wins (the send rolls back and a later pass sees the new state).
 */
async function deliverOne(h: Hearth, ownerId: number, id: number): Promise<void> {
  const record = getScheduled(h.store, ownerId, id);
  if (!record || record.delivered_message_id !== null || record.failed) return;
  const markDelivered = (messageId: number, tx: Transaction) => {
    const current = getScheduled(h.store, ownerId, id);
    if (!current || JSON.stringify(current) !== JSON.stringify(record)) throw new Superseded();
    putScheduled(h.store, { ...current, delivered_message_id: messageId }, current);
    if (record.kind === "reminder") tx.notify({ type: "reminders", op: "remove", reminder_id: id }, [ownerId]);
    else tx.notify({ type: "scheduled_messages", op: "remove", scheduled_message_id: id }, [ownerId]);
  };
  try {
    const owner = getUser(h.store, ownerId);
    if (!owner || !owner.is_active) throw badRequest("Message could not be sent because the sender is deactivated.");
    if (record.kind === "reminder") {
      const bot = getSystemBot(h.store, "notification");
      if (!bot) throw badRequest("The notification bot does not exist.");
      const userIds = [bot.id, owner.id].sort((a, b) => a - b);
      await doSendMessage(h, bot, { target: { type: "private", userIds }, content: record.content, client: "Internal", readBySender: true, alsoInTransaction: markDelivered });
    } else {
      // The owner's permissions now, not when scheduled (Zulip re-runs its checks).
      const target = resolveScheduledTarget(h, owner, record.type, record.to, record.topic);
      await checkSendMessage(h, owner, {
        target,
        content: record.content,
        client: record.client,
        readBySender: record.read_by_sender,
        alsoInTransaction: markDelivered,
      });
    }
  } catch (e) {
    if (e instanceof Superseded) return;
    const reason = e instanceof ApiError ? e.message : "Internal server error";
    if (!(e instanceof ApiError)) console.error(`Scheduled message ${id} could not be sent:`, e);
    await doMarkFailed(h, ownerId, id, reason);
  }
}

/** Zulip: a failed item stays listed with `failed: true`, and its owner is told. */
async function doMarkFailed(h: Hearth, ownerId: number, id: number, reason: string): Promise<void> {
  const failed = await commit(h, (tx) => {
    const current = getScheduled(h.store, ownerId, id);
    if (!current || current.delivered_message_id !== null) return undefined;
    const next = { ...current, failed: true, failure_message: reason };
    putScheduled(h.store, next, current);
    if (next.kind === "reminder") {
      // Reminder events have no update op: replace the client's copy.
      tx.notify({ type: "reminders", op: "remove", reminder_id: id }, [ownerId]);
      tx.notify({ type: "reminders", op: "add", reminders: [reminderView(next)] }, [ownerId]);
    } else tx.notify({ type: "scheduled_messages", op: "update", scheduled_message: scheduledMessageView(next) }, [ownerId]);
    return next;
  });
  if (!failed || failed.kind === "reminder") return;
  const owner = getUser(h.store, ownerId);
  const bot = getSystemBot(h.store, "notification");
  if (!owner?.is_active || !bot) return;
  const when = new Date(failed.deliver_at * 1000).toISOString().replace(/\.000Z$/, "Z");
  const content = `The message you scheduled for <time:${when}> was not sent because of the following error:\n\n> ${reason}\n\n[View scheduled messages](#scheduled)`;
  await sendSystemBotDm(h, bot, owner.id, content, "a failed-scheduled-message notice");
}

/**
 * Delivers every item due at `now` (UTC seconds), soonest first. Idempotent and
 * driven only by the stored queue, so items due while the server was down go out at
 * the next start. Returns how many items were attempted.
 */
export async function deliverDueScheduledMessages(h: Hearth, now = Date.now() / 1000): Promise<number> {
  const attempted = new Set<number>();
  for (;;) {
    // An item superseded mid-send stays queued; it is retried on the next pass, not in a loop here.
    const due = dueScheduled(h.store, now, 100).filter((d) => !attempted.has(d.id));
    if (due.length === 0) return attempted.size;
    for (const { ownerId, id } of due) {
      attempted.add(id);
      await deliverOne(h, ownerId, id);
    }
  }
}

/**
 * Delivers what is due now, then polls (Zulip's deliver_scheduled_messages also
 * works at this granularity; a pass with nothing due is one range read). `firstRun`
 * resolves once the start-up pass is done; `stop` waits for a pass in progress so the
 * store is not closed under it.
 */
export function startScheduledDeliveryJob(h: Hearth, intervalMs = 5_000): { firstRun: Promise<void>; stop(): Promise<void> } {
  let current: Promise<void> | null = null;
  const run = () => {
    current ??= deliverDueScheduledMessages(h)
      .then(() => undefined)
      .catch((e) => console.error("Scheduled message delivery failed; it will retry:", e))
      .finally(() => (current = null));
    return current;
  };
  const firstRun = run();
  const timer = setInterval(run, intervalMs);
  return {
    firstRun,
    async stop() {
      clearInterval(timer);
      await current;
    },
  };
}
