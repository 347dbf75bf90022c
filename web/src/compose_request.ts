/**
 * How other parts of the page put text into the compose box (quote and reply): the
 * box watches this signal, switches to the conversation and adds the text.
 */
import { signal } from "@preact/signals";
import type { DraftTarget } from "./drafts";

export const composeRequest = signal<{ target: DraftTarget; text: string; seq: number } | null>(null);
let seq = 0;

export function openCompose(target: DraftTarget, text: string): void {
  composeRequest.value = { target, text, seq: ++seq };
}
