import { SerializedFields } from "../lib/serialized_fields";
import type { ApiEvent } from "./hub";
import { queuedFrom } from "./queues";

/**
 * The JSON of each message object, computed once: a channel message's event carries
 * the same message object in every queue that gets the same content form (see
 * QueueManager.deliver), so 1,000 polls serialize it once instead of 1,000 times.
 * Keyed weakly: it goes with the last queue that holds the message.
 */
const messageJson = new WeakMap<object, string>();

/** Each shared source event's JSON without its queue-local `id`. */
const sourceJson = new WeakMap<object, string>();

/**
 * A queued message event's JSON: its source's, computed once for every queue that
 * got it, with this queue's `id`. Only message events: their sources are objects the
 * queue manager made for one delivery, which nothing changes afterwards.
 */
function queuedEventJson(event: ApiEvent & { id: number }): string {
  const source = event.type === "message" ? queuedFrom(event) : undefined;
  if (source === undefined || "id" in source) return eventJson(event);
  let json = sourceJson.get(source);
  if (json === undefined) sourceJson.set(source, (json = eventJson(source)));
  return json === "{}" ? `{"id":${event.id}}` : `{"id":${event.id},${json.slice(1)}`;
}

function eventJson(event: ApiEvent): string {
  const message = event.message;
  if (event.type !== "message" || message === null || typeof message !== "object") return JSON.stringify(event);
  let json = messageJson.get(message);
  if (json === undefined) messageJson.set(message, (json = JSON.stringify(message)));
  const { message: _omitted, ...rest } = event;
  const head = JSON.stringify(rest);
  return head === "{}" ? `{"message":${json}}` : `${head.slice(0, -1)},"message":${json}}`;
}

/** The fields of a GET /events answer; `queueIdJson` is the queue's ID as JSON. */
export function eventsResponseFields(events: readonly (ApiEvent & { id: number })[], queueIdJson: string): SerializedFields {
  return new SerializedFields(`"events":[${events.map(queuedEventJson).join(",")}],"queue_id":${queueIdJson}`);
}
