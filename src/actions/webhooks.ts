import type { Hearth } from "../context";
import { badRequest } from "../errors";
import { checkDictValue, checkIntRange, checkList, checkString, checkStringIn, checkUrl, isDict, requiredKey, ValidationError } from "../lib/validator";
import { unusedFence } from "../markdown/syntax";
import { getSystemBot } from "../store/system_bots";
import { getUser, type UserRecord } from "../store/users";
import { channelById, channelByName, channelSubscriberIds } from "../views/message_channels";
import { checkChannelName } from "./channel_checks";
import { checkSendMessage, resolveTarget, sendSystemBotDm } from "./message_send";
import { channelLinkSyntax } from "../markdown/links";
import { splitOnce } from "../lib/text";

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
    await warnBotOwner(h, bot, `tried to send a message to channel ${channelLinkSyntax(channel.id, channel.name)}. The channel exists but does not have any subscribers.`);
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
  await sendSystemBotDm(h, notifier, owner.id, `Your bot \`${bot.email}\` ${what}`, "a bot owner's webhook warning");
}

// ---------------------------------------------------------------------------
// Slack-compatible webhook (Zulip's slack_incoming): services that post Slack's format,
// rendered as Zulip's newest renderer does (the one it shares with its Slack importer).

type Json = unknown;
/** Python's truthiness, as Zulip's checks read the payload (`[]`, `{}`, `0` and `""` are false). */
const truthy = (v: Json) =>
  v !== null && v !== undefined && v !== false && v !== 0 && v !== "" && !(Array.isArray(v) && v.length === 0) && !(isDict(v) && Object.keys(v).length === 0);
const has = (o: Record<string, Json>, key: string) => key in o && truthy(o[key]);

/** Slack's emphasis, which needs a word boundary of punctuation, space or symbol on each side (Slack has no mid-word emphasis). */
const slackEmphasisPattern = (marker: string) =>
  new RegExp(
    String.raw`((?![${marker}\x60@\\\p{Pf}\p{Pe}])[\p{P}\p{Zs}\p{S}]|^)(${marker})([^${marker}]+)(${marker})((?![${marker}\x60@\\\p{Pi}\p{Ps}])(?=[\p{P}\p{Zs}\p{S}]|$))`,
    "gmu",
  );
const SLACK_BOLD = slackEmphasisPattern("\\*");
const SLACK_STRIKE = slackEmphasisPattern("~");
const SLACK_ITALIC = slackEmphasisPattern("_");
/**
 * `<https://example.com>` and `<https://example.com|label>`, lower-case host names only,
 * as Zulip's pattern reads them. Written so that no part can match what the next one
 * matches (the host's last label is checked by a lookbehind instead of a second pattern
 * for the same dots) and nothing runs past a `<`: a payload that almost matches, over
 * and over, costs linear time. Zulip's own patterns took seconds on a few kilobytes.
 */
const SLACK_LINK = /<(?:https?:\/\/(?:www\.)?|ftp:\/\/)?[a-z0-9]+(?:[-.][a-z0-9]+)*(?<=\.[a-z]{2,63})(?::[0-9]{1,5})?(?:\/[^<>|]*)?(?:\|[^<>]*)?>/g;
/** `<mailto:a@b.c>` and `<a@b.c|label>`: the address (with a dot in its domain), written the same way. */
const SLACK_MAILTO = /<((?:mailto:)?[\p{L}\p{N}_.-]+@[\p{L}\p{N}_-]+(?:\.[\p{L}\p{N}_-]+)+)(?:\|[^<>]*)?>/gu;

/** Zulip's replace_links: `<url>` and `<url|label>` as Markdown links, `<mailto:…>` as the address. */
function slackLinks(text: string): string {
  return text
    .replace(SLACK_LINK, (match) => {
      const [url, label] = splitOnce(match.slice(1, -1), "|");
      return label === undefined ? url : `[${label}](${url})`;
    })
    .replace(SLACK_MAILTO, (_match, address: string) => address);
}

/** Slack's `*bold*`, `~strike~` and `_italic_` as Markdown. */
function slackEmphasis(text: string): string {
  return text
    .replace(SLACK_BOLD, (_m, before: string, _o, inner: string) => `${before}**${inner}**`)
    .replace(SLACK_STRIKE, (_m, before: string, _o, inner: string) => `${before}~~${inner}~~`)
    .replace(SLACK_ITALIC, (_m, before: string, _o, inner: string) => `${before}*${inner}*`);
}

/** Zulip's convert_slack_formatting, for blocks and attachments: the emphasis, then the links. */
function slackFormatting(text: string): string {
  return slackLinks(slackEmphasis(text));
}

/** Slack's text object: plain_text or mrkdwn (plain_text only where Slack allows no more). */
function textObject(value: Json, name: string, plainOnly = false): string {
  const o = checkDictValue(value, name);
  checkStringIn(plainOnly ? ["plain_text"] : ["plain_text", "mrkdwn"])(requiredKey(o, "type", name), `${name}["type"]`);
  return checkString(requiredKey(o, "text", name), `${name}["text"]`);
}
const joinPieces = (pieces: string[]) => pieces.map((p) => p.trim()).filter((p) => p !== "").join("\n\n");

/** An accessory or context element: only images show; one with a bad URL is dropped, not the message. */
function renderElement(value: Json, name: string): string {
  const element = checkDictValue(value, name);
  if (checkString(requiredKey(element, "type", name), `${name}["type"]`) !== "image") return "";
  try {
    const url = checkUrl(requiredKey(element, "image_url", name), `${name}["image_url"]`);
    return `[${checkString(requiredKey(element, "alt_text", name), `${name}["alt_text"]`)}](${url})`;
  } catch (e) {
    if (e instanceof ValidationError) return "";
    throw e;
  }
}

/** The deepest rich-text list nesting rendered. */
const MAX_LIST_INDENT = 20;

/** Block types Zulip knows but does not show (interactive ones, calls, files, tables). */
const UNSHOWN_BLOCK_TYPES = ["call", "contact_card", "file", "table", "actions", "input", "condition"];
const BLOCK_TYPES = ["context", "divider", "header", "image", "section", "rich_text", ...UNSHOWN_BLOCK_TYPES];

function renderBlock(value: Json, name: string): string {
  const block = checkDictValue(value, name);
  const type = checkStringIn(BLOCK_TYPES)(requiredKey(block, "type", name), `${name}["type"]`);
  if (type === "rich_text") {
    // Blank pieces are left out, the others kept whole: a nested list's indent is its meaning.
    const pieces = checkList(requiredKey(block, "elements", name), `${name}["elements"]`).map((e, i) => renderRichText(e, `${name}["elements"][${i}]`));
    return pieces.filter((p) => p.trim() !== "").join("\n");
  }
  if (type === "context" && has(block, "elements")) {
    return joinPieces(
      checkList(block.elements, `${name}["elements"]`).map((element, i) => {
        const at = `${name}["elements"][${i}]`;
        const kind = checkStringIn(["image", "plain_text", "mrkdwn"])(requiredKey(checkDictValue(element, at), "type", at), `${at}["type"]`);
        return kind === "image" ? renderElement(element, at) : slackFormatting(textObject(element, at));
      }),
    );
  }
  if (type === "divider") return "----";
  if (type === "header") return "## " + textObject(requiredKey(block, "text", name), `${name}["text"]`, true);
  if (type === "image") {
    const url = checkUrl(requiredKey(block, "image_url", name), `${name}["image_url"]`);
    let alt = checkString(requiredKey(block, "alt_text", name), `${name}["alt_text"]`);
    if ("title" in block) alt = textObject(block.title, `${name}["title"]`, true);
    return `[${alt}](${url})`;
  }
  if (type === "section") {
    const pieces: string[] = [];
    if ("text" in block) pieces.push(slackFormatting(textObject(block.text, `${name}["text"]`)));
    if ("accessory" in block) pieces.push(renderElement(block.accessory, `${name}["accessory"]`));
    if ("fields" in block) {
      const fields = checkList(block.fields, `${name}["fields"]`).map((f, i) => textObject(f, `${name}["fields"][${i}]`));
      if (fields.length === 1) pieces.push(slackFormatting(fields[0]));
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
  return ""; // a type Zulip does not show
}

/** Slack's inline styles on a rich-text run; the run's trailing spaces stay outside the markers. */
function richTextStyle(element: Record<string, Json>, text: string): string {
  if (!("style" in element)) return text;
  const stripped = text.trimEnd();
  const trailing = text.slice(stripped.length);
  const style = element.style;
  let result = stripped;
  if (isDict(style) && result.trim() !== "") {
    if ("code" in style) result = `\`${result}\``;
    if ("bold" in style) result = `**${result}**`;
    if ("italic" in style) result = `*${result}*`;
    if ("strike" in style) result = `~~${result}~~`;
  }
  return result + trailing;
}

/** A rich_text element: sections, lists, quotes, code blocks and their runs (Zulip's render_rich_text_element). */
function renderRichText(value: Json, name: string): string {
  const element = checkDictValue(value, name);
  const type = checkString(requiredKey(element, "type", name), `${name}["type"]`);
  const children = () => checkList(requiredKey(element, "elements", name), `${name}["elements"]`).map((e, i) => renderRichText(e, `${name}["elements"][${i}]`));
  switch (type) {
    case "rich_text_section":
      return children().join("");
    case "rich_text_list": {
      const marker = checkStringIn(["ordered", "bullet"])(requiredKey(element, "style", name), `${name}["style"]`) === "ordered" ? "1." : "-";
      // Slack nests lists a few levels deep; a bound keeps a hostile indent from building a huge string.
      const depth = checkIntRange(0, MAX_LIST_INDENT)(requiredKey(element, "indent", name), `${name}["indent"]`);
      const indent = depth > 0 ? " ".repeat(3 * depth) : "";
      return children()
        .map((piece) => `${indent}${marker} ${piece}\n`)
        .join("")
        .trimEnd();
    }
    case "rich_text_quote": {
      const quoted = children().join("");
      const fence = unusedFence(quoted);
      return `${fence}quote\n${quoted}\n${fence}`;
    }
    case "rich_text_preformatted": {
      const runs = checkList(requiredKey(element, "elements", name), `${name}["elements"]`);
      if (runs.length !== 1) throw new ValidationError(`${name}["elements"] must hold exactly one element`);
      const at = `${name}["elements"][0]`;
      const code = checkString(requiredKey(checkDictValue(runs[0], at), "text", at), `${at}["text"]`);
      const fence = unusedFence(code);
      return `${fence}text\n${code}\n${fence}`;
    }
    case "text":
      return richTextStyle(element, checkString(requiredKey(element, "text", name), `${name}["text"]`));
    case "link": {
      const text = "text" in element ? checkString(element.text, `${name}["text"]`) : "";
      const url = checkString(requiredKey(element, "url", name), `${name}["url"]`);
      return richTextStyle(element, text === "" ? url : `[${text}](${url})`);
    }
    case "emoji":
      return `:${checkString(requiredKey(element, "name", name), `${name}["name"]`)}:`;
    // Slack IDs mean nothing here, as they mean nothing to Zulip's webhook.
    case "user":
      return `@**Slack user ${checkString(requiredKey(element, "user_id", name), `${name}["user_id"]`)}**`;
    case "channel":
      return `#**Slack channel ${checkString(requiredKey(element, "channel_id", name), `${name}["channel_id"]`)}**`;
    case "broadcast":
      return ["here", "everyone", "channel"].includes(checkString(requiredKey(element, "range", name), `${name}["range"]`)) ? "@**all**" : "";
    case "canvas":
      return "";
    default:
      // Zulip fails here with an internal error; a clear refusal is better.
      throw new ValidationError(`Unknown rich_text block: ${type}`);
  }
}

/** Python's requests.utils.requote_uri: characters a URL may not hold, percent-encoded; what is already encoded stays. */
function requoteUri(uri: string): string {
  // A lone surrogate has no UTF-8 form to percent-encode: it becomes U+FFFD first.
  return uri.toWellFormed().replace(/%(?![0-9A-Fa-f]{2})|[^A-Za-z0-9\-._~!#$%&'()*+,/:;=?@[\]]/gu, (c) => encodeURIComponent(c));
}

function renderAttachment(value: Json, name: string): string {
  const a = checkDictValue(value, name);
  const pieces: string[] = [];
  if (has(a, "title")) {
    const title = checkString(a.title, `${name}["title"]`);
    pieces.push(has(a, "title_link") ? `## [${title}](${checkUrl(a.title_link, `${name}["title_link"]`)})` : `## ${title}`);
  }
  if (has(a, "pretext")) pieces.push(checkString(a.pretext, `${name}["pretext"]`));
  if (has(a, "text")) pieces.push(slackFormatting(checkString(a.text, `${name}["text"]`)));
  if ("fields" in a) {
    const lines: string[] = [];
    checkList(a.fields, `${name}["fields"]`).forEach((value, i) => {
      const f = checkDictValue(value, `${name}["fields"][${i}]`);
      const title = has(f, "title") ? checkString(f.title, `${name}["fields"][${i}]["title"]`) : null;
      const text = has(f, "value") ? checkString(f.value, `${name}["fields"][${i}]["value"]`) : null;
      if (title !== null && text !== null) lines.push(`**${title}**: ${text}`);
      else if (title !== null) lines.push(`**${title}**`);
      else if (text !== null) lines.push(text);
    });
    pieces.push(lines.join("\n"));
  }
  if (has(a, "blocks")) checkList(a.blocks, `${name}["blocks"]`).forEach((b, i) => pieces.push(renderBlock(b, `${name}["blocks"][${i}]`)));
  if (has(a, "image_url")) {
    // Not a URL by Zulip's rules: kept, with what a URL may not hold percent-encoded.
    let url: string;
    try {
      url = checkUrl(a.image_url, `${name}["image_url"]`);
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      url = requoteUri(checkString(a.image_url, `${name}["image_url"]`));
    }
    pieces.push(`[](${url})`);
  }
  if (has(a, "footer")) pieces.push(checkString(a.footer, `${name}["footer"]`));
  if (has(a, "ts")) pieces.push(`<time:${slackTime(a.ts, `${name}["ts"]`)}>`);
  return joinPieces(pieces);
}

/**
 * An integer number of seconds, as an ISO time; some senders write it as a string
 * holding a decimal number (Zulip takes its whole part). Zulip fails on a time outside
 * years 1–9999 with an internal error; here it is a clear refusal.
 */
function slackTime(value: Json, name: string): string {
  let seconds: number;
  if (Number.isInteger(value)) seconds = value as number;
  else if (typeof value === "string" && /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(value)) seconds = Math.trunc(Number(value));
  else throw new ValidationError(`${name} is not an integer`);
  const date = new Date(seconds * 1000);
  const year = date.getUTCFullYear();
  if (!Number.isFinite(date.getTime()) || year < 1 || year > 9999) throw new ValidationError(`${name} is out of range`);
  return date.toISOString().replace(/\.\d{3}Z$/, "+00:00");
}

/**
 * A Slack webhook payload as Zulip renders it: blocks and attachments, else the text
 * (after `icon_emoji`) with Slack's formatting converted; the topic is the `topic` URL
 * parameter, else the payload's `channel` without its `#`/`@`. null: nothing to post
 * (Zulip answers success).
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
    // The plain text takes the links first, then the emphasis, as Zulip does.
    body = slackEmphasis(slackLinks(body.trim()));
  }
  if (body === "") return null;
  return { topic: where ?? "(no topic)", content: body };
}
