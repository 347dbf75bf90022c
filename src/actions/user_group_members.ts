/** Who is in a user-defined group: members and subgroups added and removed, and a new account's groups. */
import type { Hearth } from "../context";
import { commit, type Transaction } from "../events/commit";
import { getUser, type UserRecord } from "../store/users";
import { accessUserGroupForRead, checkMayChangeGroups, groupSettingUsesGroup, hasUserGroupAccessForUpdate, recursiveSubgroupIds, usersInGroupSetting, type GroupChangePermission } from "../access/groups";
import { badRequest } from "../errors";
import { allChannels, type ChannelRecord } from "../store/channels";
import { notifyVisibleChannelsChanged, visibleChannelIds } from "./channels";
import { allUserGroups, getUserGroup, addStoredGroupMember, isStoredGroupMember, putUserGroup, removeStoredGroupMember, type UserGroupRecord } from "../store/user_groups";
import { checkActiveUserIds, checkSubgroupIds, publishGroupEvent } from "./user_groups";
import { CHANNEL_GROUP_SETTINGS } from "../schemas/channels";

/**
 * A new account joins user-defined groups in its creation transaction (an invitation
 * link's `group_ids`; call only inside `commit`): groups deleted or deactivated since are
 * skipped. Returns the groups joined, for `notifyGroupsJoined`.
 */
export function joinGroupsInTransaction(h: Hearth, user: UserRecord, groupIds: readonly number[]): UserGroupRecord[] {
  const joined: UserGroupRecord[] = [];
  for (const id of new Set(groupIds)) {
    const group = getUserGroup(h.store, id);
    if (!group || group.is_system_group || group.deactivated) continue;
    addStoredGroupMember(h.store, group.id, user.id);
    joined.push(group);
  }
  return joined;
}

/** The add_members events of `joinGroupsInTransaction`, in its commit. */
export function notifyGroupsJoined(tx: Transaction, h: Hearth, user: UserRecord, groups: readonly UserGroupRecord[]): void {
  for (const group of groups) publishGroupEvent(tx, h, group, { type: "user_group", op: "add_members", group_id: group.id, user_ids: [user.id] });
}

/**
 * POST /user_groups/{id}/members: `add`/`delete` users, and since FL 311
 * `add_subgroups`/`delete_subgroups`, all checked first and written in one transaction.
 * Adding or removing oneself is allowed by `can_join_group` / `can_leave_group`; others
 * by `can_add_members_group` / `can_remove_members_group`; `can_manage_group` and the
 * realm's `can_manage_all_groups` allow both (Zulip's `update_user_group_backend`).
 * Deactivated groups' members may change too (FL 391).
 */
export interface GroupMembershipChange {
  add?: number[];
  delete?: number[];
  add_subgroups?: number[];
  delete_subgroups?: number[];
}

export async function checkUpdateUserGroupMembership(h: Hearth, actor: UserRecord, groupId: number, change: GroupMembershipChange): Promise<void> {
  checkMayChangeGroups(actor);
  const group = accessUserGroupForRead(h, groupId);
  if (group.is_system_group) throw badRequest("Insufficient permission");
  const members = planMemberChange(h, actor, group, change.add ?? [], change.delete ?? []);
  const subgroups =
    change.add_subgroups !== undefined || change.delete_subgroups !== undefined
      ? planSubgroupChange(h, actor, group, change.add_subgroups ?? [], change.delete_subgroups ?? [])
      : { add: [], remove: [] };
  if (members.add.length + members.remove.length + subgroups.add.length + subgroups.remove.length === 0) return;
  // Membership can grant or take away sight of private channels whose settings reach the
  // group: what each affected user saw of those before is compared with what they see after.
  const channels = privateChannelsReachingGroup(h, group.id);
  const affected = new Set(channels.length === 0 ? [] : [...members.add, ...members.remove]);
  if (channels.length > 0) for (const id of [...subgroups.add, ...subgroups.remove]) for (const userId of usersInGroupSetting(h, id)) affected.add(userId);
  const seenBefore = new Map([...affected].map((id) => [id, visibleChannelIds(h, getUser(h.store, id)!, channels)]));
  await commit(h, (tx) => {
    for (const id of members.add) addStoredGroupMember(h.store, group.id, id);
    for (const id of members.remove) removeStoredGroupMember(h.store, group.id, id);
    if (subgroups.add.length + subgroups.remove.length > 0) {
      const current = getUserGroup(h.store, group.id)!;
      const ids = current.direct_subgroup_ids.filter((id) => !subgroups.remove.includes(id));
      for (const id of subgroups.add) if (!ids.includes(id)) ids.push(id);
      putUserGroup(h.store, { ...current, direct_subgroup_ids: ids.sort((a, b) => a - b) });
    }
    const notifyMembers = (op: "add_members" | "remove_members", ids: number[]) => {
      if (ids.length > 0) publishGroupEvent(tx, h, group, { type: "user_group", op, group_id: group.id, user_ids: ids });
    };
    const notifySubgroups = (op: "add_subgroups" | "remove_subgroups", ids: number[]) => {
      if (ids.length > 0) publishGroupEvent(tx, h, group, { type: "user_group", op, group_id: group.id, direct_subgroup_ids: ids });
    };
    notifyMembers("add_members", members.add);
    notifyMembers("remove_members", members.remove);
    notifySubgroups("add_subgroups", subgroups.add);
    notifySubgroups("remove_subgroups", subgroups.remove);
    // The channels each user now sees are read once the change is visible (channels' own notifier publishes).
    tx.afterCommit(() => {
      for (const [id, before] of seenBefore) {
        const user = getUser(h.store, id);
        if (user?.is_active) notifyVisibleChannelsChanged(tx, h, id, before, visibleChannelIds(h, user, channels));
      }
    });
  });
}

/** Private channels with a group setting naming this group or a group that contains it. */
function privateChannelsReachingGroup(h: Hearth, groupId: number): ChannelRecord[] {
  const containing = [...allUserGroups(h.store)].filter((g) => g.id === groupId || recursiveSubgroupIds(h, g).includes(groupId)).map((g) => g.id);
  return [...allChannels(h.store)].filter(
    (channel) =>
      channel.invite_only && !channel.is_archived && CHANNEL_GROUP_SETTINGS.some((name) => containing.some((id) => groupSettingUsesGroup(channel.groups[name], id))),
  );
}

/** POST /user_groups/{id}/subgroups (`add`/`delete`): needs `can_manage_group`. */
export async function checkUpdateUserGroupSubgroups(h: Hearth, actor: UserRecord, groupId: number, add: number[], remove: number[]): Promise<void> {
  return checkUpdateUserGroupMembership(h, actor, groupId, { add_subgroups: add, delete_subgroups: remove });
}

function planMemberChange(h: Hearth, actor: UserRecord, group: UserGroupRecord, add: number[], remove: number[]): { add: number[]; remove: number[] } {
  const addIds = checkActiveUserIds(h, add);
  const removeIds = checkActiveUserIds(h, remove);
  const needs = (ids: number[], self: GroupChangePermission, others: GroupChangePermission) => {
    if (ids.includes(actor.id) && !hasUserGroupAccessForUpdate(h, actor, group, self)) throw badRequest("Insufficient permission");
    if (ids.some((id) => id !== actor.id) && !hasUserGroupAccessForUpdate(h, actor, group, others)) throw badRequest("Insufficient permission");
  };
  needs(addIds, "can_join_group", "can_add_members_group");
  needs(removeIds, "can_leave_group", "can_remove_members_group");
  for (const id of addIds) if (isStoredGroupMember(h.store, group.id, id)) throw badRequest(`User ${id} is already a member of this group`);
  for (const id of removeIds) if (!isStoredGroupMember(h.store, group.id, id)) throw badRequest(`There is no member '${id}' in this user group`);
  return { add: addIds, remove: removeIds };
}

function planSubgroupChange(h: Hearth, actor: UserRecord, group: UserGroupRecord, add: number[], remove: number[]): { add: number[]; remove: number[] } {
  if (!hasUserGroupAccessForUpdate(h, actor, group, "can_manage_group")) throw badRequest("Insufficient permission");
  const addIds = checkSubgroupIds(h, add);
  const removeIds = [...new Set(remove)].sort((a, b) => a - b);
  for (const id of removeIds) if (!getUserGroup(h.store, id)) throw badRequest("Invalid user group ID: " + id);
  for (const id of addIds) {
    if (group.direct_subgroup_ids.includes(id)) throw badRequest(`User group ${id} is already a subgroup of this group.`);
    // A cycle would make membership infinite: the new subgroup must not contain this group.
    if (id === group.id || recursiveSubgroupIds(h, getUserGroup(h.store, id)!).includes(group.id)) {
      throw badRequest(`User group ${group.id} is already a subgroup of one of the passed subgroups.`);
    }
  }
  for (const id of removeIds) if (!group.direct_subgroup_ids.includes(id)) throw badRequest(`User group ${id} is not a subgroup of this group.`);
  return { add: addIds, remove: removeIds };
}
