import { SerializedFields } from "../lib/serialized_fields";
import type { ApiEvent } from "./hub";
import type { QueuedEvent } from "./event_queue";

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

type Sources = readonly (ApiEvent | undefined)[] | undefined;

/**
 * A queued message event's JSON: its source's (the object it was pushed from, see
 * EventQueue.sources), computed once for every queue that got it, with this queue's
 * `id`. Only message events: their sources are objects the queue manager made for
 * one delivery, which nothing changes afterwards; a source that does not carry the
 * event's own message object is not its source, and is not used.
 */
function queuedEventJson(event: QueuedEvent, source: ApiEvent | undefined): string {
  if (source === undefined || event.type !== "message" || source.message !== event.message || "id" in source) return eventJson(event);
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
function eventsJson(events: readonly QueuedEvent[], queueIdJson: string, sources: Sources): string {
  let json = `"events":[`;
  for (let i = 0; i < events.length; i++) {
    const one = queuedEventJson(events[i], sources?.[i]);
    json += i === 0 ? one : "," + one;
  }
  return json + `],"queue_id":` + queueIdJson;
}

/**
 * The fields of a GET /events answer; `queueIdJson` is the queue's ID as JSON,
 * `sources` the queue's `sources` for these events, index for index (without them,
 * every event is serialized on its own).
 */
export function eventsResponseFields(events: readonly QueuedEvent[], queueIdJson: string, sources?: Sources): SerializedFields {
  return new SerializedFields(eventsJson(events, queueIdJson, sources));
}

/** A whole successful GET /events answer body, for the poll route that builds its Response itself. */
export function eventsResponseBody(events: readonly QueuedEvent[], queueIdJson: string, sources?: Sources): string {
  return `{"result":"success","msg":"",` + eventsJson(events, queueIdJson, sources) + "}";
}
