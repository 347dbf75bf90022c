import type { Hearth } from "../context";
import { badRequest } from "../errors";
import type { UserRecord } from "../store/users";
import { ApiError } from "../errors";
import { checkSendMessage, resolveTarget } from "./messages";

/**
 * Incoming webhook integrations: third-party services post to
 * `/api/v1/external/<name>?api_key=…&stream=…&topic=…` and a bot turns the payload into
 * a message. Each integration is listed in register's `realm_incoming_webhook_bots`.
 */
export interface WebhookIntegration {
  name: string;
  display_name: string;
  all_event_types: string[] | null;
  config_options: { key: string; label: string; validator: string }[];
  url_options: { key: string; label: string; input_type: string }[];
}

export const WEBHOOK_INTEGRATIONS: readonly WebhookIntegration[] = [
  // Zulip's JSON formatter: any JSON payload, shown as a code block.
  { name: "json", display_name: "JSON formatter", all_event_types: null, config_options: [], url_options: [] },
];

/** Python's json.dumps(indent=2): non-ASCII characters escaped, as Zulip's message shows them. */
function pythonJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** orjson's nesting limit: deeper payloads are malformed to Zulip too (and pretty-printing them grows with the square of the depth). */
const MAX_JSON_DEPTH = 1024;

function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    deepest = Math.max(deepest, depth);
    if (deepest > MAX_JSON_DEPTH) return deepest;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/** Zulip's JSON formatter (zerver/webhooks/json): the payload, pretty-printed, under the topic "JSON". */
export function jsonWebhookMessage(body: string): { topic: string; content: string } {
  let payload: unknown;
  try {
    payload = JSON.parse(body);
  } catch {
    throw badRequest("Malformed JSON");
  }
  if (depthOf(payload) > MAX_JSON_DEPTH) throw badRequest("Malformed JSON");
  return { topic: "JSON", content: "```json\n" + pythonJson(payload) + "\n```" };
}

/**
 * Zulip's check_send_webhook_message: to the channel named by `stream` (a name or an
 * ID), under the caller's `topic` or the integration's own; without `stream`, a direct
 * message to the bot's owner (or to the caller, if not a bot). A channel name that does
 * not exist is not an error for the service calling, as in Zulip (which also tells the
 * bot's owner by direct message; Hearth does not yet).
 */
export async function doSendWebhookMessage(
  h: Hearth,
  bot: UserRecord,
  message: { topic: string; content: string },
  where: { stream?: string; topic?: string },
  client: string,
): Promise<void> {
  if (where.stream === undefined) {
    // To the owner even when deactivated: the send then fails as Zulip's would.
    const target = resolveTarget(h, bot, "private", [bot.bot_owner_id ?? bot.id], undefined);
    await checkSendMessage(h, bot, { target, content: message.content, client, readBySender: false });
    return;
  }
  const to = /^\d+$/.test(where.stream) ? Number(where.stream) : where.stream;
  try {
    const target = resolveTarget(h, bot, "stream", to, where.topic ?? message.topic);
    await checkSendMessage(h, bot, { target, content: message.content, client, readBySender: false });
  } catch (error) {
    if (error instanceof ApiError && error.code === "STREAM_DOES_NOT_EXIST") return;
    throw error;
  }
}
