import { SerializedFields } from "../http/route";
import type { ApiEvent } from "./hub";

/**
 * The JSON of each message object, computed once: a channel message's event carries
 * the same message object in every queue that gets the same content form (see
 * QueueManager.deliver), so 1,000 polls serialize it once instead of 1,000 times.
 * Keyed weakly: it goes with the last queue that holds the message.
 */
const messageJson = new WeakMap<object, string>();

function eventJson(event: ApiEvent): string {
  const message = event.message;
  if (event.type !== "message" || message === null || typeof message !== "object") return JSON.stringify(event);
  let json = messageJson.get(message);
  if (json === undefined) messageJson.set(message, (json = JSON.stringify(message)));
  const { message: _omitted, ...rest } = event;
  const head = JSON.stringify(rest);
  return head === "{}" ? `{"message":${json}}` : `${head.slice(0, -1)},"message":${json}}`;
}

/** The fields of a GET /events answer. */
export function eventsResponseFields(events: readonly ApiEvent[], queueId: string): SerializedFields {
  return new SerializedFields(`"events":[${events.map(eventJson).join(",")}],"queue_id":${JSON.stringify(queueId)}`);
}
