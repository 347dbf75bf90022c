import type { Hearth } from "../context";
import { badRequest, mustBeAdmin } from "../errors";
import { accessChannelByName } from "../access/channels";
import { defineStatePart } from "../events/state";
import { getChannel, isDefaultChannel, type ChannelRecord } from "../store/channels";
import type { UserRecord } from "../store/users";
import { isAdmin, isGuest } from "../store/users";
import { activeNonGuestUserIds } from "../store/users";

/**
 * Default channel groups (Zulip's DefaultStreamGroup, "experimental" in its API): named
 * sets of channels an organization suggests to new users, beside the default channels
 * everyone joins. Administrators manage them; every non-guest sees them
 * (`realm_default_stream_groups`, the `default_stream_groups` event).
 */
export interface DefaultChannelGroup {
  id: number;
  name: string;
  description: string;
  channel_ids: number[];
}

/** Zulip's DefaultStreamGroup.MAX_NAME_LENGTH and its description column's length. */
const MAX_NAME_LENGTH = 60;
const MAX_DESCRIPTION_LENGTH = 1024;

function allGroups(h: Hearth): DefaultChannelGroup[] {
  return [...h.store.dbs.defaultChannelGroups.getRange({})].map((e) => e.value as DefaultChannelGroup);
}

/** A group as the API shows it. */
export interface DefaultChannelGroupView {
  name: string;
  id: number;
  description: string;
  streams: number[];
}

/** The API form: `streams` are the live channels' IDs in channel-name order (IDs since FL 330), groups sorted by name. */
export function defaultChannelGroupsView(h: Hearth): DefaultChannelGroupView[] {
  return allGroups(h)
    .sort(byName)
    .map((group) => ({
      name: group.name,
      id: group.id,
      description: group.description,
      streams: liveChannels(h, group).sort(byName).map((c) => c.id),
    }));
}

/** Zulip orders groups, and channels in a group, by name (code-point order, as its database does). */
const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** A group's channels that still exist and are not archived. */
function liveChannels(h: Hearth, group: DefaultChannelGroup): ChannelRecord[] {
  return group.channel_ids.map((id) => getChannel(h.store, id)).filter((c): c is ChannelRecord => c !== undefined && !c.is_archived);
}

/**
 * Zulip's lookup_default_stream_groups, for the join page: the live channels of the
 * groups a joining person picked, by name; an unknown name is refused.
 */
export function channelsOfDefaultChannelGroups(h: Hearth, names: readonly string[]): number[] {
  const groups = allGroups(h);
  const ids = new Set<number>();
  for (const name of names) {
    const group = groups.find((g) => g.name === name);
    if (!group) throw badRequest(`Invalid default channel group ${name}`);
    for (const channel of liveChannels(h, group)) ids.add(channel.id);
  }
  return [...ids];
}

defineStatePart("realm_default_stream_groups", ["default_stream_groups"], ({ h, user }) => ({
  // Zulip shows guests none (they are not sent the events either).
  realm_default_stream_groups: user && !isGuest(user) ? defaultChannelGroupsView(h) : [],
}));

/** Zulip's notify_default_stream_groups: the whole list, to every active non-guest. */
export function notifyDefaultChannelGroups(h: Hearth): void {
  h.events.publish({ type: "default_stream_groups", default_stream_groups: defaultChannelGroupsView(h) }, activeNonGuestUserIds(h));
}

function accessGroup(h: Hearth, id: number): DefaultChannelGroup {
  const group = h.store.dbs.defaultChannelGroups.get(id) as DefaultChannelGroup | undefined;
  if (!group) throw badRequest(`Default channel group with id '${id}' does not exist.`);
  return group;
}

/** Zulip's check_default_stream_group_name. */
function checkName(name: string): void {
  if (name.trim() === "") throw badRequest(`Invalid default channel group name '${name}'`);
  if (name.length > MAX_NAME_LENGTH) throw badRequest(`Default channel group name too long (limit: ${MAX_NAME_LENGTH} characters)`);
  if (name.includes("\0")) throw badRequest(`Default channel group name '${name}' contains NULL (0x00) characters.`);
}

function checkNameFree(h: Hearth, name: string): void {
  if (allGroups(h).some((g) => g.name === name)) throw badRequest(`Default channel group '${name}' already exists`);
}

function checkDescription(description: string): void {
  if (description.length > MAX_DESCRIPTION_LENGTH) {
    throw badRequest(`Default channel group description too long (limit: ${MAX_DESCRIPTION_LENGTH} characters)`);
  }
}

function assertMayManage(user: UserRecord): void {
  if (!isAdmin(user)) throw mustBeAdmin();
}

/** A default channel is joined by everyone already: Zulip keeps it out of groups. */
function checkNotDefault(h: Hearth, channel: ChannelRecord, groupName: string): void {
  if (isDefaultChannel(h.store, channel.id)) throw badRequest(`'${channel.name}' is a default channel and cannot be added to '${groupName}'`);
}

/** POST /default_stream_groups/create. */
export async function doCreateDefaultChannelGroup(h: Hearth, user: UserRecord, name: string, description: string, channelNames: string[]): Promise<void> {
  assertMayManage(user);
  const channels = channelNames.map((channelName) => accessChannelByName(h, user, channelName));
  await h.store.commit(() => {
    for (const channel of channels) checkNotDefault(h, channel, name);
    checkName(name);
    checkNameFree(h, name);
    checkDescription(description);
    const id = h.store.nextId("default_channel_group");
    const group: DefaultChannelGroup = { id, name, description, channel_ids: [...new Set(channels.map((c) => c.id))] };
    h.store.dbs.defaultChannelGroups.put(id, group);
  });
  notifyDefaultChannelGroups(h);
}

/** PATCH /default_stream_groups/{group_id}: its name or description. */
export async function doUpdateDefaultChannelGroup(h: Hearth, user: UserRecord, id: number, changes: { name?: string; description?: string }): Promise<void> {
  assertMayManage(user);
  // Zulip's wording; an empty string counts as not passed.
  if (!changes.name && !changes.description) throw badRequest('You must pass "new_description" or "new_group_name".');
  await h.store.commit(() => {
    const group = accessGroup(h, id);
    const next = { ...group };
    if (changes.name !== undefined) {
      if (changes.name === group.name) throw badRequest(`This default channel group is already named '${changes.name}'`);
      checkName(changes.name);
      checkNameFree(h, changes.name);
      next.name = changes.name;
    }
    if (changes.description !== undefined) {
      checkDescription(changes.description);
      next.description = changes.description;
    }
    h.store.dbs.defaultChannelGroups.put(id, next);
  });
  notifyDefaultChannelGroups(h);
}

/** PATCH /default_stream_groups/{group_id}/streams. */
export async function doChangeDefaultChannelGroupChannels(h: Hearth, user: UserRecord, id: number, op: string, channelNames: string[]): Promise<void> {
  assertMayManage(user);
  accessGroup(h, id);
  const channels = channelNames.map((channelName) => accessChannelByName(h, user, channelName));
  if (op !== "add" && op !== "remove") throw badRequest('Invalid value for "op". Specify one of "add" or "remove".');
  await h.store.commit(() => {
    const group = accessGroup(h, id);
    const ids = new Set(group.channel_ids);
    for (const channel of channels) {
      // As Zulip: an added channel counts as present for the rest of the list; a removal
      // checks the group as it was.
      if (op === "add") {
        checkNotDefault(h, channel, group.name);
        if (ids.has(channel.id)) throw badRequest(`Channel '${channel.name}' is already present in default channel group '${group.name}'`);
        ids.add(channel.id);
      } else {
        if (!group.channel_ids.includes(channel.id)) throw badRequest(`Channel '${channel.name}' is not present in default channel group '${group.name}'`);
        ids.delete(channel.id);
      }
    }
    h.store.dbs.defaultChannelGroups.put(id, { ...group, channel_ids: [...ids] });
  });
  notifyDefaultChannelGroups(h);
}

/** DELETE /default_stream_groups/{group_id}. */
export async function doRemoveDefaultChannelGroup(h: Hearth, user: UserRecord, id: number): Promise<void> {
  assertMayManage(user);
  await h.store.commit(() => {
    accessGroup(h, id);
    h.store.dbs.defaultChannelGroups.remove(id);
  });
  notifyDefaultChannelGroups(h);
}

/**
 * Takes an archived channel out of every group, inside the archiving commit (Zulip's
 * do_deactivate_stream). Returns whether any group held it: then the caller announces
 * the groups after its commit.
 */
export function removeChannelFromDefaultChannelGroups(h: Hearth, channelId: number): boolean {
  let changed = false;
  for (const group of allGroups(h)) {
    if (!group.channel_ids.includes(channelId)) continue;
    h.store.dbs.defaultChannelGroups.put(group.id, { ...group, channel_ids: group.channel_ids.filter((id) => id !== channelId) });
    changed = true;
  }
  return changed;
}
