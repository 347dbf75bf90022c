import { createHmac, randomBytes } from "node:crypto";
import { channelLinkSyntax } from "../markdown/links";
import { appendTo } from "../lib/collections";
import { silentMention } from "../markdown/syntax";
import type { Hearth } from "../context";
import { badRequest, mustBeAdmin, mustBeOwner } from "../errors";
import { allUsers, getUser, type UserRecord } from "../store/users";
import {
  allChannels,
  CHANNEL_GROUP_SETTINGS,
  defaultChannelIds,
  subscribedChannelIds,
  getChannel,
  getChannelByName,
  getSubscription,
  isDefaultChannel,
  isSubscribed,
  MAX_CHANNEL_DESCRIPTION_LENGTH,
  MAX_CHANNEL_NAME_LENGTH,
  putChannel,
  putSubscription,
  userSubscriptionRows,
  type ChannelGroupSettingName,
  type ChannelRecord,
  type SubscriptionRecord,
  type TopicsPolicy,
} from "../store/channels";
import { systemGroupId, type GroupSettingValue } from "../store/user_groups";
import {
  accessChannel,
  canAddSubscribers,
  canAdministerChannel,
  canPostInChannel,
  canRemoveSubscribers,
  canSubscribeSelf,
  channelDoesNotExist,
  channelViewerIds,
  hasContentAccess,
  hasMetadataAccess,
} from "../access/channels";
import { applyGroupSettingUpdate, checkGroupSettingValue, isSystemGroupSetting, isUserInGroupSetting, realmGroupSetting, type GroupSettingRules } from "../access/groups";
import { renderDescription } from "../markdown/description";
import { liveDefaultChannelIds } from "../views/channel_state";
import { notifyDefaultChannelGroups, removeChannelFromDefaultChannelGroups } from "./default_channel_groups";
import { activeSubscriberIds, formatChannel, formatSubscription, pickChannelColor, streamPostPolicy, streamPostPolicyGroupId } from "../views/channels";
import { isAdmin, isGuest, isOwner } from "../store/users";
import { notifyRealmBot } from "./user_events";
import { activeNonGuestUserIds } from "../store/users";
import { committedTransaction } from "./committed";
import { visibleUserByEmail } from "../access/users";
import { getSystemBot } from "../store/system_bots";
import { checkFolderForChannel } from "./channel_folders";
import { doSendMessage, sendSystemBotDm } from "./messages";
import { getRealm } from "../store/realm";
import { topicsOfChannel } from "../store/messages";
import { realmSetting } from "../store/realm_settings";


// ---------------------------------------------------------------------------
// Validation shared by creation and editing

/** Zulip's `check_stream_name`: trimmed, non-empty, at most 60 characters, no control characters. */
export function checkChannelName(raw: string): string {
  const name = raw.trim();
  if (name === "") throw badRequest("Channel name can't be empty.");
  if ([...name].length > MAX_CHANNEL_NAME_LENGTH) throw badRequest(`Channel name too long (limit: ${MAX_CHANNEL_NAME_LENGTH} characters).`);
  const chars = [...name];
  for (let i = 0; i < chars.length; i++) {
    const code = chars[i].codePointAt(0)!;
    if (code < 0x20 || (code >= 0x7f && code < 0xa0) || (code >= 0xfdd0 && code <= 0xfdef) || (code & 0xfffe) === 0xfffe) {
      throw badRequest(`Invalid character in channel name, at position ${i + 1}.`);
    }
  }
  return name;
}

/** Descriptions are one line in Zulip: newlines become spaces. */
export function checkChannelDescription(raw: string): string {
  const description = raw.replace(/\r?\n/g, " ");
  if ([...description].length > MAX_CHANNEL_DESCRIPTION_LENGTH) {
    throw badRequest(`Channel description too long (limit: ${MAX_CHANNEL_DESCRIPTION_LENGTH} characters).`);
  }
  return description;
}

export type RetentionInput = number | "realm_default" | "unlimited" | "forever";

/** `message_retention_days`: a positive number of days, "unlimited" (-1) or "realm_default" (null); owners only. */
export function checkMessageRetentionDays(actor: UserRecord, value: RetentionInput): number | null {
  if (!isOwner(actor)) throw mustBeOwner();
  if (value === "realm_default") return null;
  if (value === "unlimited" || value === "forever") return -1;
  if (typeof value !== "number" || !Number.isInteger(value) || value <= 0) {
    throw badRequest(`Bad value for 'message_retention_days': ${value}`);
  }
  return value;
}

/** Which system groups each channel permission may name (Zulip's `stream_permission_group_settings`). */
const CHANNEL_GROUP_RULES: Record<ChannelGroupSettingName, GroupSettingRules> = {
  can_add_subscribers_group: { allowEveryone: false },
  can_administer_channel_group: { allowEveryone: false },
  can_create_topic_group: { allowEveryone: true },
  can_delete_any_message_group: { allowEveryone: true },
  can_delete_own_message_group: { allowEveryone: true },
  can_move_messages_out_of_channel_group: { allowEveryone: true },
  can_move_messages_within_channel_group: { allowEveryone: true },
  can_remove_subscribers_group: { allowEveryone: true },
  can_resolve_topics_group: { allowEveryone: true },
  can_send_message_group: { allowEveryone: true },
  can_subscribe_group: { allowEveryone: false },
};

export function checkChannelGroupSetting(h: Hearth, name: ChannelGroupSettingName, value: GroupSettingValue): GroupSettingValue {
  return checkGroupSettingValue(h, name, value, CHANNEL_GROUP_RULES[name]);
}

/** `can_create_topic_group` must be role:everyone in private channels with protected history (spec). */
function checkCreateTopicGroupRule(h: Hearth, channel: Pick<ChannelRecord, "invite_only" | "history_public_to_subscribers" | "groups">): void {
  if (channel.invite_only && !channel.history_public_to_subscribers && !isSystemGroupSetting(h, channel.groups.can_create_topic_group, "role:everyone")) {
    throw badRequest("'can_create_topic_group' must be 'role:everyone' for private channels with protected history.");
  }
}

function defaultChannelGroups(h: Hearth, creator: UserRecord): Record<ChannelGroupSettingName, GroupSettingValue> {
  const id = (name: Parameters<typeof systemGroupId>[1]) => systemGroupId(h.store, name);
  return {
    can_add_subscribers_group: id("role:nobody"),
    // Zulip's "channel creator or nobody" default: the creator administers what they create.
    can_administer_channel_group: { direct_members: [creator.id], direct_subgroups: [] },
    can_create_topic_group: id("role:everyone"),
    can_delete_any_message_group: id("role:nobody"),
    can_delete_own_message_group: id("role:nobody"),
    can_move_messages_out_of_channel_group: id("role:nobody"),
    can_move_messages_within_channel_group: id("role:nobody"),
    can_remove_subscribers_group: id("role:administrators"),
    can_resolve_topics_group: id("role:nobody"),
    can_send_message_group: id("role:everyone"),
    can_subscribe_group: id("role:nobody"),
  };
}

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

export interface ChannelCreationSettings {
  invite_only: boolean;
  is_web_public: boolean;
  is_default_stream: boolean;
  history_public_to_subscribers?: boolean;
  message_retention_days?: RetentionInput;
  default_push_notifications?: boolean;
  topics_policy: TopicsPolicy;
  folder_id?: number;
  groups: Partial<Record<ChannelGroupSettingName, GroupSettingValue>>;
}

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
}

interface PlannedChannel {
  name: string;
  existing: ChannelRecord | null;
  description: string;
  color?: string;
}

/** Builds the record of a channel to create, with every creation rule checked (nothing written). */
function planNewChannel(h: Hearth, actor: UserRecord, name: string, description: string, settings: ChannelCreationSettings): Omit<ChannelRecord, "id"> {
  if (settings.is_web_public) throw badRequest("Web-public channels are not enabled.");
  const createGroup = realmGroupSetting(h, settings.invite_only ? "can_create_private_channel_group" : "can_create_public_channel_group");
  if (!isUserInGroupSetting(h, actor, createGroup)) throw badRequest("Insufficient permission");
  if (settings.is_default_stream) {
    if (!isAdmin(actor)) throw mustBeAdmin();
    if (settings.invite_only) throw badRequest("A default channel cannot be private.");
  }
  if (settings.default_push_notifications !== undefined && !isAdmin(actor)) throw mustBeAdmin();
  const groups = defaultChannelGroups(h, actor);
  for (const [key, value] of Object.entries(settings.groups) as [ChannelGroupSettingName, GroupSettingValue][]) {
    groups[key] = checkChannelGroupSetting(h, key, value);
  }
  const record: Omit<ChannelRecord, "id"> = {
    name,
    description,
    rendered_description: renderDescription(description),
    date_created: Math.floor(Date.now() / 1000),
    creator_id: actor.id,
    invite_only: settings.invite_only,
    is_web_public: false,
    // Public channels always share their history (Zulip has no public channel without it).
    history_public_to_subscribers: settings.invite_only ? (settings.history_public_to_subscribers ?? false) : true,
    // At creation "realm_default" is what Zulip's list_to_streams parses to None: no owner needed.
    message_retention_days:
      settings.message_retention_days === undefined || settings.message_retention_days === "realm_default"
        ? null
        : checkMessageRetentionDays(actor, settings.message_retention_days),
    default_push_notifications: settings.default_push_notifications ?? false,
    topics_policy: settings.topics_policy,
    folder_id: settings.folder_id ?? null,
    is_archived: false,
    first_message_id: null,
    last_message_at: null,
    groups,
  };
  if (settings.folder_id !== undefined) checkFolderForChannel(h, settings.folder_id);
  checkCreateTopicGroupRule(h, record);
  return record;
}

const isHexColor = (value: unknown): value is string => typeof value === "string" && /^#[0-9a-fA-F]{6}$/.test(value);

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
  const plan = planSubscribe(h, actor, input);
  const outcome = await h.store.commit(() => writeSubscriptions(h, plan, input));
  return finishSubscribe(h, actor, input, plan, outcome);
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
function planSubscribe(h: Hearth, actor: UserRecord, input: SubscribeInput): SubscribePlan {
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
    // without confirming it exists; an archived channel takes no subscribers.
    if (channel.is_archived || !canSubscribeSelf(h, actor, channel)) {
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

/** The writes of a subscribe request; call inside `store.commit`. */
function writeSubscriptions(h: Hearth, { principals, targets }: SubscribePlan, input: SubscribeInput): SubscribeOutcome {
  const created: ChannelRecord[] = [];
  const added: { channel: ChannelRecord; userIds: number[] }[] = [];
  const already: { channel: ChannelRecord; userIds: number[] }[] = [];
  for (const t of targets) {
    let channel = t.channel;
    if (!channel) {
      if (getChannelByName(h.store, t.plan.name)) throw badRequest(`Channel name '${t.plan.name}' is already taken.`);
      channel = { id: h.store.nextId("channel"), ...t.newRecord! };
      putChannel(h.store, channel);
      if (input.creation.is_default_stream) h.store.dbs.defaultChannels.put(channel.id, true);
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

/** After a subscribe request's commit: its events and messages, and its answer. */
async function finishSubscribe(h: Hearth, actor: UserRecord, input: SubscribeInput, { sawBefore, unauthorized }: SubscribePlan, outcome: SubscribeOutcome): Promise<SubscribeResult> {
  notifySubscriptionsAdded(h, outcome.created, outcome.added, sawBefore);
  if (input.creation.is_default_stream && outcome.created.length > 0) notifyDefaultChannels(h);
  if (input.announce) await announceNewChannels(h, actor, outcome.created);
  if (input.sendNewSubscriptionMessages !== false) await sendNewSubscriptionMessages(h, actor, outcome.added, outcome.created);

  const result: SubscribeResult = { subscribed: {}, already_subscribed: {} };
  for (const [list, into] of [
    [outcome.added, result.subscribed],
    [outcome.already, result.already_subscribed],
  ] as const) {
    for (const { channel, userIds } of list) for (const id of userIds) (into[String(id)] ??= []).push(channel.name);
  }
  if (!input.authorizationErrorsFatal) result.unauthorized = unauthorized;
  return result;
}

/**
 * `announce`: Notification Bot posts to the organization's new-channel announcements
 * channel (topic "new channels"), as Zulip does; nothing when that setting is unset.
 * Private channels are never announced, so their names stay private.
 */
async function announceNewChannels(h: Hearth, actor: UserRecord, created: ChannelRecord[]): Promise<void> {
  const announced = created.filter((c) => !c.invite_only);
  const targetId = realmSetting(getRealm(h.store)?.settings ?? {}, "new_stream_announcements_stream_id");
  const target = typeof targetId === "number" ? getChannel(h.store, targetId) : undefined;
  const bot = getSystemBot(h.store, "notification");
  if (announced.length === 0 || !target || target.is_archived || !bot) return;
  const links = announced.map((c) => channelLinkSyntax(c.id, c.name)).join(", ");
  const who = silentMention(actor);
  const content = announced.length === 1 ? `${who} created a new channel ${links}.` : `${who} created the following channels: ${links}.`;
  try {
    await doSendMessage(h, bot, { target: { type: "stream", channel: target, topic: "new channels" }, content, client: "Internal", readBySender: true });
  } catch (error) {
    // The channels exist and are subscribed; a failed announcement must not turn that into an error.
    console.error("Could not announce new channels:", error);
  }
}

/** Zulip's `max_bulk_new_subscription_messages`: larger requests send no direct messages. */
const MAX_BULK_NEW_SUBSCRIPTION_MESSAGES = 100;

/**
 * Users subscribed by someone else to existing channels get a direct message from
 * Notification Bot naming them (never for channels created by the same request, nor
 * for bots, nor when the request subscribed more than 100 users).
 */
async function sendNewSubscriptionMessages(h: Hearth, actor: UserRecord, added: { channel: ChannelRecord; userIds: number[] }[], created: ChannelRecord[]): Promise<void> {
  const createdIds = new Set(created.map((c) => c.id));
  const everyone = new Set(added.flatMap((a) => a.userIds));
  if (everyone.size > MAX_BULK_NEW_SUBSCRIPTION_MESSAGES) return;
  const bot = getSystemBot(h.store, "notification");
  if (!bot) return;
  const linksByUser = new Map<number, string[]>();
  for (const { channel, userIds } of added) {
    if (createdIds.has(channel.id)) continue;
    for (const id of userIds) {
      const user = getUser(h.store, id);
      if (id === actor.id || !user || user.is_bot) continue;
      appendTo(linksByUser, id, channelLinkSyntax(channel.id, channel.name));
    }
  }
  const who = silentMention(actor);
  // Sent together, so their commits batch instead of paying an fsync each.
  await Promise.all(
    [...linksByUser].map(async ([userId, links]) => {
      const content =
        links.length === 1
          ? `${who} subscribed you to the channel ${links[0]}.`
          : `${who} subscribed you to the following channels:\n\n${links.map((link) => `* ${link}`).join("\n")}`;
      await sendSystemBotDm(h, bot, userId, content, "a new-subscription message");
    }),
  );
}

function notifySubscriptionsAdded(
  h: Hearth,
  created: ChannelRecord[],
  added: { channel: ChannelRecord; userIds: number[] }[],
  sawBefore: Map<number, Set<number>>,
): void {
  // 1. New channels: `stream create` to everyone who can now see them.
  // Announced as it was before anyone joined (as Zulip does): peer_add then counts the subscribers,
  // so a client that adds peer_add users to `subscriber_count` ends with the right number.
  for (const channel of created) {
    h.events.publish({ type: "stream", op: "create", streams: [{ ...formatChannel(h, channel), subscriber_count: 0 }] }, channelViewerIds(h, channel));
  }
  const createdIds = new Set(created.map((c) => c.id));
  // 2. Existing channels that newly subscribed users could not see before (private channels, guests).
  for (const { channel, userIds } of added) {
    if (createdIds.has(channel.id)) continue;
    const before = sawBefore.get(channel.id) ?? new Set();
    const admitted = userIds.filter((id) => !before.has(id));
    if (admitted.length > 0) h.events.publish({ type: "stream", op: "create", streams: [formatChannel(h, getChannel(h.store, channel.id)!)] }, admitted);
  }
  // 3. Each newly subscribed user: `subscription add` with the full subscription objects.
  const perUser = new Map<number, { raw: Record<string, unknown>[]; resolved: Record<string, unknown>[] }>();
  for (const { channel, userIds } of added) {
    if (userIds.length === 0) continue;
    const current = getChannel(h.store, channel.id)!;
    const subscribers = activeSubscriberIds(h, channel.id);
    for (const id of userIds) {
      const sub = getSubscription(h.store, channel.id, id)!;
      const lists = perUser.get(id) ?? perUser.set(id, { raw: [], resolved: [] }).get(id)!;
      lists.raw.push(formatSubscription(h, current, sub, { subscribers }));
      lists.resolved.push(formatSubscription(h, current, sub, { subscribers, resolveNullNotificationSettings: getUser(h.store, id) }));
    }
  }
  for (const [userId, lists] of perUser) {
    // The queue picks one form per its notification_settings_null capability (src/events/queues.ts).
    h.events.publish({ type: "subscription", op: "add", subscriptions: lists.raw, resolved_subscriptions: lists.resolved }, [userId]);
  }
  // 4. Everyone else who can see the subscriber list: `peer_add`.
  for (const { channel, userIds } of added) {
    if (userIds.length === 0) continue;
    const newcomers = new Set(userIds);
    const peers = channelViewerIds(h, getChannel(h.store, channel.id)!).filter((id) => !newcomers.has(id));
    h.events.publish({ type: "subscription", op: "peer_add", stream_ids: [channel.id], user_ids: userIds }, peers);
  }
}

// ---------------------------------------------------------------------------
// Unsubscribing

export interface UnsubscribeResult {
  removed: string[];
  not_removed: string[];
}

/** DELETE /users/me/subscriptions. */
export async function checkUnsubscribe(
  h: Hearth,
  actor: UserRecord,
  names: string[],
  principalsInput?: (string | number)[],
): Promise<UnsubscribeResult> {
  return doUnsubscribe(h, actor, planUnsubscribe(h, actor, names, principalsInput));
}

interface UnsubscribePlan {
  principals: UserRecord[];
  channels: ChannelRecord[];
}

/** Every check of an unsubscribe, nothing written: afterwards only the writes remain. */
function planUnsubscribe(h: Hearth, actor: UserRecord, names: string[], principalsInput?: (string | number)[]): UnsubscribePlan {
  const principals = principalsInput && principalsInput.length > 0 ? resolvePrincipals(h, actor, principalsInput) : [actor];
  const channels: ChannelRecord[] = [];
  for (const raw of names) {
    const channel = getChannelByName(h.store, raw);
    // Channels the caller may not see are reported as missing, so their names stay secret.
    if (!channel || (!hasMetadataAccess(h, actor, channel) && !isAdmin(actor))) {
      throw channelDoesNotExist(raw.trim());
    }
    if (!channels.some((c) => c.id === channel.id)) channels.push(channel);
  }
  for (const channel of channels) {
    for (const target of principals) {
      if (target.id === actor.id) continue;
      const ownsBot = target.is_bot && target.bot_owner_id === actor.id && hasMetadataAccess(h, actor, channel);
      if (!ownsBot && !canRemoveSubscribers(h, actor, channel)) throw badRequest("Insufficient permission");
    }
  }
  return { principals, channels };
}

type Unsubscribed = { channel: ChannelRecord; userIds: number[]; notIds: number[] }[];

async function doUnsubscribe(h: Hearth, actor: UserRecord, plan: UnsubscribePlan): Promise<UnsubscribeResult> {
  const removed = await h.store.commit(() => writeUnsubscriptions(h, plan));
  return finishUnsubscribe(h, removed);
}

/** The writes of an unsubscribe request; call inside `store.commit`. */
function writeUnsubscriptions(h: Hearth, { principals, channels }: UnsubscribePlan): Unsubscribed {
  const done: Unsubscribed = [];
  for (const channel of channels) {
    const userIds: number[] = [];
    const notIds: number[] = [];
    for (const target of principals) {
      const sub = getSubscription(h.store, channel.id, target.id);
      if (!sub || !sub.active) {
        notIds.push(target.id);
        continue;
      }
      putSubscription(h.store, { ...sub, active: false });
      userIds.push(target.id);
    }
    done.push({ channel, userIds, notIds });
  }
  return done;
}

/** After an unsubscribe request's commit: its events, and its answer. */
function finishUnsubscribe(h: Hearth, removed: Unsubscribed): UnsubscribeResult {
  for (const { channel, userIds } of removed) {
    if (userIds.length === 0) continue;
    for (const id of userIds) {
      h.events.publish({ type: "subscription", op: "remove", subscriptions: [{ stream_id: channel.id, name: channel.name }] }, [id]);
    }
    const gone = new Set(userIds);
    const peers = channelViewerIds(h, channel).filter((id) => !gone.has(id));
    h.events.publish({ type: "subscription", op: "peer_remove", stream_ids: [channel.id], user_ids: userIds }, peers);
    // Leaving a private channel can take it out of sight entirely.
    const lostSight = userIds.filter((id) => {
      const u = getUser(h.store, id);
      return u && !hasMetadataAccess(h, u, channel);
    });
    if (lostSight.length > 0) h.events.publish(streamDeleteEvent(h, channel), lostSight);
  }
  const result: UnsubscribeResult = { removed: [], not_removed: [] };
  for (const { channel, userIds, notIds } of removed) {
    for (const _ of userIds) result.removed.push(channel.name);
    for (const _ of notIds) result.not_removed.push(channel.name);
  }
  return result;
}

function streamDeleteEvent(h: Hearth, channel: ChannelRecord) {
  // `streams` for clients before FL 343, `stream_ids` for newer ones (client requirements accept either).
  return { type: "stream", op: "delete", streams: [formatChannel(h, channel)], stream_ids: [channel.id] };
}

// ---------------------------------------------------------------------------
// Personal subscription settings

export const SUBSCRIPTION_PROPERTIES = [
  "color",
  "is_muted",
  "in_home_view",
  "pin_to_top",
  "desktop_notifications",
  "audible_notifications",
  "push_notifications",
  "email_notifications",
  "wildcard_mentions_notify",
] as const;

export interface SubscriptionPropertyChange {
  stream_id: number;
  property: string;
  value: unknown;
}

/** POST /users/me/subscriptions/properties (and the single-channel form). */
export async function checkUpdateSubscriptionProperties(h: Hearth, user: UserRecord, changes: SubscriptionPropertyChange[]): Promise<void> {
  const checked: { channelId: number; property: string; value: string | boolean }[] = [];
  for (const change of changes) {
    const channel = accessChannel(h, user, change.stream_id, { allowArchived: true });
    if (!isSubscribed(h.store, channel.id, user.id)) throw badRequest(`Not subscribed to channel ID ${channel.id}`);
    if (!(SUBSCRIPTION_PROPERTIES as readonly string[]).includes(change.property)) {
      throw badRequest(`Unknown subscription property: ${change.property}`);
    }
    if (change.property === "color") {
      if (!isHexColor(change.value)) throw badRequest("color is not a valid hex color code");
      checked.push({ channelId: channel.id, property: "color", value: change.value.toLowerCase() });
    } else {
      if (typeof change.value !== "boolean") throw badRequest(`${change.property} is not a boolean`);
      checked.push({ channelId: channel.id, property: change.property, value: change.value });
    }
  }
  const applied = await h.store.commit(() => {
    const events: { channelId: number; property: string; value: string | boolean }[] = [];
    for (const c of checked) {
      const sub = getSubscription(h.store, c.channelId, user.id)!;
      const next = { ...sub } as SubscriptionRecord & Record<string, unknown>;
      if (c.property === "in_home_view" || c.property === "is_muted") {
        const muted = c.property === "is_muted" ? (c.value as boolean) : !(c.value as boolean);
        next.is_muted = muted;
        // FL 139: either property sends both events, so old and new clients stay in step.
        events.push({ channelId: c.channelId, property: "in_home_view", value: !muted }, { channelId: c.channelId, property: "is_muted", value: muted });
      } else {
        next[c.property] = c.value;
        events.push(c);
      }
      putSubscription(h.store, next);
    }
    return events;
  });
  for (const e of applied) {
    h.events.publish({ type: "subscription", op: "update", stream_id: e.channelId, property: e.property, value: e.value }, [user.id]);
  }
}

// ---------------------------------------------------------------------------
// Channel settings (PATCH /streams/{stream_id})

export interface UpdateChannelInput {
  new_name?: string;
  description?: string;
  is_private?: boolean;
  is_web_public?: boolean;
  history_public_to_subscribers?: boolean;
  is_default_stream?: boolean;
  message_retention_days?: RetentionInput;
  topics_policy?: TopicsPolicy;
  folder_id?: number | null;
  stream_post_policy?: number;
  groups: Partial<Record<ChannelGroupSettingName, { new: GroupSettingValue; old?: GroupSettingValue }>>;
}

/** Settings whose change needs content access as well as channel administration (Zulip FL 349). */
const CONTENT_ACCESS_SETTINGS = new Set(["invite_only", "history_public_to_subscribers", "can_add_subscribers_group", "can_subscribe_group"]);

export async function checkUpdateChannel(h: Hearth, actor: UserRecord, channelId: number, input: UpdateChannelInput): Promise<void> {
  const channel = accessChannel(h, actor, channelId, { allowArchived: true });
  if (!canAdministerChannel(h, actor, channel)) throw badRequest("You do not have permission to administer this channel.");
  if (channel.is_archived) throw badRequest("Invalid channel ID");
  const next: ChannelRecord = { ...channel, groups: { ...channel.groups } };
  const changed: string[] = [];
  const needsContent = (setting: string) => {
    if (CONTENT_ACCESS_SETTINGS.has(setting) && !hasContentAccess(h, actor, channel)) throw badRequest("Channel content access is required.");
  };

  if (input.new_name !== undefined) {
    const name = checkChannelName(input.new_name);
    if (name !== channel.name) {
      const other = getChannelByName(h.store, name);
      if (other && other.id !== channel.id) throw badRequest(`Channel name '${name}' is already taken.`);
      next.name = name;
      changed.push("name");
    }
  }
  if (input.description !== undefined) {
    const description = checkChannelDescription(input.description);
    if (description !== channel.description) {
      next.description = description;
      next.rendered_description = renderDescription(description);
      changed.push("description");
    }
  }
  if (input.is_web_public === true) throw badRequest("Web-public channels are not enabled.");
  if (input.is_private !== undefined && input.is_private !== channel.invite_only) {
    needsContent("invite_only");
    if (input.is_private && isDefaultChannel(h.store, channel.id) && input.is_default_stream !== false) {
      throw badRequest("A default channel cannot be private.");
    }
    next.invite_only = input.is_private;
    changed.push("invite_only");
  }
  if (input.history_public_to_subscribers !== undefined || input.is_private !== undefined) {
    const wanted = next.invite_only ? (input.history_public_to_subscribers ?? (input.is_private !== undefined ? false : next.history_public_to_subscribers)) : true;
    if (input.history_public_to_subscribers === false && !next.invite_only) {
      throw badRequest("Invalid parameters: history_public_to_subscribers must be true for public channels.");
    }
    if (wanted !== channel.history_public_to_subscribers) {
      needsContent("history_public_to_subscribers");
      next.history_public_to_subscribers = wanted;
      if (!changed.includes("invite_only")) changed.push("history_public_to_subscribers");
    }
  }
  if (input.message_retention_days !== undefined) {
    const days = checkMessageRetentionDays(actor, input.message_retention_days);
    if (days !== channel.message_retention_days) {
      next.message_retention_days = days;
      changed.push("message_retention_days");
    }
  }
  if (input.topics_policy !== undefined && input.topics_policy !== channel.topics_policy) {
    // FL 404: a channel becomes "general chat" only if nothing was ever said in a named topic.
    if (input.topics_policy === "empty_topic_only" && topicsOfChannel(h.store, channel.id).some((t) => t.name !== "")) {
      throw badRequest("To enable this configuration, all messages in this channel must be in the general chat topic. Consider renaming or deleting other topics.");
    }
    next.topics_policy = input.topics_policy;
    changed.push("topics_policy");
  }
  if (input.folder_id !== undefined && input.folder_id !== channel.folder_id) {
    if (input.folder_id !== null) checkFolderForChannel(h, input.folder_id);
    next.folder_id = input.folder_id;
    changed.push("folder_id");
  }
  if (input.stream_post_policy !== undefined) {
    // Deprecated: mapped onto can_send_message_group as Zulip does.
    const group = streamPostPolicyGroupId(h, input.stream_post_policy);
    input.groups.can_send_message_group ??= { new: group };
  }
  for (const name of CHANNEL_GROUP_SETTINGS) {
    const update = input.groups[name];
    if (!update) continue;
    const value = applyGroupSettingUpdate(h, name, update, channel.groups[name], CHANNEL_GROUP_RULES[name]);
    if (value === undefined) continue;
    needsContent(name);
    next.groups[name] = value;
    changed.push(name);
  }
  checkCreateTopicGroupRule(h, next);
  let defaultChange: boolean | null = null;
  if (input.is_default_stream !== undefined && input.is_default_stream !== isDefaultChannel(h.store, channel.id)) {
    if (!isAdmin(actor)) throw mustBeAdmin();
    if (input.is_default_stream && next.invite_only) throw badRequest("A default channel cannot be private.");
    defaultChange = input.is_default_stream;
  }
  if (changed.length === 0 && defaultChange === null) return;

  const viewersBefore = new Set(channelViewerIds(h, channel));
  const saved = await h.store.commit(() => {
    const current = getChannel(h.store, channel.id)!;
    if (next.name !== current.name) {
      const other = getChannelByName(h.store, next.name);
      if (other && other.id !== current.id) throw badRequest(`Channel name '${next.name}' is already taken.`);
    }
    // Only what this request changed goes onto the stored record: a message sent
    // meanwhile may have set first_message_id or last_message_at.
    const merged: ChannelRecord = { ...current, groups: { ...current.groups } };
    for (const key of Object.keys(next) as (keyof ChannelRecord)[]) {
      if (key !== "groups" && next[key] !== channel[key]) (merged as unknown as Record<string, unknown>)[key] = next[key];
    }
    for (const name of CHANNEL_GROUP_SETTINGS) if (next.groups[name] !== channel.groups[name]) merged.groups[name] = next.groups[name];
    putChannel(h.store, merged, current.name);
    if (defaultChange === true) h.store.dbs.defaultChannels.put(channel.id, true);
    if (defaultChange === false) h.store.dbs.defaultChannels.remove(channel.id);
    return merged;
  });
  notifyChannelUpdated(h, channel, saved, changed, viewersBefore);
  if (defaultChange !== null) notifyDefaultChannels(h);
}

function notifyChannelUpdated(h: Hearth, before: ChannelRecord, after: ChannelRecord, changed: string[], viewersBefore: Set<number>): void {
  const viewersAfter = channelViewerIds(h, after);
  const viewersAfterSet = new Set(viewersAfter);
  const lost = [...viewersBefore].filter((id) => !viewersAfterSet.has(id));
  const gained = viewersAfter.filter((id) => !viewersBefore.has(id));
  const stayed = viewersAfter.filter((id) => viewersBefore.has(id));
  if (lost.length > 0) h.events.publish(streamDeleteEvent(h, after), lost);
  if (gained.length > 0) {
    // Subscribers follow in peer_add, so the announced count starts at zero (see notifySubscriptionsAdded).
    h.events.publish({ type: "stream", op: "create", streams: [{ ...formatChannel(h, after), subscriber_count: 0 }] }, gained);
    const subscribers = activeSubscriberIds(h, after.id);
    if (subscribers.length > 0) h.events.publish({ type: "subscription", op: "peer_add", stream_ids: [after.id], user_ids: subscribers }, gained);
  }
  for (const property of changed) {
    const base = { type: "stream", op: "update", stream_id: after.id, name: before.name, property };
    let event: Record<string, unknown>;
    switch (property) {
      case "description":
        event = { ...base, value: after.description, rendered_description: after.rendered_description };
        break;
      case "invite_only":
        event = { ...base, value: after.invite_only, history_public_to_subscribers: after.history_public_to_subscribers, is_web_public: after.is_web_public };
        break;
      default:
        event = {
          ...base,
          value: (CHANNEL_GROUP_SETTINGS as readonly string[]).includes(property)
            ? after.groups[property as ChannelGroupSettingName]
            : (after as unknown as Record<string, unknown>)[property],
        };
    }
    h.events.publish(event as { type: string }, stayed);
    // The deprecated fields follow can_send_message_group for clients that still read
    // them, when their value changes (Zulip's do_change_stream_group_based_setting):
    // stream_post_policy, then is_announcement_only for legacy mobile clients.
    if (property === "can_send_message_group") {
      const policy = streamPostPolicy(h, after);
      if (policy !== streamPostPolicy(h, before)) {
        h.events.publish({ ...base, property: "stream_post_policy", value: policy }, stayed);
        // 2: administrators only, what is_announcement_only meant.
        h.events.publish({ ...base, property: "is_announcement_only", value: policy === 2 }, stayed);
      }
    }
  }
  // Bots name their default channels: realm_bots follow a rename, as in Zulip.
  if (changed.includes("name")) {
    for (const bot of allUsers(h.store)) {
      const defaults = bot.is_bot ? bot.bot_defaults : undefined;
      if (!defaults) continue;
      const fields = {
        ...(defaults.sending_channel_id === after.id ? { default_sending_stream: after.name } : {}),
        ...(defaults.events_register_channel_id === after.id ? { default_events_register_stream: after.name } : {}),
      };
      if (Object.keys(fields).length > 0) notifyRealmBot(committedTransaction(h), h, "update", bot, fields);
    }
  }
}

function notifyDefaultChannels(h: Hearth): void {
  h.events.publish({ type: "default_streams", default_streams: liveDefaultChannelIds(h) }, activeNonGuestUserIds(h));
}

// ---------------------------------------------------------------------------
// Archiving and default channels

/** DELETE /streams/{stream_id}: archives the channel (kept with its history; Zulip's deactivation). */
export async function checkArchiveChannel(h: Hearth, actor: UserRecord, channelId: number): Promise<void> {
  const channel = accessChannel(h, actor, channelId, { allowArchived: true });
  if (!canAdministerChannel(h, actor, channel)) throw badRequest("You do not have permission to administer this channel.");
  if (channel.is_archived) throw badRequest("Channel is already deactivated");
  const viewers = channelViewerIds(h, channel);
  const wasDefault = isDefaultChannel(h.store, channel.id);
  let groupsChanged = false;
  const archived = await h.store.commit(() => {
    const current = getChannel(h.store, channel.id)!;
    const next = { ...current, is_archived: true };
    putChannel(h.store, next);
    h.store.dbs.defaultChannels.remove(channel.id);
    groupsChanged = removeChannelFromDefaultChannelGroups(h, channel.id);
    return next;
  });
  h.events.publish(
    {
      ...streamDeleteEvent(h, archived),
      archived_update: { type: "stream", op: "update", stream_id: archived.id, name: archived.name, property: "is_archived", value: true },
    },
    viewers,
  );
  if (wasDefault) notifyDefaultChannels(h);
  if (groupsChanged) notifyDefaultChannelGroups(h);
}

export async function checkSetDefaultChannel(h: Hearth, actor: UserRecord, channelId: number, isDefault: boolean): Promise<void> {
  if (!isAdmin(actor)) throw mustBeAdmin();
  const channel = accessChannel(h, actor, channelId);
  if (isDefault && channel.invite_only) throw badRequest("Private channels cannot be made default.");
  if (isDefaultChannel(h.store, channel.id) === isDefault) return;
  await h.store.commit(() => {
    if (isDefault) h.store.dbs.defaultChannels.put(channel.id, true);
    else h.store.dbs.defaultChannels.remove(channel.id);
  });
  notifyDefaultChannels(h);
}

// ---------------------------------------------------------------------------
// Consequences of user changes (called by src/actions/users.ts after its commit)

/**
 * A role change can show or hide channels (guests see only their subscriptions,
 * administrators see every private channel's metadata): `stream create` plus the
 * subscribers as `peer_add` for channels that came into sight, `stream delete` for
 * those that left it (FL 205).
 */
export function notifyUserChannelAccessChanged(h: Hearth, before: UserRecord, after: UserRecord): void {
  notifyVisibleChannelsChanged(h, after.id, visibleChannelIds(h, before), visibleChannelIds(h, after));
}

/** The live channels (of `among`) `user` may see, to compare before and after a change of role or group membership. */
export function visibleChannelIds(h: Hearth, user: UserRecord, among: Iterable<ChannelRecord> = allChannels(h.store)): Set<number> {
  const ids = new Set<number>();
  for (const channel of among) if (!channel.is_archived && hasMetadataAccess(h, user, channel)) ids.add(channel.id);
  return ids;
}

export function notifyVisibleChannelsChanged(h: Hearth, userId: number, before: Set<number>, after: Set<number>): void {
  for (const id of before) {
    const channel = getChannel(h.store, id);
    if (channel && !after.has(id)) h.events.publish(streamDeleteEvent(h, channel), [userId]);
  }
  for (const id of after) {
    const channel = getChannel(h.store, id);
    if (!channel || before.has(id)) continue;
    h.events.publish({ type: "stream", op: "create", streams: [{ ...formatChannel(h, channel), subscriber_count: 0 }] }, [userId]);
    const subscribers = activeSubscriberIds(h, channel.id);
    if (subscribers.length > 0) h.events.publish({ type: "subscription", op: "peer_add", stream_ids: [channel.id], user_ids: subscribers }, [userId]);
  }
}

/** Subscriber lists and counts leave deactivated users out: their channels' viewers get peer_remove / peer_add. */
export function notifySubscriberActivityChanged(h: Hearth, user: UserRecord, active: boolean): void {
  for (const channelId of subscribedChannelIds(h.store, user.id)) {
    const channel = getChannel(h.store, channelId);
    if (!channel || channel.is_archived) continue;
    const viewers = channelViewerIds(h, channel).filter((id) => id !== user.id);
    h.events.publish({ type: "subscription", op: active ? "peer_add" : "peer_remove", stream_ids: [channel.id], user_ids: [user.id] }, viewers);
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

/** After commit: the events of `subscribeToDefaultChannelsInTransaction`. */
export function notifyDefaultChannelsJoined(h: Hearth, user: UserRecord, channels: ChannelRecord[]): void {
  if (channels.length === 0) return;
  notifySubscriptionsAdded(h, [], channels.map((channel) => ({ channel, userIds: [user.id] })), new Map(channels.map((c) => [c.id, new Set<number>()])));
}

// ---------------------------------------------------------------------------
// Channel email addresses

const EMAIL_SECRET_KEY = "channel_email_secret";

/** At server start: the key that derives channel email tokens, made once per data folder. */
export async function ensureChannelEmailSecret(store: Hearth["store"]): Promise<void> {
  if (store.dbs.meta.get(EMAIL_SECRET_KEY)) return;
  await store.commit(() => {
    if (!store.dbs.meta.get(EMAIL_SECRET_KEY)) store.dbs.meta.put(EMAIL_SECRET_KEY, randomBytes(32).toString("hex"));
  });
}

/**
 * GET /streams/{stream_id}/email_address. The address is `{name}.{token}@{host}` as in
 * Zulip; the token is derived from the channel and the sender (Zulip keeps one token per
 * channel and sender), so it is stable without storing one per request.
 */
export function getChannelEmailAddress(h: Hearth, actor: UserRecord, channelId: number, senderId?: number): string {
  const channel = accessChannel(h, actor, channelId, { requireContentAccess: true });
  if (!canPostInChannel(h, actor, channel)) throw badRequest("Invalid channel ID");
  const gateway = getSystemBot(h.store, "email_gateway");
  const sender = senderId === undefined ? gateway : getUser(h.store, senderId);
  const allowed = sender && sender.is_active && (sender.id === actor.id || sender.id === gateway?.id || (sender.is_bot && sender.bot_owner_id === actor.id));
  if (!allowed) throw badRequest("Invalid user ID");
  const secret = String(h.store.dbs.meta.get(EMAIL_SECRET_KEY) ?? "");
  const token = createHmac("sha256", secret).update(`${channel.id}:${sender.id}`).digest("hex").slice(0, 32);
  const local = channel.name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 30);
  return `${local ? local + "." : ""}${token}@${h.realmHost()}`;
}

/**
 * `PATCH /users/me/subscriptions` (Zulip's older single call): removals, additions
 * and initial colors, checked first and written in one transaction, so a refused
 * request or a crash leaves every subscription as it was.
 */
export async function checkUpdateOwnSubscriptions(
  h: Hearth,
  actor: UserRecord,
  remove: string[],
  add: { name: string; description?: string; color?: string }[],
): Promise<SubscribeResult & UnsubscribeResult> {
  for (const a of add) if (a.color !== undefined && !isHexColor(a.color)) throw badRequest("Invalid color");
  const removing = new Set(remove.map((name) => name.trim().toLowerCase()));
  const both = add.find((a) => removing.has(a.name.trim().toLowerCase()));
  if (both) throw badRequest(`Cannot both subscribe to and unsubscribe from ${both.name.trim()}`);
  const removal = planUnsubscribe(h, actor, remove);
  const input: SubscribeInput = {
    subscriptions: add,
    authorizationErrorsFatal: true,
    announce: false,
    creation: { invite_only: false, is_web_public: false, is_default_stream: false, topics_policy: "inherit", groups: {} },
  };
  const addition = planSubscribe(h, actor, input);
  const outcome = await h.store.commit(() => ({ added: writeSubscriptions(h, addition, input), removed: writeUnsubscriptions(h, removal) }));
  const subscribed = await finishSubscribe(h, actor, input, addition, outcome.added);
  return { ...subscribed, ...finishUnsubscribe(h, outcome.removed) };
}
