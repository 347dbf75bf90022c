import type { Hearth } from "../context";
import type { ServiceTrigger } from "./outgoing_webhook_services";

/**
 * What the send path tells once a message is durable, to work that must follow it
 * without the send depending on that work: the outgoing-webhook calls
 * (src/actions/outgoing_webhooks.ts, which sends the bots' replies and so depends on
 * the send). Listeners are registered per server when it starts.
 */
export interface MessageSent {
  messageId: number;
  /** The outgoing-webhook calls stored with the message. */
  serviceTriggers: readonly ServiceTrigger[];
}

export type MessageSentListener = (sent: MessageSent) => void;

const listenersOf = new WeakMap<Hearth, MessageSentListener[]>();

export function onMessageSent(h: Hearth, listener: MessageSentListener): void {
  let listeners = listenersOf.get(h);
  if (!listeners) listenersOf.set(h, (listeners = []));
  listeners.push(listener);
}

/** Called by the send once its message is durable; a listener's failure is logged, not passed to the sender. */
export function announceMessageSent(h: Hearth, sent: MessageSent): void {
  for (const listener of listenersOf.get(h) ?? []) {
    try {
      listener(sent);
    } catch (error) {
      console.error("After a message was sent:", error);
    }
  }
}
