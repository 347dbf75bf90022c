import type { Hearth } from "../context";
import { badRequest } from "../errors";
import { envNumber } from "../lib/env";
import { commit } from "../events/commit";
import { getMessage, type MessageRecord } from "../store/messages";
import { REALM_ID } from "../store/realm";
import { removeOutgoingWebhookCall, storedOutgoingWebhookCalls, type OutgoingWebhookTrigger } from "../store/outgoing_webhook_calls";
import { getUser, type OutgoingWebhookService, type UserRecord } from "../store/users";
import { channelById } from "../views/message_channels";
import { formatMessage, messageNearUrl } from "../views/messages";
import { MAX_MESSAGE_LENGTH, type MessageTarget } from "./message_content";
import { onMessageSent } from "./message_sent";
import { postOnce, PrivateNetworkRefused } from "./outgoing_webhook_http";
import { doSendMessage } from "./message_send";
import { ServiceInterface } from "./outgoing_webhook_services";

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
 * the same way); a call cut short by a crash may be made twice. Which calls a message
 * asks for, and storing them, is the send's part (outgoing_webhook_services.ts); this
 * module learns of them through onMessageSent, so that it may send the bots' replies
 * without the send depending on it.
 */

type Trigger = OutgoingWebhookTrigger;

/** Zulip's OUTGOING_WEBHOOK_TIMEOUT_SECONDS. */
const TIMEOUT_SECONDS = envNumber("HEARTH_OUTGOING_WEBHOOK_TIMEOUT_SECS", 10);
/** Zulip's MAX_REQUEST_RETRIES: retries after the first attempt. */
const MAX_RETRIES = 3;
/** Zulip's User-Agent for these calls names its version; Hearth names itself. */
const USER_AGENT = "HearthOutgoingWebhook";

const listening = new WeakSet<Hearth>();

/**
 * At start: makes the calls stored but not finished when the server last stopped, and
 * from now on each new message's calls once it is committed, in the background.
 */
export function resumeOutgoingWebhookCalls(h: Hearth): void {
  if (!listening.has(h)) {
    listening.add(h);
    onMessageSent(h, ({ messageId, serviceTriggers }) => {
      for (const { botId, trigger } of serviceTriggers) pendingCalls(h).run(() => callService(h, botId, messageId, trigger));
    });
  }
  for (const { messageId, botId, trigger } of storedOutgoingWebhookCalls(h.store)) pendingCalls(h).run(() => callService(h, botId, messageId, trigger));
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
    if (outcome === "done") await commit(h, () => removeOutgoingWebhookCall(h.store, messageId, botId));
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
