/**
 * Subscribing (Zulip's bulk_add_subscriptions; unsubscribing is in unsubscribe.ts),
 * creating the channels a subscribe request names, and the
 * peer events that keep every client's subscriber lists right.
 */
import type { Hearth } from "../context";
import type { SubscriptionView } from "../schemas/channels";
import { commit, type Transaction } from "../events/commit";
import { badRequest } from "../errors";
import { getUser, type UserRecord, isGuest } from "../store/users";
import { getChannel, getChannelByName, type ChannelRecord } from "../store/channels";
import { getSubscription, isSubscribed, putSubscription, subscribedChannelIds, userSubscriptionRows, type SubscriptionRecord } from "../store/subscriptions";
import { defaultChannelIds } from "../store/default_channels";
import { canAddSubscribers, canSubscribeSelf, channelViewerIds, hasMetadataAccess } from "../access/channels";
import { activeSubscriberIds, formatChannel, formatSubscription, pickChannelColor } from "../views/channels";
import { checkChannelDescription, checkChannelName, isHexColor } from "./channel_checks";
import { planNewChannel, writeNewChannel, type ChannelCreationSettings } from "./channels";
import { notifyDefaultChannels } from "./default_channels";
import { announceNewChannels, sendNewSubscriptionMessages } from "./subscription_messages";
import { aboutChannel } from "./channels_archived";
import { visibleUserByEmail } from "../access/users";

/**
 * Principals as user IDs or emails; unknown and deactivated users are a 400 (FL 208).
 * A real address counts only where the actor may see it, so the answer never
 * confirms a hidden email (Zulip looks principals up with access_user_by_email).
 */
export function resolvePrincipals(h: Hearth, actor: UserRecord, principals: readonly (string | number)[]): UserRecord[] {
  const users = new Map<number, UserRecord>();
  for (const principal of principals) {
    const user = typeof principal === "number" ? getUser(h.store, principal) : visibleUserByEmail(h, actor, principal);
    if (!user || !user.is_active || user.is_system_bot) {
      throw badRequest(`User not authorized to execute queries on behalf of '${principal}'`);
    }
    users.set(user.id, user);
  }
  return [...users.values()];
}

// ---------------------------------------------------------------------------
// Subscribing (and creating channels on the way)

export interface SubscribeInput {
  /** `color`: the new subscriptions' color (Zulip's color_map); otherwise one is picked. */
  subscriptions: { name: string; description?: string; color?: string }[];
  principals?: (string | number)[];
  authorizationErrorsFatal: boolean;
  announce: boolean;
  /** FL 397; default true: Notification Bot tells users whom someone else subscribed. */
  sendNewSubscriptionMessages?: boolean;
  creation: ChannelCreationSettings;
}

export interface SubscribeResult {
  subscribed: Record<string, string[]>;
  already_subscribed: Record<string, string[]>;
  unauthorized?: string[];
  /** FL 397: whether the Notification Bot messages went out (false past the bulk limit); only when they were asked for. */
  new_subscription_messages_sent?: boolean;
}

interface PlannedChannel {
  name: string;
  existing: ChannelRecord | null;
  description: string;
  color?: string;
}

function newSubscriptionRecord(h: Hearth, channel: ChannelRecord, userId: number, color?: string): SubscriptionRecord {
  // A subscription taken up again keeps its old settings, its color included (as in Zulip).
  const previous = getSubscription(h.store, channel.id, userId);
  if (previous) return { ...previous, active: true };
  const used: string[] = [];
  for (const row of userSubscriptionRows(h.store, userId)) {
    const sub = getSubscription(h.store, row.channelId, userId);
    if (sub?.active) used.push(sub.color);
  }
  return {
    channel_id: channel.id,
    user_id: userId,
    active: true,
    color: color ?? pickChannelColor(used),
    is_muted: false,
    pin_to_top: false,
    desktop_notifications: null,
    email_notifications: null,
    wildcard_mentions_notify: null,
    push_notifications: channel.default_push_notifications ? true : null,
    audible_notifications: null,
  };
}

/** POST /users/me/subscriptions. */
export async function checkSubscribe(h: Hearth, actor: UserRecord, input: SubscribeInput): Promise<SubscribeResult> {
  return (await doSubscribe(h, actor, input, planSubscribe(h, actor, input))).result;
}

/** A checked subscribe plan: its writes and events in one transaction, then its messages and answer. */
async function doSubscribe(h: Hearth, actor: UserRecord, input: SubscribeInput, plan: SubscribePlan): Promise<{ result: SubscribeResult; outcome: SubscribeOutcome }> {
  const outcome = await commit(h, (tx) => {
    const written = writeSubscriptions(h, plan, input);
    notifySubscribed(tx, h, input, plan, written);
    return written;
  });
  return { result: await finishSubscribe(h, actor, input, plan, outcome), outcome };
}

interface SubscribePlan {
  principals: UserRecord[];
  targets: { channel: ChannelRecord | null; plan: PlannedChannel; newRecord?: Omit<ChannelRecord, "id"> }[];
  unauthorized: string[];
  /** Who could see each existing channel before, so that newly admitted users get its `stream create`. */
  sawBefore: Map<number, Set<number>>;
}

interface SubscribeOutcome {
  created: ChannelRecord[];
  added: { channel: ChannelRecord; userIds: number[] }[];
  already: { channel: ChannelRecord; userIds: number[] }[];
}

/** Every check of a subscribe request, nothing written: afterwards only the writes remain. */
export function planSubscribe(h: Hearth, actor: UserRecord, input: SubscribeInput): SubscribePlan {
  const principals = input.principals && input.principals.length > 0 ? resolvePrincipals(h, actor, input.principals) : [actor];
  const addingOthers = principals.some((u) => u.id !== actor.id);

  const planned = new Map<string, PlannedChannel>();
  for (const entry of input.subscriptions) {
    const name = checkChannelName(entry.name);
    const description = checkChannelDescription(entry.description ?? "");
    if (entry.color !== undefined && !isHexColor(entry.color)) throw badRequest("color is not a valid hex color code");
    const key = name.toLowerCase();
    if (planned.has(key)) continue;
    planned.set(key, { name, description, color: entry.color?.toLowerCase(), existing: getChannelByName(h.store, name) ?? null });
  }

  const unauthorized: string[] = [];
  const targets: SubscribePlan["targets"] = [];
  for (const plan of planned.values()) {
    const channel = plan.existing;
    if (!channel) {
      targets.push({ channel: null, plan, newRecord: planNewChannel(h, actor, plan.name, plan.description, input.creation) });
      continue;
    }
    // A private channel the caller cannot reach is reported under its requested name
    // without confirming it exists. Archived channels take subscribers as any other (FL 362).
    if (!canSubscribeSelf(h, actor, channel)) {
      if (input.authorizationErrorsFatal) throw badRequest(`Unable to access channel (${plan.name}).`);
      unauthorized.push(plan.name);
      continue;
    }
    if (addingOthers && !canAddSubscribers(h, actor, channel)) throw badRequest("Insufficient permission");
    targets.push({ channel, plan });
  }
  if (addingOthers && isGuest(actor)) throw badRequest("Insufficient permission");

  const sawBefore = new Map<number, Set<number>>();
  for (const t of targets) {
    if (t.channel) sawBefore.set(t.channel.id, new Set(principals.filter((u) => hasMetadataAccess(h, u, t.channel!)).map((u) => u.id)));
  }
  return { principals, targets, unauthorized, sawBefore };
}

/** The writes of a subscribe request; call inside `commit`. */
export function writeSubscriptions(h: Hearth, { principals, targets }: SubscribePlan, input: SubscribeInput): SubscribeOutcome {
  const created: ChannelRecord[] = [];
  const added: { channel: ChannelRecord; userIds: number[] }[] = [];
  const already: { channel: ChannelRecord; userIds: number[] }[] = [];
  for (const t of targets) {
    let channel = t.channel;
    if (!channel) {
      channel = writeNewChannel(h, t.newRecord!, input.creation.is_default_stream);
      created.push(channel);
    }
    const newIds: number[] = [];
    const oldIds: number[] = [];
    for (const u of principals) {
      if (isSubscribed(h.store, channel.id, u.id)) {
        oldIds.push(u.id);
        continue;
      }
      putSubscription(h.store, newSubscriptionRecord(h, channel, u.id, t.plan.color));
      newIds.push(u.id);
    }
    added.push({ channel, userIds: newIds });
    already.push({ channel, userIds: oldIds });
  }
  return { created, added, already };
}

/** In a subscribe request's transaction, after its writes: its events. */
export function notifySubscribed(tx: Transaction, h: Hearth, input: SubscribeInput, { sawBefore }: SubscribePlan, outcome: SubscribeOutcome): void {
  notifySubscriptionsAdded(tx, h, outcome.created, outcome.added, sawBefore);
  if (input.creation.is_default_stream && outcome.created.length > 0) notifyDefaultChannels(tx, h);
}

/** After a subscribe request's commit: its messages, and its answer. */
export async function finishSubscribe(h: Hearth, actor: UserRecord, input: SubscribeInput, { unauthorized }: SubscribePlan, outcome: SubscribeOutcome): Promise<SubscribeResult> {
  if (input.announce) await announceNewChannels(h, actor, outcome.created);
  const messagesSent = input.sendNewSubscriptionMessages !== false ? await sendNewSubscriptionMessages(h, actor, outcome.added, outcome.created) : undefined;

  const result: SubscribeResult = { subscribed: {}, already_subscribed: {} };
  if (messagesSent !== undefined) result.new_subscription_messages_sent = messagesSent;
  for (const [list, into] of [
    [outcome.added, result.subscribed],
    [outcome.already, result.already_subscribed],
  ] as const) {
    for (const { channel, userIds } of list) for (const id of userIds) (into[String(id)] ??= []).push(channel.name);
  }
  if (!input.authorizationErrorsFatal) result.unauthorized = unauthorized;
  return result;
}

function notifySubscriptionsAdded(
  tx: Transaction,
  h: Hearth,
  created: ChannelRecord[],
  added: { channel: ChannelRecord; userIds: number[] }[],
  sawBefore: Map<number, Set<number>>,
): void {
  // 1. New channels: `stream create` to everyone who can now see them.
  // Announced as it was before anyone joined (as Zulip does): peer_add then counts the subscribers,
  // so a client that adds peer_add users to `subscriber_count` ends with the right number.
  for (const channel of created) {
    tx.notify({ type: "stream", op: "create", streams: [{ ...formatChannel(h, channel), subscriber_count: 0 }] }, channelViewerIds(h, channel));
  }
  const createdIds = new Set(created.map((c) => c.id));
  // 2. Existing channels that newly subscribed users could not see before (private channels, guests).
  for (const { channel, userIds } of added) {
    if (createdIds.has(channel.id)) continue;
    const before = sawBefore.get(channel.id) ?? new Set();
    const admitted = userIds.filter((id) => !before.has(id));
    const current = getChannel(h.store, channel.id)!;
    if (admitted.length > 0) tx.notify(aboutChannel(current, { type: "stream", op: "create", streams: [formatChannel(h, current)] }), admitted);
  }
  // 3. Each newly subscribed user: `subscription add` with the full subscription objects,
  // archived channels' apart (for archived_channels clients only, see aboutChannel).
  const perUser = new Map<string, { userId: number; archived: boolean; raw: SubscriptionView[]; resolved: SubscriptionView[] }>();
  for (const { channel, userIds } of added) {
    if (userIds.length === 0) continue;
    const current = getChannel(h.store, channel.id)!;
    const subscribers = activeSubscriberIds(h, channel.id);
    // The channel's part is the same in every new subscriber's two forms: built once.
    const channelView = formatChannel(h, current, subscribers.length);
    for (const id of userIds) {
      const sub = getSubscription(h.store, channel.id, id)!;
      const key = `${id}:${current.is_archived}`;
      const lists = perUser.get(key) ?? perUser.set(key, { userId: id, archived: current.is_archived, raw: [], resolved: [] }).get(key)!;
      lists.raw.push(formatSubscription(h, current, sub, { subscribers, channelView }));
      lists.resolved.push(formatSubscription(h, current, sub, { subscribers, channelView, resolveNullNotificationSettings: getUser(h.store, id) }));
    }
  }
  for (const { userId, archived, raw, resolved } of perUser.values()) {
    // The queue picks one form per its notification_settings_null capability (src/events/queues.ts).
    tx.notify(aboutChannel({ is_archived: archived }, { type: "subscription", op: "add", subscriptions: raw, resolved_subscriptions: resolved }), [userId]);
  }
  // 4. Everyone else who can see the subscriber list: `peer_add`.
  for (const { channel, userIds } of added) {
    if (userIds.length === 0) continue;
    const newcomers = new Set(userIds);
    const current = getChannel(h.store, channel.id)!;
    const peers = channelViewerIds(h, current).filter((id) => !newcomers.has(id));
    tx.notify(aboutChannel(current, { type: "subscription", op: "peer_add", stream_ids: [channel.id], user_ids: userIds }), peers);
  }
}

/** POST /channels/create (FL 417): one new channel and its initial subscribers, by user ID. */
export interface CreateChannelInput {
  name: string;
  description: string;
  subscribers: number[];
  announce: boolean;
  sendNewSubscriptionMessages: boolean;
  creation: ChannelCreationSettings;
}

/**
 * Creates a channel without subscribing anyone by name: the same plan, writes,
 * events and messages as a subscribe request that creates it, except that a name
 * already taken is an error rather than a channel to join.
 */
export async function checkCreateChannel(h: Hearth, actor: UserRecord, input: CreateChannelInput): Promise<{ id: number }> {
  const name = checkChannelName(input.name);
  const description = checkChannelDescription(input.description);
  // Archived channels keep their names too.
  if (getChannelByName(h.store, name)) throw badRequest(`Channel '${name}' already exists`);
  const principals = resolvePrincipals(h, actor, input.subscribers);
  const newRecord = planNewChannel(h, actor, name, description, input.creation);
  if (isGuest(actor) && principals.some((u) => u.id !== actor.id)) throw badRequest("Insufficient permission");
  const subscribeInput: SubscribeInput = {
    subscriptions: [{ name, description }],
    principals: input.subscribers,
    authorizationErrorsFatal: true,
    announce: input.announce,
    sendNewSubscriptionMessages: input.sendNewSubscriptionMessages,
    creation: input.creation,
  };
  const plan: SubscribePlan = {
    principals,
    targets: [{ channel: null, plan: { name, description, existing: null }, newRecord }],
    unauthorized: [],
    sawBefore: new Map(),
  };
  const { outcome } = await doSubscribe(h, actor, subscribeInput, plan);
  return { id: outcome.created[0].id };
}

// ---------------------------------------------------------------------------
// Consequences of user changes (called by src/actions/users.ts)

/**
 * Subscriber lists and counts leave deactivated users out: the viewers of each of their
 * channels get peer_remove / peer_add, archived channels included (FL 377, 428) for the
 * clients that keep archived channels.
 */
export function notifySubscriberActivityChanged(tx: Transaction, h: Hearth, user: UserRecord, active: boolean): void {
  for (const channelId of subscribedChannelIds(h.store, user.id)) {
    const channel = getChannel(h.store, channelId);
    if (!channel) continue;
    const viewers = channelViewerIds(h, channel).filter((id) => id !== user.id);
    tx.notify(aboutChannel(channel, { type: "subscription", op: active ? "peer_add" : "peer_remove", stream_ids: [channel.id], user_ids: [user.id] }), viewers);
  }
}

/**
 * New human users join the default channels (or the invitation's `channelIds`) in their
 * creation transaction (call only inside `commit`). Channels archived since are skipped.
 */
export function subscribeToDefaultChannelsInTransaction(h: Hearth, user: UserRecord, channelIds: Iterable<number> = defaultChannelIds(h.store)): ChannelRecord[] {
  if (user.is_bot || user.is_system_bot) return [];
  const joined: ChannelRecord[] = [];
  for (const id of new Set(channelIds)) {
    const channel = getChannel(h.store, id);
    if (!channel || channel.is_archived) continue;
    putSubscription(h.store, newSubscriptionRecord(h, channel, user.id));
    joined.push(channel);
  }
  return joined;
}

/** The events of `subscribeToDefaultChannelsInTransaction`. */
export function notifyDefaultChannelsJoined(tx: Transaction, h: Hearth, user: UserRecord, channels: ChannelRecord[]): void {
  if (channels.length === 0) return;
  notifySubscriptionsAdded(tx, h, [], channels.map((channel) => ({ channel, userIds: [user.id] })), new Map(channels.map((c) => [c.id, new Set<number>()])));
}
