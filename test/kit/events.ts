/**
 * The state+events consistency harness (Zulip's test_events `verify_action`):
 * register with every event type, perform an action over HTTP, apply the events each
 * user received to that user's registered state, and compare with a fresh register.
 * It also records exactly which users received which events.
 */
import { expect } from "bun:test";
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { type ApiClient, expectSchema, expectSuccess, type TestServer, type CastName, type Params } from "./index";
import { EventSchemas } from "../../src/schemas/events";
import { applyMessageEvent, recountUnread } from "./message-events";

export type State = Record<string, any>;
export type ApiEventJson = { id: number; type: string } & Record<string, any>;

/** Registers like a full client. Gravatar URLs are requested so events and state agree. */
export async function register(client: ApiClient, params: Params = {}): Promise<State> {
  const state = expectSuccess(
    await client.post("/register", {
      client_gravatar: false,
      client_capabilities: { user_settings_object: true, bulk_message_deletion: true, empty_topic_name: true },
      ...params,
    }),
  );
  // Remembered beside the state (a symbol key: structuredClone and comparisons skip it).
  (state as any)[INCLUDE_SUBSCRIBERS] = params.include_subscribers === true || params.include_subscribers === "true";
  return state;
}

/** Everything waiting in a queue, without blocking; acknowledges nothing. */
export async function drainEvents(client: ApiClient, queueId: string, lastEventId = -1): Promise<ApiEventJson[]> {
  const body = expectSuccess(await client.get("/events", { queue_id: queueId, last_event_id: lastEventId, dont_block: true }));
  return body.events.filter((e: ApiEventJson) => e.type !== "heartbeat");
}

const ROLE_OWNER = 100;
const ROLE_ADMIN = 200;
const ROLE_MODERATOR = 300;
const ROLE_GUEST = 600;

function findUser(state: State, userId: number): { list: any[]; index: number } | null {
  for (const key of ["realm_users", "realm_non_active_users", "cross_realm_bots"]) {
    const list = state[key] as any[] | undefined;
    const index = list?.findIndex((u) => u.user_id === userId) ?? -1;
    if (list && index >= 0) return { list, index };
  }
  return null;
}

function applyRole(target: Record<string, any>, role: number): void {
  target.role = role;
  target.is_owner = role === ROLE_OWNER;
  target.is_admin = role <= ROLE_ADMIN;
  target.is_guest = role === ROLE_GUEST;
}

export function applyEvent(state: State, event: ApiEventJson): void {
  applyCoreEvent(state, event);
  recountUnread(state);
}

/** The event types of users, bots, settings and presence. */
function applyCoreEvent(state: State, event: ApiEventJson): void {
  switch (event.type) {
    case "heartbeat":
      return;
    // Carries nothing: clients that show invitations fetch GET /invites again.
    case "invites_changed":
      return;
    case "realm_user": {
      const person = event.person;
      if (event.op === "add") {
        const found = findUser(state, person.user_id);
        if (found) found.list.splice(found.index, 1);
        state.realm_users.push(structuredClone(person));
        return;
      }
      if (event.op === "remove") {
        const found = findUser(state, person.user_id);
        if (found) found.list.splice(found.index, 1);
        return;
      }
      if (event.op === "update") {
        const found = findUser(state, person.user_id);
        if (!found) throw new Error(`realm_user update for unknown user ${person.user_id}`);
        const user = found.list[found.index];
        for (const [key, value] of Object.entries(person)) {
          if (key === "role") applyRole(user, value as number);
          else if (key === "custom_profile_field") {
            const field = value as { id: number; value: string | null; rendered_value?: string };
            user.profile_data ??= {};
            if (field.value === null) delete user.profile_data[field.id];
            else user.profile_data[field.id] = { value: field.value, ...(field.rendered_value !== undefined ? { rendered_value: field.rendered_value } : {}) };
          } else if (key === "avatar_source" || key === "avatar_url_medium") continue; // only the top-level self fields carry these
          else if (key === "new_email") user.email = value; // Zulip's name for a changed API email
          else user[key] = value;
        }
        if ("is_active" in person) {
          found.list.splice(found.index, 1);
          (person.is_active ? state.realm_users : state.realm_non_active_users).push(user);
        }
        if (person.user_id === state.user_id) {
          if ("full_name" in person) state.full_name = person.full_name;
          if ("delivery_email" in person && person.delivery_email !== null) state.delivery_email = person.delivery_email;
          if ("new_email" in person) state.email = person.new_email;
          if ("timezone" in person && state.user_settings) state.user_settings.timezone = person.timezone;
          for (const key of ["avatar_url", "avatar_source", "avatar_url_medium"]) if (key in person) state[key] = person[key];
          if ("role" in person) {
            const role = person.role as number;
            state.is_owner = role === ROLE_OWNER;
            state.is_admin = role <= ROLE_ADMIN;
            state.is_moderator = role <= ROLE_MODERATOR;
            state.is_guest = role === ROLE_GUEST;
            for (const key of ["can_create_streams", "can_create_public_streams", "can_create_private_streams", "can_subscribe_other_users", "can_invite_others_to_realm"]) {
              state[key] = role !== ROLE_GUEST;
            }
            state.can_create_web_public_streams = role === ROLE_OWNER;
          }
        }
        return;
      }
      throw new Error(`unknown realm_user op ${event.op}`);
    }
    case "realm_bot": {
      const bots = state.realm_bots as any[];
      const index = bots.findIndex((b) => b.user_id === event.bot.user_id);
      if (event.op === "add") {
        if (index >= 0) bots.splice(index, 1);
        bots.push(structuredClone(event.bot));
      } else if (event.op === "update") {
        if (index < 0) throw new Error(`realm_bot update for unknown bot ${event.bot.user_id}`);
        Object.assign(bots[index], event.bot);
      } else if (event.op === "delete" || event.op === "remove") {
        if (index >= 0) bots.splice(index, 1);
      } else throw new Error(`unknown realm_bot op ${event.op}`);
      return;
    }
    case "user_settings": {
      if (event.op !== "update") throw new Error(`unknown user_settings op ${event.op}`);
      if (state.user_settings) state.user_settings[event.property] = event.value;
      if (event.property in state && event.property !== "user_settings") state[event.property] = event.value;
      return;
    }
    case "subscription":
      applySubscriptionEvent(state, event);
      return;
    case "stream":
      applyStreamEvent(state, event);
      return;
    case "user_group":
      applyUserGroupEvent(state, event);
      return;
    case "default_streams":
      state.realm_default_streams = event.default_streams;
      return;
    case "default_stream_groups":
      state.realm_default_stream_groups = event.default_stream_groups;
      return;
    case "alert_words":
      state.alert_words = event.alert_words;
      return;
    case "onboarding_steps":
      state.onboarding_steps = event.onboarding_steps;
      return;
    case "muted_users":
      state.muted_users = event.muted_users;
      return;
    case "user_status": {
      const entry = { ...(state.user_status[event.user_id] ?? {}) };
      if ("away" in event) {
        if (event.away) entry.away = true;
        else delete entry.away;
      }
      if ("status_text" in event) {
        if (event.status_text) entry.status_text = event.status_text;
        else delete entry.status_text;
      }
      if ("emoji_name" in event) {
        for (const key of ["emoji_name", "emoji_code", "reaction_type"]) {
          if (event.emoji_name) entry[key] = event[key];
          else delete entry[key];
        }
      }
      if (Object.keys(entry).length > 0) state.user_status[event.user_id] = entry;
      else delete state.user_status[event.user_id];
      return;
    }
    case "drafts": {
      const list = state.drafts as any[];
      if (event.op === "add") list.push(...event.drafts);
      else if (event.op === "update") list[list.findIndex((d) => d.id === event.draft.id)] = event.draft;
      else if (event.op === "remove") list.splice(list.findIndex((d) => d.id === event.draft_id), 1);
      else throw new Error(`unknown drafts op ${event.op}`);
      list.sort((a, b) => b.timestamp - a.timestamp || b.id - a.id);
      return;
    }
    case "scheduled_messages": {
      // Zulip's web app: keyed by ID, listed soonest first; a remove of an unknown ID is a no-op.
      const list = state.scheduled_messages as any[];
      const drop = (id: number) => {
        const i = list.findIndex((m) => m.scheduled_message_id === id);
        if (i !== -1) list.splice(i, 1);
      };
      if (event.op === "add") list.push(...event.scheduled_messages);
      else if (event.op === "update") {
        drop(event.scheduled_message.scheduled_message_id);
        list.push(event.scheduled_message);
      } else if (event.op === "remove") drop(event.scheduled_message_id);
      else throw new Error(`unknown scheduled_messages op ${event.op}`);
      list.sort((a, b) => a.scheduled_delivery_timestamp - b.scheduled_delivery_timestamp || a.scheduled_message_id - b.scheduled_message_id);
      return;
    }
    case "reminders": {
      const list = state.reminders as any[];
      if (event.op === "add") list.push(...event.reminders);
      else if (event.op === "remove") {
        const i = list.findIndex((r) => r.reminder_id === event.reminder_id);
        if (i !== -1) list.splice(i, 1);
      } else throw new Error(`unknown reminders op ${event.op}`);
      list.sort((a, b) => a.scheduled_delivery_timestamp - b.scheduled_delivery_timestamp || a.reminder_id - b.reminder_id);
      return;
    }
    case "device": {
      const { id: _id, type: _type, op, device_id, ...fields } = event;
      if (op === "add") state.devices[String(device_id)] = { push_key_id: null, push_token_id: null, pending_push_token_id: null, push_token_last_updated_timestamp: null, push_registration_error_code: null };
      else if (op === "remove") delete state.devices[String(device_id)];
      else if (op === "update") Object.assign(state.devices[String(device_id)], fields);
      else throw new Error(`unknown device op ${op}`);
      return;
    }
    case "realm_emoji":
      if (event.op === "update") state.realm_emoji = event.realm_emoji;
      else if (event.op === "add") state.realm_emoji[event.emoji.id] = event.emoji;
      else if (event.op === "update_one") Object.assign(state.realm_emoji[event.emoji_id], event.data);
      else throw new Error(`unknown realm_emoji op ${event.op}`);
      return;
    case "navigation_view": {
      const list = state.navigation_views as any[];
      const index = list.findIndex((v) => v.fragment === (event.navigation_view?.fragment ?? event.fragment));
      if (event.op === "add") list.push(event.navigation_view);
      else if (event.op === "update") Object.assign(list[index], event.data);
      else if (event.op === "remove") list.splice(index, 1);
      else throw new Error(`unknown navigation_view op ${event.op}`);
      list.sort((a, b) => (a.fragment < b.fragment ? -1 : a.fragment > b.fragment ? 1 : 0));
      return;
    }
    case "realm_domains": {
      const list = state.realm_domains as any[];
      const domain = event.realm_domain?.domain ?? event.domain;
      const index = list.findIndex((d) => d.domain === domain);
      if (event.op === "add") list.push(event.realm_domain);
      else if (event.op === "change") Object.assign(list[index], event.realm_domain);
      else if (event.op === "remove") list.splice(index, 1);
      else throw new Error(`unknown realm_domains op ${event.op}`);
      list.sort((a, b) => (a.domain < b.domain ? -1 : 1));
      return;
    }
    case "realm": {
      // Zulip's apply_event: `update` sets realm_<property>; `update_dict` sets realm_<key> for each key of data.
      if (event.op === "update") state[`realm_${event.property}`] = event.value;
      else if (event.op === "update_dict") for (const [key, value] of Object.entries(event.data)) state[`realm_${key}`] = value;
      else throw new Error(`unexpected realm op ${event.op}`);
      return;
    }
    case "realm_user_settings_defaults":
      state.realm_user_settings_defaults[event.property] = event.value;
      return;
    case "realm_playgrounds":
      state.realm_playgrounds = event.realm_playgrounds;
      return;
    case "realm_linkifiers":
      state.realm_linkifiers = event.realm_linkifiers;
      return;
    case "channel_folder": {
      const list = state.channel_folders as any[];
      if (event.op === "add") list.push(event.channel_folder);
      else if (event.op === "update") Object.assign(list.find((f) => f.id === event.channel_folder_id), event.data);
      else if (event.op === "reorder") event.order.forEach((id: number, i: number) => (list.find((f) => f.id === id).order = i));
      else throw new Error(`unknown channel_folder op ${event.op}`);
      list.sort((a, b) => a.order - b.order || a.id - b.id);
      return;
    }
    case "muted_topics":
      if ("muted_topics" in state) state.muted_topics = event.muted_topics;
      return;
    case "user_topic": {
      if (!("user_topics" in state)) return;
      const list = state.user_topics as any[];
      const same = (t: any) => t.stream_id === event.stream_id && t.topic_name.toLowerCase() === event.topic_name.toLowerCase();
      const index = list.findIndex(same);
      if (index >= 0) list.splice(index, 1);
      if (event.visibility_policy !== 0) {
        const { id: _id, type: _type, ...topic } = event;
        list.splice(index >= 0 ? index : list.length, 0, topic);
      }
      return;
    }
    case "custom_profile_fields":
      state.custom_profile_fields = event.fields;
      return;
    case "saved_snippets": {
      const list = state.saved_snippets as any[];
      if (event.op === "add") list.push(event.saved_snippet);
      else if (event.op === "update") list[list.findIndex((x) => x.id === event.saved_snippet.id)] = event.saved_snippet;
      else if (event.op === "remove") list.splice(list.findIndex((x) => x.id === event.saved_snippet_id), 1);
      else throw new Error(`unknown saved_snippets op ${event.op}`);
      return;
    }
    case "presence": {
      if (event.presences) {
        // Modern event (simplified_presence_events): keyed by user ID, as with slim_presence.
        Object.assign(state.presences, structuredClone(event.presences));
      } else {
        const website = event.presence.website;
        state.presences[event.email] = { website, aggregated: { client: website.client, status: website.status, timestamp: website.timestamp } };
      }
      return;
    }
    case "attachment":
      // As Zulip's apply_event: no registered state holds attachments (GET /attachments does).
      return;
    default:
      if (applyMessageEvent(state, event)) return;
      throw new Error(`applyEvent does not know event type ${event.type}`);
  }
}

const CHANNEL_LISTS = ["subscriptions", "unsubscribed", "never_subscribed", "streams"] as const;

/** Every channel object in the state with this ID (a channel can be in `streams` and one subscription list). */
function channelEntries(state: State, streamId: number): any[] {
  const out: any[] = [];
  for (const key of CHANNEL_LISTS) for (const c of (state[key] as any[] | undefined) ?? []) if (c.stream_id === streamId) out.push(c);
  return out;
}

/** Whether the state was registered with subscriber lists (recorded by `register`, not part of the state). */
const includesSubscribers = (state: State) => (state as any)[INCLUDE_SUBSCRIBERS] === true;
const INCLUDE_SUBSCRIBERS = Symbol("include_subscribers");

/** Zulip's apply_event for `subscription` events, as clients keep subscriber lists and counts. */
function applySubscriptionEvent(state: State, event: ApiEventJson): void {
  const me = state.user_id as number;
  switch (event.op) {
    case "add":
      for (const sub of event.subscriptions) {
        state.unsubscribed = state.unsubscribed.filter((c: any) => c.stream_id !== sub.stream_id);
        state.never_subscribed = state.never_subscribed.filter((c: any) => c.stream_id !== sub.stream_id);
        const copy = structuredClone(sub);
        if (!includesSubscribers(state)) delete copy.subscribers;
        state.subscriptions.push(copy);
        for (const c of channelEntries(state, sub.stream_id)) c.subscriber_count = sub.subscriber_count;
      }
      return;
    case "remove":
      for (const { stream_id } of event.subscriptions) {
        const index = state.subscriptions.findIndex((c: any) => c.stream_id === stream_id);
        if (index < 0) throw new Error(`subscription remove for unknown channel ${stream_id}`);
        const [sub] = state.subscriptions.splice(index, 1);
        state.unsubscribed.push(sub);
        for (const c of channelEntries(state, stream_id)) {
          if (c.subscribers) c.subscribers = c.subscribers.filter((id: number) => id !== me);
          c.subscriber_count -= 1;
        }
      }
      return;
    case "update": {
      const sub = state.subscriptions.find((c: any) => c.stream_id === event.stream_id);
      if (!sub) throw new Error(`subscription update for unknown channel ${event.stream_id}`);
      sub[event.property] = event.value;
      return;
    }
    case "peer_add":
    case "peer_remove":
      for (const streamId of event.stream_ids) {
        for (const c of channelEntries(state, streamId)) {
          if (event.op === "peer_add") {
            if (c.subscribers) c.subscribers = [...new Set([...c.subscribers, ...event.user_ids])].sort((a: number, b: number) => a - b);
            c.subscriber_count += event.user_ids.length;
          } else {
            if (c.subscribers) c.subscribers = c.subscribers.filter((id: number) => !event.user_ids.includes(id));
            c.subscriber_count -= event.user_ids.length;
          }
        }
      }
      return;
    default:
      throw new Error(`unknown subscription op ${event.op}`);
  }
}

/** Zulip's apply_event for `stream` events. */
function applyStreamEvent(state: State, event: ApiEventJson): void {
  switch (event.op) {
    case "create":
      for (const stream of event.streams) {
        if (!state.streams.some((c: any) => c.stream_id === stream.stream_id)) state.streams.push(structuredClone(stream));
        const listed = ["subscriptions", "unsubscribed", "never_subscribed"].some((k) => state[k].some((c: any) => c.stream_id === stream.stream_id));
        if (!listed) state.never_subscribed.push({ ...structuredClone(stream), ...(includesSubscribers(state) ? { subscribers: [] } : {}) });
      }
      return;
    case "delete": {
      const ids = new Set<number>(event.stream_ids ?? event.streams.map((c: any) => c.stream_id));
      for (const key of CHANNEL_LISTS) state[key] = state[key].filter((c: any) => !ids.has(c.stream_id));
      return;
    }
    case "update":
      for (const c of channelEntries(state, event.stream_id)) {
        c[event.property] = event.value;
        if (event.property === "description") c.rendered_description = event.rendered_description;
        if (event.property === "invite_only") {
          c.history_public_to_subscribers = event.history_public_to_subscribers;
          c.is_web_public = event.is_web_public;
        }
      }
      return;
    default:
      throw new Error(`unknown stream op ${event.op}`);
  }
}

/** A client's `realm_user_groups` bookkeeping (Zulip's apply_event for `user_group`). */
function applyUserGroupEvent(state: State, event: ApiEventJson): void {
  const groups = state.realm_user_groups as any[];
  if (event.op === "add") {
    groups.push(structuredClone(event.group));
    groups.sort((a, b) => a.id - b.id);
    return;
  }
  const index = groups.findIndex((g) => g.id === event.group_id);
  if (index < 0) throw new Error(`user_group ${event.op} for unknown group ${event.group_id}`);
  const group = groups[index];
  const sorted = (ids: number[]) => [...new Set(ids)].sort((a, b) => a - b);
  switch (event.op) {
    case "remove":
      groups.splice(index, 1);
      return;
    case "update":
      Object.assign(group, structuredClone(event.data));
      return;
    case "add_members":
      group.members = sorted([...group.members, ...event.user_ids]);
      return;
    case "remove_members":
      group.members = group.members.filter((id: number) => !event.user_ids.includes(id));
      return;
    case "add_subgroups":
      group.direct_subgroup_ids = sorted([...group.direct_subgroup_ids, ...event.direct_subgroup_ids]);
      return;
    case "remove_subgroups":
      group.direct_subgroup_ids = group.direct_subgroup_ids.filter((id: number) => !event.direct_subgroup_ids.includes(id));
      return;
    default:
      throw new Error(`unknown user_group op ${event.op}`);
  }
}

/** Fields that legitimately differ between two registers. */
const VOLATILE = ["queue_id", "last_event_id", "server_timestamp", "result", "msg", "presence_last_update_id"];

export function normalizeState(state: State): State {
  const copy = structuredClone(state);
  for (const key of VOLATILE) delete copy[key];
  for (const key of ["realm_users", "realm_non_active_users", "cross_realm_bots", "realm_bots"]) {
    if (Array.isArray(copy[key])) copy[key].sort((a: any, b: any) => a.user_id - b.user_id);
  }
  for (const key of CHANNEL_LISTS) if (Array.isArray(copy[key])) copy[key].sort((a: any, b: any) => a.stream_id - b.stream_id);
  if (Array.isArray(copy.realm_default_streams)) copy.realm_default_streams.sort((a: number, b: number) => a - b);
  // A client's topic policies are a set: an event adds or replaces one where it will.
  if (Array.isArray(copy.user_topics)) copy.user_topics.sort((a: any, b: any) => a.stream_id - b.stream_id || a.topic_name.toLowerCase().localeCompare(b.topic_name.toLowerCase()));
  return copy;
}

/** For lists of objects: only the differing fields of the differing elements. */
function listDiff(applied: any[], fresh: any[]): any {
  if (applied.length !== fresh.length || applied.some((a) => typeof a !== "object" || a === null)) return { applied, fresh };
  const out: Record<number, Record<string, unknown>> = {};
  applied.forEach((a, i) => {
    for (const k of new Set([...Object.keys(a), ...Object.keys(fresh[i])])) {
      if (!Value.Equal(a[k], fresh[i][k])) (out[i] ??= { id: a.stream_id ?? a.user_id ?? a.id })[k] = { applied: a[k], fresh: fresh[i][k] };
    }
  });
  return out;
}

export interface VerifyOptions {
  /** Who registers (default: every seeded user). */
  viewers?: CastName[];
  /** Register parameters for every viewer. */
  registerParams?: Params;
}

export interface VerifyResult {
  /** The events each viewer received (heartbeats removed). */
  events: Record<string, ApiEventJson[]>;
  /** Event types each viewer received, e.g. { hamlet: ["realm_user"], ... }. */
  types: Record<string, string[]>;
}

/**
 * Register → act → apply each viewer's events to its state → compare with a fresh
 * register. Every event is checked against its schema when one exists.
 */
export async function verifyAction(s: TestServer, action: () => Promise<unknown>, options: VerifyOptions = {}): Promise<VerifyResult> {
  const viewers = options.viewers ?? (Object.keys(s.users) as CastName[]);
  const before = new Map<string, State>();
  for (const v of viewers) before.set(v, await register(s.as(v), options.registerParams));
  await action();
  const result: VerifyResult = { events: {}, types: {} };
  for (const v of viewers) {
    const state = before.get(v)!;
    const events = await drainEvents(s.as(v), state.queue_id);
    for (const e of events) {
      const schema: TSchema | undefined = (EventSchemas as Record<string, TSchema>)[e.type];
      if (schema) expectSchema(schema, e);
      applyEvent(state, e);
    }
    expect(events.map((e) => e.id)).toEqual([...events.map((e) => e.id)].sort((a, b) => a - b));
    result.events[v] = events;
    result.types[v] = events.map((e) => e.op ? `${e.type}/${e.op}` : e.type);
    const fresh = await register(s.as(v), options.registerParams);
    const applied = normalizeState(state);
    const expected = normalizeState(fresh);
    if (!Value.Equal(applied, expected)) {
      // Show only the differing keys, so a failure names the broken part.
      const diff: Record<string, { applied: unknown; fresh: unknown }> = {};
      for (const key of new Set([...Object.keys(applied), ...Object.keys(expected)])) {
        if (Value.Equal(applied[key], expected[key])) continue;
        diff[key] = Array.isArray(applied[key]) && Array.isArray(expected[key]) ? listDiff(applied[key], expected[key]) : { applied: applied[key], fresh: expected[key] };
      }
      throw new Error(`state of ${v} after events differs from a fresh register:\n${JSON.stringify(diff, null, 1).slice(0, 4000)}`);
    }
    expectSuccess(await s.as(v).delete("/events", { queue_id: fresh.queue_id }));
    expectSuccess(await s.as(v).delete("/events", { queue_id: state.queue_id }));
  }
  return result;
}

/**
 * Registers the named users and returns a collector of the events each received
 * since (heartbeats removed) — for asserting who got what, and that others got none.
 */
export async function captureEvents(s: TestServer, who: CastName[], params: Params = {}) {
  const queues = new Map<CastName, string>();
  for (const name of who) queues.set(name, (await register(s.as(name), params)).queue_id);
  return {
    async collect(): Promise<Record<string, ApiEventJson[]>> {
      const out: Record<string, ApiEventJson[]> = {};
      for (const [name, queueId] of queues) out[name] = await drainEvents(s.as(name), queueId);
      return out;
    },
  };
}
