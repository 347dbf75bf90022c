import type { Hearth } from "../context";
import type { UserRecord } from "../store/users";
import type { ClientCapabilities } from "../events/capabilities";
import type { NarrowTerm } from "../events/narrow";

/**
 * The initial state of `POST /register`, assembled from parts. Each part is a value
 * defined next to the code it reads, with the event types that keep it current:
 *
 *     export const subscriptionsPart = statePart("subscriptions", ["subscription"], (ctx) => ({
 *       subscriptions: ..., unsubscribed: ..., never_subscribed: ...,
 *     }));
 *
 * and one list (src/views/register_state.ts) names every part in the order register
 * gives them. Register computes only the parts the client's `fetch_event_types` asks
 * for (Zulip's `want(...)` in `fetch_initial_state_data`), so a bot asking for
 * `["message"]` never pays for the user list.
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

export interface StatePart {
  name: string;
  /** Computed when any of these event types is wanted, or when the predicate says so. */
  when: readonly string[] | ((ctx: StateContext) => boolean);
  fetch: StatePartFetch;
}

export function statePart(name: string, when: readonly string[] | ((ctx: StateContext) => boolean), fetch: StatePartFetch): StatePart {
  return { name, when, fetch };
}

/** The state of every wanted part of `parts`, in their order (later parts win a shared key). */
export function fetchInitialState(parts: readonly StatePart[], ctx: StateContext): Record<string, unknown> {
  const state: Record<string, unknown> = {};
  for (const part of parts) if (isWanted(part, ctx)) Object.assign(state, part.fetch(ctx));
  return state;
}

function isWanted(part: StatePart, ctx: StateContext): boolean {
  return typeof part.when === "function" ? part.when(ctx) : part.when.some((t) => ctx.want(t));
}
