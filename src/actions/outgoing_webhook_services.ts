import type { Hearth } from "../context";
import { badRequest } from "../errors";
import type { RenderResult } from "../markdown";
import { putOutgoingWebhookCall, type OutgoingWebhookTrigger } from "../store/outgoing_webhook_calls";
import { BotType, getUser, type OutgoingWebhookService, type UserRecord } from "../store/users";
import type { MessageTarget } from "./message_content";
import { generateApiKey } from "../lib/credentials";

/**
 * Outgoing-webhook bots' services, and which of them a new message calls: what bot
 * management and the send path need, without the calls themselves (made by
 * src/actions/outgoing_webhooks.ts once the send is committed).
 */

/** Zulip's Service.GENERIC and Service.SLACK. */
export const ServiceInterface = { GENERIC: 1, SLACK: 2 } as const;
const INTERFACES: readonly number[] = Object.values(ServiceInterface);

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

/** One call a message asks for: which bot, and why. */
export interface ServiceTrigger {
  botId: number;
  trigger: OutgoingWebhookTrigger;
}

/**
 * Zulip's get_service_bot_events: the outgoing-webhook bots a new message triggers.
 * Messages from bots trigger none (no loops between bots). In a channel a bot is
 * triggered by a mention, subscribed or not; in a direct message, by being a recipient.
 */
export function outgoingWebhookTriggers(h: Hearth, sender: UserRecord, target: MessageTarget, rendered: RenderResult, mentionedGroupMembers: ReadonlySet<number>): ServiceTrigger[] {
  if (sender.is_bot) return [];
  // A channel message mentioning nobody (most): nothing to look up.
  if (target.type === "stream" && rendered.mentionedUserIds.size === 0 && mentionedGroupMembers.size === 0) return [];
  const trigger: OutgoingWebhookTrigger = target.type === "stream" ? "mention" : "direct_message";
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
  for (const { botId, trigger } of triggers) putOutgoingWebhookCall(h.store, messageId, botId, trigger);
}
