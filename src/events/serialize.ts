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

/**
 * Each shared source event's JSON without its opening brace, preceded by a comma
 * (`,"type":…}`, or `}` for an empty event): what follows a queue's `{"id":N` in
 * every queue that got it, so a queue's copy of it is two short pieces joined to
 * one shared string, not a new substring and a new template per queue.
 */
const sourceTail = new WeakMap<object, string>();

/**
 * A queued message event's JSON: its source's, computed once for every queue that
 * got it, with this queue's `id`. Only message events: their sources are objects the
 * queue manager made for one delivery, which nothing changes afterwards.
 */
function queuedEventJson(event: ApiEvent & { id: number }): string {
  const source = event.type === "message" ? queuedFrom(event) : undefined;
  if (source === undefined || "id" in source) return eventJson(event);
  let tail = sourceTail.get(source);
  if (tail === undefined) {
    const json = eventJson(source);
    sourceTail.set(source, (tail = json === "{}" ? "}" : "," + json.slice(1)));
  }
  return `{"id":` + event.id + tail;
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

/**
 * `"events":[…],"queue_id":…` as one string built by appending: the engine keeps the
 * pieces as a rope and copies them once, when the answer is written, where a
 * map-and-join copied each event's JSON into the join and the join into the answer.
 */
function eventsJson(events: readonly (ApiEvent & { id: number })[], queueIdJson: string): string {
  let json = `"events":[`;
  for (let i = 0; i < events.length; i++) json += i === 0 ? queuedEventJson(events[i]) : "," + queuedEventJson(events[i]);
  return json + `],"queue_id":` + queueIdJson;
}

/** The fields of a GET /events answer; `queueIdJson` is the queue's ID as JSON. */
export function eventsResponseFields(events: readonly (ApiEvent & { id: number })[], queueIdJson: string): SerializedFields {
  return new SerializedFields(eventsJson(events, queueIdJson));
}

/** A whole successful GET /events answer body, for the poll route that builds its Response itself. */
export function eventsResponseBody(events: readonly (ApiEvent & { id: number })[], queueIdJson: string): string {
  return `{"result":"success","msg":"",` + eventsJson(events, queueIdJson) + "}";
}
