import { valuesOf, type Store } from "./db";

/**
 * A scheduled message or a reminder (Zulip keeps both in ScheduledMessage, told apart
 * by delivery type). A reminder is a direct message the Notification Bot sends to its
 * owner; its content is fixed when it is created.
 */
export interface ScheduledRecord {
  id: number;
  kind: "message" | "reminder";
  owner_id: number;
  type: "stream" | "private";
  /** Channel ID, or the user IDs as the API shows them (see `scheduledRecipients`). */
  to: number | number[];
  topic: string;
  content: string;
  rendered_content: string;
  /** UTC seconds. */
  deliver_at: number;
  read_by_sender: boolean;
  /** The client that scheduled it; the delivered message names it (as Zulip's sending_client). */
  client: string;
  failed: boolean;
  failure_message: string | null;
  delivered_message_id: number | null;
  reminder_target_message_id: number | null;
}

export function getScheduled(store: Store, ownerId: number, id: number): ScheduledRecord | undefined {
  return store.dbs.scheduledMessages.get([ownerId, id]) as ScheduledRecord | undefined;
}

export function scheduledOfOwner(store: Store, ownerId: number): ScheduledRecord[] {
  return valuesOf<ScheduledRecord>(store.dbs.scheduledMessages, ownerId);
}

const isQueued = (r: ScheduledRecord) => r.delivered_message_id === null && !r.failed;

/** Writes a record and keeps the delivery queue in step with it; call inside `commit`. */
export function putScheduled(store: Store, next: ScheduledRecord, previous?: ScheduledRecord): void {
  if (previous && isQueued(previous)) store.dbs.scheduledDue.remove([previous.deliver_at, previous.id]);
  store.dbs.scheduledMessages.put([next.owner_id, next.id], next);
  if (isQueued(next)) store.dbs.scheduledDue.put([next.deliver_at, next.id], next.owner_id);
}

export function removeScheduled(store: Store, record: ScheduledRecord): void {
  if (isQueued(record)) store.dbs.scheduledDue.remove([record.deliver_at, record.id]);
  store.dbs.scheduledMessages.remove([record.owner_id, record.id]);
}

/** Items due at `now` (oldest first), as [ownerId, id]. */
export function dueScheduled(store: Store, now: number, limit: number): { ownerId: number; id: number }[] {
  const out: { ownerId: number; id: number }[] = [];
  for (const { key, value } of store.dbs.scheduledDue.getRange({ start: [0], end: [now, Infinity], limit })) {
    out.push({ ownerId: value as number, id: (key as [number, number])[1] });
  }
  return out;
}

/** Every scheduled message and reminder, of every owner. */
export function* allScheduled(store: Store): Generator<ScheduledRecord> {
  for (const { value } of store.dbs.scheduledMessages.getRange({})) yield value as ScheduledRecord;
}
