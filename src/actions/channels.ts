/**
 * Channels themselves (Zulip's zerver/actions/streams.py, less subscriptions): creating
 * one, changing its settings, archiving it, and who sees it as roles and groups change.
 * Subscribing, which creates channels on the way, is src/actions/subscriptions.ts.
 */
import { randomBytes } from "node:crypto";
import type { Hearth } from "../context";
import { commit, type Transaction } from "../events/commit";
import type { EventOf } from "../schemas/events";

type StreamUpdate = Extract<EventOf<"stream">, { readonly op: "update" }>;
import { badRequest, mustBeAdmin } from "../errors";
import { allUsers, type UserRecord, isAdmin } from "../store/users";
import { allChannels, getChannel, getChannelByName, getChannelEmailSecret, putChannel, putChannelEmailSecret, type ChannelRecord } from "../store/channels";
import { CHANNEL_GROUP_SETTINGS, type ChannelGroupSettingName, type TopicsPolicy } from "../schemas/channels";
import { isDefaultChannel, setDefaultChannel } from "../store/default_channels";
import { systemGroupId, type GroupSettingValue } from "../store/user_groups";
import { topicsOfChannel } from "../store/message_indexes";
import { accessChannel, canAdministerChannel, channelViewerIds, hasContentAccess, hasMetadataAccess, invalidChannelId } from "../access/channels";
import { applyGroupSettingUpdate, isUserInGroupSetting, realmGroupSetting } from "../access/groups";
import { renderDescription } from "../markdown/description";
import { activeSubscriberIds, formatChannel, streamDeleteEvent, streamPostPolicy, streamPostPolicyGroupId } from "../views/channels";
import { CHANNEL_GROUP_RULES, checkChannelDescription, checkChannelGroupSetting, checkChannelName, checkCreateTopicGroupRule, checkMessageRetentionDays, type RetentionInput } from "./channel_checks";
import { checkFolderForChannel } from "./channel_folders";
import { notifyDefaultChannelGroups, removeChannelFromDefaultChannelGroups } from "./default_channel_groups";
import { notifyDefaultChannels } from "./default_channels";
import { notifyRealmBot } from "./user_events";
import { aboutChannel } from "./channels_archived";

// ---------------------------------------------------------------------------
// Creation (planned by the subscribe request that names a new channel)

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

function newChannelPermissionGroups(h: Hearth, creator: UserRecord): Record<ChannelGroupSettingName, GroupSettingValue> {
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
/** Builds the record of a channel to create, with every creation rule checked (nothing written). */
export function planNewChannel(h: Hearth, actor: UserRecord, name: string, description: string, settings: ChannelCreationSettings): Omit<ChannelRecord, "id"> {
  if (settings.is_web_public) throw badRequest("Web-public channels are not enabled.");
  const createGroup = realmGroupSetting(h, settings.invite_only ? "can_create_private_channel_group" : "can_create_public_channel_group");
  if (!isUserInGroupSetting(h, actor, createGroup)) throw badRequest("Insufficient permission");
  if (settings.is_default_stream) {
    if (!isAdmin(actor)) throw mustBeAdmin();
    if (settings.invite_only) throw badRequest("A default channel cannot be private.");
  }
  if (settings.default_push_notifications !== undefined && !isAdmin(actor)) throw mustBeAdmin();
  const groups = newChannelPermissionGroups(h, actor);
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

/** Writes a planned channel inside the subscribe request's transaction; its name may have been taken meanwhile. */
export function writeNewChannel(h: Hearth, record: Omit<ChannelRecord, "id">, isDefault: boolean): ChannelRecord {
  if (getChannelByName(h.store, record.name)) throw badRequest(`Channel name '${record.name}' is already taken.`);
  const channel = { id: h.store.nextId("channel"), ...record };
  putChannel(h.store, channel);
  if (isDefault) setDefaultChannel(h.store, channel.id, true);
  return channel;
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
  // Archived channels take every change but being made default (FL 362; Zulip allows
  // renaming them too): their events reach only archived_channels clients (aboutChannel).
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
    // As POST /default_streams: new users never join an archived channel.
    if (input.is_default_stream && channel.is_archived) throw invalidChannelId();
    defaultChange = input.is_default_stream;
  }
  if (changed.length === 0 && defaultChange === null) return;

  const viewersBefore = new Set(channelViewerIds(h, channel));
  await commit(h, (tx) => {
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
    if (defaultChange !== null) setDefaultChannel(h.store, channel.id, defaultChange);
    notifyChannelUpdated(tx, h, channel, merged, changed, viewersBefore);
    if (defaultChange !== null) notifyDefaultChannels(tx, h);
  });
}

function notifyChannelUpdated(tx: Transaction, h: Hearth, before: ChannelRecord, after: ChannelRecord, changed: string[], viewersBefore: Set<number>): void {
  const viewersAfter = channelViewerIds(h, after);
  const viewersAfterSet = new Set(viewersAfter);
  const lost = [...viewersBefore].filter((id) => !viewersAfterSet.has(id));
  const gained = viewersAfter.filter((id) => !viewersBefore.has(id));
  const stayed = viewersAfter.filter((id) => viewersBefore.has(id));
  if (lost.length > 0) tx.notify(aboutChannel(after, streamDeleteEvent(h, after)), lost);
  if (gained.length > 0) {
    // Subscribers follow in peer_add, so the announced count starts at zero (see notifySubscriptionsAdded).
    tx.notify(aboutChannel(after, { type: "stream", op: "create", streams: [{ ...formatChannel(h, after), subscriber_count: 0 }] }), gained);
    const subscribers = activeSubscriberIds(h, after.id);
    if (subscribers.length > 0) tx.notify(aboutChannel(after, { type: "subscription", op: "peer_add", stream_ids: [after.id], user_ids: subscribers }), gained);
  }
  for (const property of changed) {
    const base = { type: "stream", op: "update", stream_id: after.id, name: before.name, property } as const;
    let event: StreamUpdate;
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
            : ((after as unknown as Record<string, unknown>)[property] as StreamUpdate["value"]),
        };
    }
    tx.notify(aboutChannel(after, event), stayed);
    // The deprecated fields follow can_send_message_group for clients that still read
    // them, when their value changes (Zulip's do_change_stream_group_based_setting):
    // stream_post_policy, then is_announcement_only for legacy mobile clients.
    if (property === "can_send_message_group") {
      const policy = streamPostPolicy(h, after);
      if (policy !== streamPostPolicy(h, before)) {
        tx.notify(aboutChannel(after, { ...base, property: "stream_post_policy", value: policy }), stayed);
        // 2: administrators only, what is_announcement_only meant.
        tx.notify(aboutChannel(after, { ...base, property: "is_announcement_only", value: policy === 2 }), stayed);
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
      if (Object.keys(fields).length > 0) notifyRealmBot(tx, h, "update", bot, fields);
    }
  }
}

// ---------------------------------------------------------------------------
// Archiving

/** DELETE /streams/{stream_id}: archives the channel (kept with its history; Zulip's deactivation). */
export async function checkArchiveChannel(h: Hearth, actor: UserRecord, channelId: number): Promise<void> {
  const channel = accessChannel(h, actor, channelId, { allowArchived: true });
  if (!canAdministerChannel(h, actor, channel)) throw badRequest("You do not have permission to administer this channel.");
  if (channel.is_archived) throw badRequest("Channel is already deactivated");
  const viewers = channelViewerIds(h, channel);
  const wasDefault = isDefaultChannel(h.store, channel.id);
  await commit(h, (tx) => {
    const current = getChannel(h.store, channel.id)!;
    const archived = { ...current, is_archived: true };
    putChannel(h.store, archived);
    setDefaultChannel(h.store, channel.id, false);
    const groupsChanged = removeChannelFromDefaultChannelGroups(h, channel.id);
    tx.notify(
      {
        ...streamDeleteEvent(h, archived),
        archived_update: { type: "stream", op: "update", stream_id: archived.id, name: archived.name, property: "is_archived", value: true },
      },
      viewers,
    );
    if (wasDefault) notifyDefaultChannels(tx, h);
    if (groupsChanged) notifyDefaultChannelGroups(tx, h);
  });
}

// ---------------------------------------------------------------------------
// Consequences of user changes (called by src/actions/users.ts and user_groups.ts)

/**
 * A role change can show or hide channels (guests see only their subscriptions,
 * administrators see every private channel's metadata): `stream create` plus the
 * subscribers as `peer_add` for channels that came into sight, `stream delete` for
 * those that left it (FL 205).
 */
export function notifyUserChannelAccessChanged(tx: Transaction, h: Hearth, before: UserRecord, after: UserRecord): void {
  notifyVisibleChannelsChanged(tx, h, after.id, visibleChannelIds(h, before), visibleChannelIds(h, after));
}

/**
 * The channels (of `among`) `user` may see, to compare before and after a change of
 * role or group membership; archived ones too, whose events go to archived_channels
 * clients only (aboutChannel).
 */
export function visibleChannelIds(h: Hearth, user: UserRecord, among: Iterable<ChannelRecord> = allChannels(h.store)): Set<number> {
  const ids = new Set<number>();
  for (const channel of among) if (hasMetadataAccess(h, user, channel)) ids.add(channel.id);
  return ids;
}

export function notifyVisibleChannelsChanged(tx: Transaction, h: Hearth, userId: number, before: Set<number>, after: Set<number>): void {
  for (const id of before) {
    const channel = getChannel(h.store, id);
    if (channel && !after.has(id)) tx.notify(aboutChannel(channel, streamDeleteEvent(h, channel)), [userId]);
  }
  for (const id of after) {
    const channel = getChannel(h.store, id);
    if (!channel || before.has(id)) continue;
    tx.notify(aboutChannel(channel, { type: "stream", op: "create", streams: [{ ...formatChannel(h, channel), subscriber_count: 0 }] }), [userId]);
    const subscribers = activeSubscriberIds(h, channel.id);
    if (subscribers.length > 0) tx.notify(aboutChannel(channel, { type: "subscription", op: "peer_add", stream_ids: [channel.id], user_ids: subscribers }), [userId]);
  }
}

// ---------------------------------------------------------------------------
// Channel email addresses (read in src/views/channels.ts)

/** At server start: the key that derives channel email tokens, made once per data folder. */
export async function ensureChannelEmailSecret(store: Hearth["store"]): Promise<void> {
  if (getChannelEmailSecret(store)) return;
  await store.commit(() => {
    if (!getChannelEmailSecret(store)) putChannelEmailSecret(store, randomBytes(32).toString("hex"));
  });
}
