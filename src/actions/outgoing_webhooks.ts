import { lookup as lookupCallback, type LookupAddress } from "node:dns";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type LookupFunction } from "node:net";
import type { Hearth } from "../context";
import { badRequest } from "../errors";
import { envNumber } from "../lib/env";
import type { RenderResult } from "../markdown";
import { getMessage, type MessageRecord } from "../store/messages";
import { REALM_ID } from "../store/realm";
import { BotType, getUser, type OutgoingWebhookService, type UserRecord } from "../store/users";
import { generateApiKey } from "../lib/credentials";
import { channelById } from "../views/message_channels";
import { formatMessage, messageNearUrl } from "../views/messages";
import { doSendMessage, MAX_MESSAGE_LENGTH, type MessageTarget } from "./messages";

/**
 * Outgoing-webhook bots (Zulip's bot type 3, https://zulip.com/api/outgoing-webhooks):
 * a message that mentions such a bot in a channel, or a direct message to it, is
 * posted to the bot's URL; what the URL answers is posted back as the bot's reply in
 * the same conversation. As in Zulip (its outgoing_webhooks queue worker), the call
 * happens after the send has answered, a connection failure or timeout is retried
 * three times, and when the call fails for good the conversation gets a "Failure!"
 * reply and the bot's owner a direct message saying why.
 *
 * Each call is stored with its message and removed once made, so a server stopped or
 * killed before then makes it at its next start (Zulip's queue server keeps its events
 * the same way); a call cut short by a crash may be made twice.
 */

/** Zulip's Service.GENERIC and Service.SLACK. */
export const ServiceInterface = { GENERIC: 1, SLACK: 2 } as const;
const INTERFACES: readonly number[] = Object.values(ServiceInterface);

/** Zulip's OUTGOING_WEBHOOK_TIMEOUT_SECONDS. */
const TIMEOUT_SECONDS = envNumber("HEARTH_OUTGOING_WEBHOOK_TIMEOUT_SECS", 10);
/** Zulip's MAX_REQUEST_RETRIES: retries after the first attempt. */
const MAX_RETRIES = 3;
/**
 * What is read of a service's answer: a reply is at most a message (10,000 characters),
 * so a bigger answer only matters as far as the owner's notice quotes it, and a server
 * sending without end must not fill this one's memory. Beyond it the answer is cut
 * (a JSON answer cut short fails as invalid JSON).
 */
const MAX_RESPONSE_BYTES = 1024 * 1024;
/** Zulip's User-Agent for these calls names its version; Hearth names itself. */
const USER_AGENT = "HearthOutgoingWebhook";

export function checkInterfaceType(value: number): number {
  if (!INTERFACES.includes(value)) throw badRequest("Invalid interface type");
  return value;
}

/** Zulip's check_url for `payload_url`: an absolute http(s) URL. */
export function checkPayloadUrl(value: string, name: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badRequest(`${name} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw badRequest(`${name} is not a URL`);
  return value;
}

/** A new bot's service: Zulip's add_service, with a fresh token for the receiver to check. */
export function newOutgoingWebhookService(name: string, payloadUrl: string, interfaceType: number): OutgoingWebhookService {
  return { name, base_url: checkPayloadUrl(payloadUrl, "payload_url"), interface: checkInterfaceType(interfaceType), token: generateApiKey() };
}

/** A bot's services as realm_bots and realm_bot events carry them (Zulip's get_service_dicts_for_bot). */
export function serviceDicts(bot: UserRecord): Record<string, unknown>[] {
  const service = bot.bot_type === BotType.OUTGOING_WEBHOOK ? bot.bot_service : undefined;
  return service ? [{ base_url: service.base_url, interface: service.interface, token: service.token }] : [];
}

type Trigger = "mention" | "direct_message";

/** One call a message asks for: which bot, and why. */
export interface ServiceTrigger {
  botId: number;
  trigger: Trigger;
}

/**
 * Zulip's get_service_bot_events: the outgoing-webhook bots a new message triggers.
 * Messages from bots trigger none (no loops between bots). In a channel a bot is
 * triggered by a mention, subscribed or not; in a direct message, by being a recipient.
 */
export function outgoingWebhookTriggers(h: Hearth, sender: UserRecord, target: MessageTarget, rendered: RenderResult, mentionedGroupMembers: ReadonlySet<number>): ServiceTrigger[] {
  if (sender.is_bot) return [];
  const trigger: Trigger = target.type === "stream" ? "mention" : "direct_message";
  const candidates = target.type === "stream" ? [...rendered.mentionedUserIds, ...mentionedGroupMembers] : target.userIds;
  const triggers: ServiceTrigger[] = [];
  for (const userId of new Set(candidates)) {
    const bot = getUser(h.store, userId);
    if (bot && bot.is_active && bot.bot_type === BotType.OUTGOING_WEBHOOK && bot.bot_service) triggers.push({ botId: bot.id, trigger });
  }
  return triggers;
}

/**
 * Inside the message's transaction: the calls it asks for are stored with it, so that
 * a crash before they are made (or finished) loses none; the next start makes them
 * (resumeOutgoingWebhookCalls), as Zulip's queue server keeps its events. A call cut
 * short by a crash may so be made twice.
 */
export function recordOutgoingWebhookCalls(h: Hearth, messageId: number, triggers: readonly ServiceTrigger[]): void {
  for (const { botId, trigger } of triggers) h.store.dbs.outgoingWebhookCalls.put([messageId, botId], trigger);
}

/** Once the message is committed: makes its calls, in the background. */
export function startOutgoingWebhookCalls(h: Hearth, messageId: number, triggers: readonly ServiceTrigger[]): void {
  for (const { botId, trigger } of triggers) pendingCalls(h).run(() => callService(h, botId, messageId, trigger));
}

/** At start: the calls stored but not finished when the server last stopped. */
export function resumeOutgoingWebhookCalls(h: Hearth): void {
  for (const { key, value } of h.store.dbs.outgoingWebhookCalls.getRange()) {
    const [messageId, botId] = key as [number, number];
    pendingCalls(h).run(() => callService(h, botId, messageId, value as Trigger));
  }
}

/**
 * Calls made at once, the rest waiting their turn: after downtime every stored call is
 * resumed together, and each may wait 10 s and retry three times. (Zulip's queue worker
 * makes them one by one.)
 */
const MAX_CONCURRENT_CALLS = 8;

class PendingCalls {
  private readonly running = new Set<Promise<void>>();
  private readonly waiting: (() => Promise<void>)[] = [];
  private readonly controller = new AbortController();

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get stopped(): boolean {
    return this.controller.signal.aborted;
  }

  run(call: () => Promise<void>): void {
    if (this.stopped) return;
    this.waiting.push(call);
    this.startWaiting();
  }

  private startWaiting(): void {
    while (!this.stopped && this.running.size < MAX_CONCURRENT_CALLS && this.waiting.length > 0) {
      const promise: Promise<void> = this.waiting
        .shift()!()
        .catch((error) => {
          if (!this.stopped) console.error("An outgoing webhook call failed:", error);
        })
        .finally(() => {
          this.running.delete(promise);
          this.startWaiting();
        });
      this.running.add(promise);
    }
  }

  /** Resolves once every call started so far has ended. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  /** Aborts the calls under way: they stay stored, with those still waiting, for the next start. */
  async stop(): Promise<void> {
    this.controller.abort();
    this.waiting.length = 0;
    await this.drain();
  }
}

const calls = new WeakMap<Hearth, PendingCalls>();

function pendingCalls(h: Hearth): PendingCalls {
  let pending = calls.get(h);
  if (!pending) calls.set(h, (pending = new PendingCalls()));
  return pending;
}

/** Waits for the outgoing-webhook calls under way (tests). */
export function drainOutgoingWebhooks(h: Hearth): Promise<void> {
  return pendingCalls(h).drain();
}

/** At shutdown: calls under way are cut short, to be made again at the next start. */
export function stopOutgoingWebhooks(h: Hearth): Promise<void> {
  return pendingCalls(h).stop();
}

interface Call {
  bot: UserRecord;
  service: OutgoingWebhookService;
  message: MessageRecord;
  trigger: Trigger;
}

/**
 * One stored call: made, then removed from the store — unless a stopping server cut
 * it short, in which case the next start makes it again.
 */
async function callService(h: Hearth, botId: number, messageId: number, trigger: Trigger): Promise<void> {
  let outcome: "done" | "cut short" = "done";
  try {
    outcome = await makeCall(h, botId, messageId, trigger);
  } finally {
    // A call that failed unexpectedly is dropped too (and logged): retrying it at every start would fail the same way.
    if (outcome === "done") await h.store.commit(() => h.store.dbs.outgoingWebhookCalls.remove([messageId, botId]));
  }
}

/** Zulip's OutgoingWebhookWorker.consume and do_rest_call for one bot and message. */
async function makeCall(h: Hearth, botId: number, messageId: number, trigger: Trigger): Promise<"done" | "cut short"> {
  const bot = getUser(h.store, botId);
  const message = getMessage(h.store, messageId);
  // A bot deactivated (or a message deleted) since the send has nothing to call.
  if (!bot?.bot_service || !bot.is_active || !message) return "done";
  const call: Call = { bot, service: bot.bot_service, message, trigger };
  const pending = pendingCalls(h);
  if (call.service.interface === ServiceInterface.SLACK && message.type !== "stream") {
    await failWithMessage(h, call, "Slack outgoing webhooks don't support direct messages.");
    return "done";
  }
  let failure = "";
  for (let attempt = 0; attempt <= MAX_RETRIES; attempt++) {
    let answer: { status: number; body: Uint8Array };
    const timeout = AbortSignal.timeout(TIMEOUT_SECONDS * 1000);
    try {
      answer = await postOnce(call.service.base_url, requestBody(h, call), AbortSignal.any([pending.signal, timeout]), h.config.outgoingWebhooksToPrivateNetworks === true);
    } catch (error) {
      if (pending.stopped) return "cut short";
      if (error instanceof PrivateNetworkRefused) {
        // What Zulip's outgoing proxy (Smokescreen) answers for such an address.
        await processResponse(h, call, 407, new Uint8Array());
        return "done";
      }
      // Zulip retries both a timeout and a connection error, and says which one it was.
      failure = timeout.aborted ? `Request timed out after ${TIMEOUT_SECONDS} seconds.` : "A connection error occurred. Is my bot server down?";
      continue;
    }
    if (pending.stopped) return "cut short";
    await processResponse(h, call, answer.status, answer.body);
    return "done";
  }
  await failWithMessage(h, call, "Bot is unavailable");
  await notifyBotOwner(h, call, { failureMessage: failure });
  return "done";
}

/** A call's host is, or resolved when the connection was made to, an internal address (see connectionLookup). */
class PrivateNetworkRefused extends Error {}

/**
 * The resolver a call's connection uses: it refuses a name that resolves to an
 * internal address, at the moment of connecting, unless private networks are allowed:
 * checking the name before the request would not do, as it could resolve elsewhere by
 * the time the request connects (DNS rebinding). Node's resolver signature, as
 * node:http's `lookup` option takes it. An address written in the URL is never looked
 * up (postOnce checks it with isInternalAddressUrl).
 */
export function connectionLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    const family = options?.family === "IPv4" ? 4 : options?.family === "IPv6" ? 6 : (options?.family ?? 0);
    lookupCallback(hostname, { all: true, family }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, "", 0);
      if (!allowPrivate && addresses.some(isInternalAddress)) return callback(new PrivateNetworkRefused(`${hostname} resolves to an internal address`), "", 0);
      if (options?.all) (callback as unknown as (error: null, all: LookupAddress[]) => void)(null, addresses);
      else callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/**
 * One POST to a bot's URL (node:http, for the connection-time address check of
 * connectionLookup): the status and at most MAX_RESPONSE_BYTES of the answer; the rest
 * is not read. Redirects are not followed.
 */
function postOnce(url: string, { headers, body }: { headers: Record<string, string>; body: string }, signal: AbortSignal, allowPrivate: boolean): Promise<{ status: number; body: Uint8Array }> {
  return new Promise((resolve, reject) => {
    if (!allowPrivate && isInternalAddressUrl(url)) return reject(new PrivateNetworkRefused(`${url} is an internal address`));
    const target = new URL(url);
    const send = target.protocol === "https:" ? httpsRequest : httpRequest;
    const options = { method: "POST", headers: { ...headers, "content-length": String(Buffer.byteLength(body)) }, lookup: connectionLookup(allowPrivate), signal };
    const request = send(target, options, (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let finished = false;
      const finish = () => {
        if (finished) return;
        finished = true;
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) });
      };
      response.on("data", (chunk: Buffer) => {
        if (finished) return;
        chunks.push(chunk.subarray(0, MAX_RESPONSE_BYTES - size));
        size += Math.min(chunk.length, MAX_RESPONSE_BYTES - size);
        if (size < MAX_RESPONSE_BYTES) return;
        finish();
        response.destroy();
      });
      response.on("end", finish);
      response.on("error", (error) => (finished ? undefined : reject(error)));
      // Cut off before its end (a timeout, the server going away): not an answer.
      response.on("close", () => (finished ? undefined : reject(new Error("The connection closed before the answer ended"))));
    });
    request.on("error", reject);
    request.end(body);
  });
}

/** The request of each interface (Zulip's GenericOutgoingWebhookService and SlackOutgoingWebhookService make_request). */
function requestBody(h: Hearth, call: Call): { headers: Record<string, string>; body: string } {
  const { bot, service, message, trigger } = call;
  if (service.interface === ServiceInterface.SLACK) {
    const sender = getUser(h.store, message.sender_id);
    const form = new URLSearchParams([
      ["token", service.token],
      ["team_id", `T${REALM_ID}`],
      ["team_domain", h.realmHost()],
      ["channel_id", `C${message.channel_id}`],
      ["channel_name", channelById(h, message.channel_id!)?.name ?? ""],
      ["thread_ts", String(message.timestamp)],
      ["timestamp", String(message.timestamp)],
      ["user_id", `U${message.sender_id}`],
      ["user_name", sender?.full_name ?? ""],
      ["text", message.content],
      ["trigger_word", trigger],
      ["service_id", String(bot.id)],
    ]);
    return { headers: { "content-type": "application/x-www-form-urlencoded", "user-agent": USER_AGENT }, body: form.toString() };
  }
  // The message as Zulip's finalize_payload gives it to a service: Markdown content,
  // with the HTML beside it, and every avatar URL spelled out.
  const payload = formatMessage(h, bot, message, 0, { applyMarkdown: false, allowEmptyTopicName: true });
  delete payload.flags;
  payload.rendered_content = message.rendered_content;
  const data = { data: message.content, message: payload, bot_email: bot.email, bot_full_name: bot.full_name, token: service.token, trigger };
  return { headers: { "content-type": "application/json", "user-agent": USER_AGENT }, body: JSON.stringify(data) };
}

/** Zulip's do_rest_call past the request: a reply for a success, a failure report otherwise. */
async function processResponse(h: Hearth, call: Call, status: number, body: Uint8Array): Promise<void> {
  if (status < 200 || status > 299) {
    await failWithMessage(h, call, `Third party responded with ${status}`);
    // The notice is a message, at most 10,000 characters: a bigger answer is quoted only as far as that.
    await notifyBotOwner(h, call, { statusCode: status, responseContent: pythonBytesRepr(body.subarray(0, MAX_MESSAGE_LENGTH)) });
    return;
  }
  const text = new TextDecoder().decode(body);
  let content: string | null;
  try {
    content = replyContent(call.service.interface, text);
    if (content === null || content.trim() === "") return;
    await sendReply(h, call, content);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    await failWithMessage(h, call, reason);
    const failureMessage = `The outgoing webhook server attempted to send a message in Zulip, but that request resulted in the following error:\n> ${reason}`;
    await notifyBotOwner(h, call, { failureMessage, responseContent: pythonStrRepr(text) });
  }
}

/** What a service answered to post, if anything (Zulip's process_success_response and process_success). */
function replyContent(interfaceType: number, text: string): string | null {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw badRequest("Invalid JSON in response");
  }
  // zulip_botserver before 2021-05 answered "" for "no reply".
  if (json === "") return null;
  if (json === null || typeof json !== "object" || Array.isArray(json)) throw badRequest("Invalid response format");
  const answer = json as Record<string, unknown>;
  if (interfaceType === ServiceInterface.SLACK) return "text" in answer ? String(answer.text) : null;
  if (answer.response_not_required) return null;
  // `response_string` is Zulip's older, deprecated name for `content`.
  if ("response_string" in answer) return String(answer.response_string);
  if ("content" in answer) return String(answer.content);
  return null;
}

/** The bot's message in the conversation that triggered it (Zulip's send_response_message; no channel access check). */
async function sendReply(h: Hearth, call: Call, content: string): Promise<void> {
  const bot = getUser(h.store, call.bot.id);
  if (!bot || !bot.is_active) return;
  const m = call.message;
  let target: MessageTarget;
  if (m.type === "stream") {
    const channel = channelById(h, m.channel_id!);
    // A channel gone meanwhile leaves nowhere to answer (Zulip drops the reply too).
    if (!channel || channel.is_archived) return;
    target = { type: "stream", channel, topic: m.topic };
  } else {
    target = { type: "private", userIds: m.dm_user_ids! };
  }
  await doSendMessage(h, bot, { target, content, client: "OutgoingWebhookResponse", readBySender: true });
}

/** Zulip's fail_with_message: "Failure! …" from the bot where it was triggered. */
async function failWithMessage(h: Hearth, call: Call, reason: string): Promise<void> {
  await sendReply(h, call, `Failure! ${reason}`);
}

/** Zulip's notify_bot_owner: a direct message from the bot to its owner saying what went wrong. */
async function notifyBotOwner(h: Hearth, call: Call, why: { statusCode?: number; responseContent?: string; failureMessage?: string }): Promise<void> {
  const bot = getUser(h.store, call.bot.id);
  const owner = bot?.bot_owner_id == null ? undefined : getUser(h.store, bot.bot_owner_id);
  if (!bot || !bot.is_active || !owner) return;
  let content = `[A message](${messageNearUrl(h, call.message)}) to your bot @_**${bot.full_name}** triggered an outgoing webhook.`;
  if (why.failureMessage) content += `\n${why.failureMessage}`;
  else if (why.statusCode === 407) content += "\nThe URL configured for the webhook is for a private or disallowed network.";
  else if (why.statusCode !== undefined) content += `\nThe webhook got a response with status code *${why.statusCode}*.`;
  if (why.responseContent) content += `\nThe response contains the following payload:\n\`\`\`\n${why.responseContent}\n\`\`\``;
  const userIds = [...new Set([bot.id, owner.id])].sort((a, b) => a - b);
  await doSendMessage(h, bot, { target: { type: "private", userIds }, content, client: "OutgoingWebhookResponse", readBySender: true });
}

/**
 * Whether the URL's host is an address (not a name) that is loopback, private,
 * link-local or otherwise internal: a bot's URL must not let whoever may create bots
 * make the server probe its own network (Zulip sends these calls through Smokescreen,
 * which refuses such addresses). Names are checked as they resolve (connectionLookup).
 */
export function isInternalAddressUrl(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  const family = isIP(host);
  return family !== 0 && isInternalAddress({ address: host, family });
}

function isInternalAddress({ address, family }: { address: string; family: number }): boolean {
  return family === 6 ? isInternalIpv6(address) : isInternalIpv4(address);
}

function isInternalIpv4(address: string): boolean {
  const [a, b] = address.split(".").map(Number);
  return (
    a === 0 || a === 10 || a === 127 || (a === 100 && b >= 64 && b <= 127) || (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 198 && (b === 18 || b === 19)) || a >= 224
  );
}

function isInternalIpv6(address: string): boolean {
  const words = ipv6Words(address.toLowerCase());
  if (!words) return true; // Not an address this check understands: refused rather than risked.
  const [w0, w1, w2, w3, w4, w5, w6, w7] = words;
  const embeddedIpv4 = () => `${w6 >> 8}.${w6 & 0xff}.${w7 >> 8}.${w7 & 0xff}`;
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible, :: and ::1 among them), 64:ff9b::a.b.c.d (NAT64).
  if (w0 === 0 && w1 === 0 && w2 === 0 && w3 === 0 && w4 === 0 && (w5 === 0xffff || w5 === 0)) return w5 === 0 && w6 === 0 ? true : isInternalIpv4(embeddedIpv4());
  if (w0 === 0x64 && w1 === 0xff9b && w2 === 0 && w3 === 0 && w4 === 0 && w5 === 0) return isInternalIpv4(embeddedIpv4());
  // fc00::/7 unique local, fe80::/10 link-local, ff00::/8 multicast.
  return (w0 & 0xfe00) === 0xfc00 || (w0 & 0xffc0) === 0xfe80 || (w0 & 0xff00) === 0xff00;
}

/** The eight 16-bit words of an IPv6 address (`::` expanded, a trailing dotted IPv4 converted), or null. */
function ipv6Words(address: string): number[] | null {
  let text = address.split("%")[0];
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const words = [...head, ...Array(halves.length === 2 ? missing : 0).fill("0"), ...tail].map((w) => (/^[0-9a-f]{1,4}$/.test(w) ? parseInt(w, 16) : NaN));
  return words.some(Number.isNaN) ? null : words;
}

/**
 * Python's repr() of the response body, as Zulip's notice quotes it (`b'…'` for the
 * bytes of an error response, `'…'` for the text of an unusable success).
 */
function pythonBytesRepr(bytes: Uint8Array): string {
  if (bytes.length === 0) return "";
  let out = "";
  for (const byte of bytes) {
    if (byte === 0x5c) out += "\\\\";
    else if (byte === 0x27) out += "\\'";
    else if (byte === 0x0a) out += "\\n";
    else if (byte === 0x0d) out += "\\r";
    else if (byte === 0x09) out += "\\t";
    else if (byte < 0x20 || byte > 0x7e) out += `\\x${byte.toString(16).padStart(2, "0")}`;
    else out += String.fromCharCode(byte);
  }
  return `b'${out}'`;
}

function pythonStrRepr(text: string): string {
  if (text === "") return "";
  const escaped = text.replace(/\\/g, "\\\\").replace(/'/g, "\\'").replace(/\n/g, "\\n").replace(/\r/g, "\\r").replace(/\t/g, "\\t");
  return `'${escaped}'`;
}
