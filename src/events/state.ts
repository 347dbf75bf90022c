import type { Hearth } from "../context";
import type { UserRecord } from "../store/users";
import type { ClientCapabilities } from "./capabilities";
import type { NarrowTerm } from "./narrow";

/**
 * The initial state of `POST /register`, assembled from parts. Each capability
 * defines the part it owns next to its code, with the event types that keep it
 * current; register computes only the parts the client's `fetch_event_types` asks
 * for (Zulip's `want(...)` in `fetch_initial_state_data`), so a bot asking for
 * `["message"]` never pays for the user list.
 *
 *     defineStatePart("subscriptions", ["subscription"], (ctx) => ({
 *       subscriptions: ..., unsubscribed: ..., never_subscribed: ...,
 *     }));
 *
 * A part defined with `{ placeholder: true }` gives the documented empty value of a
 * feature not built yet; the real definition replaces it whatever the import order.
 */
export interface StateContext {
  h: Hearth;
  /** null for an unauthenticated (spectator) register. */
  user: UserRecord | null;
  /** Whether the client asked for state kept current by this event type. */
  want(eventType: string): boolean;
  capabilities: ClientCapabilities;
  applyMarkdown: boolean;
  clientGravatar: boolean;
  includeSubscribers: boolean | "partial";
  slimPresence: boolean;
  presenceHistoryLimitDays: number | null;
  narrow: NarrowTerm[];
  allPublicStreams: boolean;
}

export type StatePartFetch = (ctx: StateContext) => Record<string, unknown>;

interface StatePart {
  name: string;
  /** Computed when any of these is wanted, or when the predicate says so. */
  when: readonly string[] | ((ctx: StateContext) => boolean);
  fetch: StatePartFetch;
  placeholder: boolean;
}

const parts = new Map<string, StatePart>();

export function defineStatePart(
  name: string,
  when: readonly string[] | ((ctx: StateContext) => boolean),
  fetch: StatePartFetch,
  options: { placeholder?: boolean } = {},
): void {
  const placeholder = options.placeholder ?? false;
  const existing = parts.get(name);
  if (existing && placeholder && !existing.placeholder) return;
  if (existing && !placeholder && !existing.placeholder) throw new Error(`State part ${name} is defined twice`);
  parts.set(name, { name, when, fetch, placeholder });
}

export function fetchInitialState(ctx: StateContext): Record<string, unknown> {
  const state: Record<string, unknown> = {};
  for (const part of parts.values()) {
    const wanted = typeof part.when === "function" ? part.when(ctx) : part.when.some((t) => ctx.want(t));
    if (wanted) Object.assign(state, part.fetch(ctx));
  }
  return state;
}
