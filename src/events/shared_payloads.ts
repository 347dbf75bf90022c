import type { ApiEvent } from "./hub";

/** Objects one delivery shares between queues: a channel message to 1,000 users must not be copied 1,000 times. */
export interface SharedPayloads {
  /** The finalized message per content form. */
  messages: Map<boolean, Record<string, unknown>>;
  /** Per recipient-fields object: the event with those fields, and its finalized form per content form. */
  payloads: Map<object, { merged: ApiEvent; byForm: Map<boolean, ApiEvent> }>;
}

export function sharedMessage(shared: SharedPayloads, form: boolean, payload: ApiEvent): Record<string, unknown> {
  let message = shared.messages.get(form);
  if (!message) shared.messages.set(form, (message = finalizeMessage(form, payload.message as Record<string, unknown>)));
  return message;
}

/** Content per apply_markdown: HTML or the raw Markdown (Zulip's finalize_payload). */
function finalizeMessage(applyMarkdown: boolean, original: Record<string, unknown>): Record<string, unknown> {
  const message = { ...original };
  if ("rendered_content" in message) {
    if (applyMarkdown) {
      message.content = message.rendered_content;
      message.content_type = "text/html";
    } else {
      message.content_type = "text/x-markdown";
    }
    delete message.rendered_content;
  }
  return message;
}

