import type { Hearth } from "../context";
import { badRequest, mustBeAdmin } from "../errors";
import { accessChannelByName } from "../access/channels";
import { commit, type Transaction } from "../events/commit";
import type { ChannelRecord } from "../store/channels";
import { isDefaultChannel } from "../store/default_channels";
import type { UserRecord } from "../store/users";
import { allDefaultChannelGroups, getDefaultChannelGroup, putDefaultChannelGroup, removeDefaultChannelGroup, type DefaultChannelGroup } from "../store/default_channel_groups";
import { defaultChannelGroupsView } from "../views/default_channel_groups";
import { isAdmin, activeNonGuestUserIds } from "../store/users";

// Default channel groups (src/store/default_channel_groups.ts): administrators manage
// them; every non-guest sees them (src/views/default_channel_groups.ts).

/** Zulip's DefaultStreamGroup.MAX_NAME_LENGTH and its description column's length. */
const MAX_NAME_LENGTH = 60;
const MAX_DESCRIPTION_LENGTH = 1024;

/** Zulip's notify_default_stream_groups: the whole list, to every active non-guest. */
export function notifyDefaultChannelGroups(tx: Transaction, h: Hearth): void {
  tx.notify({ type: "default_stream_groups", default_stream_groups: defaultChannelGroupsView(h) }, activeNonGuestUserIds(h));
}

function accessGroup(h: Hearth, id: number): DefaultChannelGroup {
  const group = getDefaultChannelGroup(h.store, id);
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
  if (allDefaultChannelGroups(h.store).some((g) => g.name === name)) throw badRequest(`Default channel group '${name}' already exists`);
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
  await commit(h, (tx) => {
    for (const channel of channels) checkNotDefault(h, channel, name);
    checkName(name);
    checkNameFree(h, name);
    checkDescription(description);
    const id = h.store.nextId("default_channel_group");
    const group: DefaultChannelGroup = { id, name, description, channel_ids: [...new Set(channels.map((c) => c.id))] };
    putDefaultChannelGroup(h.store, group);
    notifyDefaultChannelGroups(tx, h);
  });
}

/** PATCH /default_stream_groups/{group_id}: its name or description. */
export async function doUpdateDefaultChannelGroup(h: Hearth, user: UserRecord, id: number, changes: { name?: string; description?: string }): Promise<void> {
  assertMayManage(user);
  // Zulip's wording; an empty string counts as not passed.
  if (!changes.name && !changes.description) throw badRequest('You must pass "new_description" or "new_group_name".');
  await commit(h, (tx) => {
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
    putDefaultChannelGroup(h.store, next);
    notifyDefaultChannelGroups(tx, h);
  });
}

/** PATCH /default_stream_groups/{group_id}/streams. */
export async function doChangeDefaultChannelGroupChannels(h: Hearth, user: UserRecord, id: number, op: string, channelNames: string[]): Promise<void> {
  assertMayManage(user);
  accessGroup(h, id);
  const channels = channelNames.map((channelName) => accessChannelByName(h, user, channelName));
  if (op !== "add" && op !== "remove") throw badRequest('Invalid value for "op". Specify one of "add" or "remove".');
  await commit(h, (tx) => {
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
    putDefaultChannelGroup(h.store, { ...group, channel_ids: [...ids] });
    notifyDefaultChannelGroups(tx, h);
  });
}

/** DELETE /default_stream_groups/{group_id}. */
export async function doRemoveDefaultChannelGroup(h: Hearth, user: UserRecord, id: number): Promise<void> {
  assertMayManage(user);
  await commit(h, (tx) => {
    accessGroup(h, id);
    removeDefaultChannelGroup(h.store, id);
    notifyDefaultChannelGroups(tx, h);
  });
}

/**
 * Takes an archived channel out of every group, inside the archiving commit (Zulip's
 * do_deactivate_stream). Returns whether any group held it: then the caller announces
 * the groups (notifyDefaultChannelGroups), after the archiving's own events.
 */
export function removeChannelFromDefaultChannelGroups(h: Hearth, channelId: number): boolean {
  let changed = false;
  for (const group of allDefaultChannelGroups(h.store)) {
    if (!group.channel_ids.includes(channelId)) continue;
    putDefaultChannelGroup(h.store, { ...group, channel_ids: group.channel_ids.filter((id) => id !== channelId) });
    changed = true;
  }
  return changed;
}
