import type { Store } from "./db";

/** Why a bot is called for a message (Zulip's trigger of an outgoing-webhook event). */
export type OutgoingWebhookTrigger = "mention" | "direct_message";

/** One stored call not yet made: key space `outgoingWebhookCalls`, [messageId, botId] → trigger. */
export interface StoredOutgoingWebhookCall {
  messageId: number;
  botId: number;
  trigger: OutgoingWebhookTrigger;
}

/** Stores a call to make; inside the commit of its message. */
export function putOutgoingWebhookCall(store: Store, messageId: number, botId: number, trigger: OutgoingWebhookTrigger): void {
  store.dbs.outgoingWebhookCalls.put([messageId, botId], trigger);
}

/** A call made (or given up): inside a commit. */
export function removeOutgoingWebhookCall(store: Store, messageId: number, botId: number): void {
  store.dbs.outgoingWebhookCalls.remove([messageId, botId]);
}

/** Every call stored and not yet made, in message order. */
export function* storedOutgoingWebhookCalls(store: Store): Generator<StoredOutgoingWebhookCall> {
  for (const { key, value } of store.dbs.outgoingWebhookCalls.getRange()) {
    const [messageId, botId] = key as [number, number];
    yield { messageId, botId, trigger: value as OutgoingWebhookTrigger };
  }
}
