import type { Hearth } from "../context";
import { badRequest } from "../errors";
import { checkDictValue, checkInt, checkList, checkString, checkStringIn, isDict, requiredKey, ValidationError } from "../lib/validator";
import { getSystemBot } from "../store/system_bots";
import { getUser, type UserRecord } from "../store/users";
import { channelById, channelByName, channelSubscriberIds } from "../views/message_channels";
import { checkChannelName } from "./channels";
import { checkSendMessage, doSendMessage, resolveTarget } from "./messages";

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
  // Zulip's slack_incoming: Slack's incoming-webhook format, from the many tools that speak it.
  { name: "slack_incoming", display_name: "Slack-compatible webhook", all_event_types: null, config_options: [], url_options: [] },
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
  return { topic: "JSON", content: "```json\n" + pythonJson(parsePayload(body)) + "\n```" };
}

/** A webhook's JSON payload, refused as Zulip refuses it when malformed or nested too deep. */
function parsePayload(raw: string): unknown {
  let payload: unknown;
  try {
    payload = JSON.parse(raw);
  } catch {
    throw badRequest("Malformed JSON");
  }
  if (depthOf(payload) > MAX_JSON_DEPTH) throw badRequest("Malformed JSON");
  return payload;
}

/**
 * Zulip's check_send_webhook_message: to the channel named by `stream` (a name or an
 * ID), under the caller's `topic` or the integration's own; without `stream`, a direct
 * message to the bot's owner (or to the caller, if not a bot). A channel name that does
 * not exist is not an error for the service calling, as in Zulip: the bot's owner hears
 * of it from the Notification Bot instead (as also when the channel has no subscribers).
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
  const byId = /^\d+$/.test(where.stream);
  const name = byId ? where.stream : checkChannelName(where.stream);
  const channel = byId ? channelById(h, Number(name)) : channelByName(h, name);
  if (!channel) {
    await warnBotOwner(h, bot, byId
      ? `tried to send a message to channel ID ${name}, but there is no channel with that ID.`
      : `tried to send a message to channel #**${name}**, but that channel does not exist. Click [here](#channels/new) to create it.`);
    if (byId) throw badRequest(`Channel with ID '${name}' does not exist`);
    return;
  }
  const target = resolveTarget(h, bot, "stream", byId ? channel.id : channel.name, where.topic ?? message.topic);
  if (channelSubscriberIds(h, channel.id).length === 0) {
    await warnBotOwner(h, bot, `tried to send a message to channel #**${channel.name}**. The channel exists but does not have any subscribers.`);
  }
  await checkSendMessage(h, bot, { target, content: message.content, client, readBySender: false });
}

/** Zulip's wait between two such warnings to one bot's owner: a misconfigured integration must not flood them. */
const BOT_OWNER_WARNING_INTERVAL_MS = 5 * 60 * 1000;
const lastBotOwnerWarning = new WeakMap<Hearth, Map<number, number>>();

/** Zulip's send_rate_limited_pm_notification_to_bot_owner: a direct message from the Notification Bot. */
async function warnBotOwner(h: Hearth, bot: UserRecord, what: string): Promise<void> {
  const owner = bot.bot_owner_id === null ? undefined : getUser(h.store, bot.bot_owner_id);
  const notifier = getSystemBot(h.store, "notification");
  if (!owner?.is_active || !notifier) return;
  const sent = lastBotOwnerWarning.get(h) ?? new Map<number, number>();
  lastBotOwnerWarning.set(h, sent);
  const now = Date.now();
  if (now - (sent.get(bot.id) ?? -Infinity) <= BOT_OWNER_WARNING_INTERVAL_MS) return;
  sent.set(bot.id, now);
  await doSendMessage(h, notifier, {
    target: { type: "private", userIds: [notifier.id, owner.id].sort((a, b) => a - b) },
    content: `Your bot \`${bot.email}\` ${what}`,
    client: "Internal",
    readBySender: true,
  });
}

// ---------------------------------------------------------------------------
// Slack-compatible webhook (Zulip's slack_incoming): services that post Slack's format.

type Json = unknown;
/** Python's truthiness, as Zulip's checks read the payload (`[]`, `{}`, `0` and `""` are false). */
const truthy = (v: Json) =>
  v !== null && v !== undefined && v !== false && v !== 0 && v !== "" && !(Array.isArray(v) && v.length === 0) && !(isDict(v) && Object.keys(v).length === 0);
const has = (o: Record<string, Json>, key: string) => key in o && truthy(o[key]);

/** Slack's text object: plain_text or mrkdwn (plain_text only where Slack allows no more). */
function textObject(value: Json, name: string, plainOnly = false): string {
  const o = checkDictValue(value, name);
  checkStringIn(plainOnly ? ["plain_text"] : ["plain_text", "mrkdwn"])(requiredKey(o, "type", name), `${name}["type"]`);
  return checkString(requiredKey(o, "text", name), `${name}["text"]`);
}
const joinPieces = (pieces: string[]) => pieces.map((p) => p.trim()).filter((p) => p !== "").join("\n\n");

function renderElement(value: Json, name: string): string {
  const element = checkDictValue(value, name);
  if (checkString(requiredKey(element, "type", name), `${name}["type"]`) !== "image") return "";
  return `[${checkString(requiredKey(element, "alt_text", name), `${name}["alt_text"]`)}](${checkString(requiredKey(element, "image_url", name), `${name}["image_url"]`)})`;
}

const BLOCK_TYPES = ["actions", "context", "divider", "header", "image", "input", "section"];

function renderBlock(value: Json, name: string): string {
  const block = checkDictValue(value, name);
  const type = checkStringIn(BLOCK_TYPES)(requiredKey(block, "type", name), `${name}["type"]`);
  if (type === "context" && has(block, "elements")) {
    return joinPieces(
      checkList(block.elements, `${name}["elements"]`).map((element, i) => {
        const at = `${name}["elements"][${i}]`;
        const kind = checkStringIn(["image", "plain_text", "mrkdwn"])(requiredKey(checkDictValue(element, at), "type", at), `${at}["type"]`);
        return kind === "image" ? renderElement(element, at) : textObject(element, at);
      }),
    );
  }
  if (type === "divider") return "----";
  if (type === "header") return "## " + textObject(requiredKey(block, "text", name), `${name}["text"]`, true);
  if (type === "image") {
    const url = checkString(requiredKey(block, "image_url", name), `${name}["image_url"]`);
    let alt = checkString(requiredKey(block, "alt_text", name), `${name}["alt_text"]`);
    if ("title" in block) alt = textObject(block.title, `${name}["title"]`, true);
    return `[${alt}](${url})`;
  }
  if (type === "section") {
    const pieces: string[] = [];
    if ("text" in block) pieces.push(textObject(block.text, `${name}["text"]`));
    if ("accessory" in block) pieces.push(renderElement(block.accessory, `${name}["accessory"]`));
    if ("fields" in block) {
      const fields = checkList(block.fields, `${name}["fields"]`).map((f, i) => textObject(f, `${name}["fields"][${i}]`));
      if (fields.length === 1) pieces.push(fields[0]);
      else {
        // Two columns as a table with a blank header; cells can hold neither newlines nor pipes.
        const cells = fields.map((f) => f.replace(/\n/g, " ").replace(/\|/g, " "));
        let table = "| | |\n|-|-|\n";
        for (let i = 0; i < cells.length; i += 2) table += `| ${cells[i]} | ${cells[i + 1] ?? ""} |\n`;
        pieces.push(table);
      }
    }
    return joinPieces(pieces);
  }
  return ""; // actions, input: interactive, not shown
}

function renderAttachment(value: Json, name: string): string {
  const a = checkDictValue(value, name);
  const pieces: string[] = [];
  if (has(a, "title")) {
    const title = checkString(a.title, `${name}["title"]`);
    pieces.push(has(a, "title_link") ? `## [${title}](${checkString(a.title_link, `${name}["title_link"]`)})` : `## ${title}`);
  }
  if (has(a, "pretext")) pieces.push(checkString(a.pretext, `${name}["pretext"]`));
  if (has(a, "text")) pieces.push(checkString(a.text, `${name}["text"]`));
  if ("fields" in a) {
    const lines: string[] = [];
    checkList(a.fields, `${name}["fields"]`).forEach((value, i) => {
      const f = checkDictValue(value, `${name}["fields"][${i}]`);
      const title = has(f, "title") ? checkString(f.title, `${name}["fields"][${i}]["title"]`) : null;
      const text = has(f, "value") ? checkString(f.value, `${name}["fields"][${i}]["value"]`) : null;
      if (title !== null && text !== null) lines.push(`*${title}*: ${text}`);
      else if (title !== null) lines.push(`*${title}*`);
      else if (text !== null) lines.push(text);
    });
    pieces.push(lines.join("\n"));
  }
  if (has(a, "blocks")) checkList(a.blocks, `${name}["blocks"]`).forEach((b, i) => pieces.push(renderBlock(b, `${name}["blocks"][${i}]`)));
  if (has(a, "image_url")) pieces.push(`[](${checkString(a.image_url, `${name}["image_url"]`)})`);
  if (has(a, "footer")) pieces.push(checkString(a.footer, `${name}["footer"]`));
  if (has(a, "ts")) {
    pieces.push(`<time:${checkInt(a.ts, `${name}["ts"]`)}>`);
  }
  return joinPieces(pieces);
}

/** Slack's `<url|text>` links and `*bold*` / `_italic_` in Zulip's Markdown. */
function slackToMarkdown(text: string): string {
  const linked = text.replace(/<(\w+?:\/\/.*?)\|(.*?)>/g, "[$2]($1)").trim();
  return linked
    .replace(/([^\w]|^)\*(?!\s+)([^*\n]+)(?<!\s)\*((?=[^\w])|$)/g, "$1**$2**$3")
    .replace(/([^\w]|^)_(?!\s+)([^_\n]+)(?<!\s)_((?=[^\w])|$)/g, "$1*$2*$3");
}

/**
 * A Slack webhook payload as Zulip renders it: blocks and attachments, else the text
 * (after `icon_emoji`); the topic is the `topic` URL parameter, else the payload's
 * `channel` without its `#`/`@`. null: nothing to post (Zulip answers success).
 */
export function slackWebhookMessage(raw: string, topic: string | undefined): { topic: string; content: string } | null {
  const payload = parsePayload(raw);
  try {
    return renderSlackPayload(payload, topic);
  } catch (e) {
    if (e instanceof ValidationError) throw badRequest(e.message);
    throw e;
  }
}

function renderSlackPayload(value: Json, topic: string | undefined): { topic: string; content: string } | null {
  const payload = checkDictValue(value, "payload");
  let where = topic;
  if (where === undefined && "channel" in payload) where = checkString(payload.channel, `payload["channel"]`).replace(/^[@#]/, "");
  const pieces: string[] = [];
  if (has(payload, "blocks")) checkList(payload.blocks, `payload["blocks"]`).forEach((b, i) => pieces.push(renderBlock(b, `payload["blocks"][${i}]`)));
  if (has(payload, "attachments")) checkList(payload.attachments, `payload["attachments"]`).forEach((a, i) => pieces.push(renderAttachment(a, `payload["attachments"][${i}]`)));
  let body = joinPieces(pieces);
  if (body === "" && has(payload, "text")) {
    body = (has(payload, "icon_emoji") ? checkString(payload.icon_emoji, `payload["icon_emoji"]`) + " " : "") + checkString(payload.text, `payload["text"]`);
    body = body.trim();
  }
  if (body === "") return null;
  return { topic: where ?? "(no topic)", content: slackToMarkdown(body) };
}
