import type { Hearth } from "../context";
import { ApiError, badRequest } from "../errors";
import { getRealm } from "../store/realm";
import { realmSetting } from "../store/realm_settings";
import { allUsers, getUser, Role, type UserRecord } from "../store/users";
import { getUserGroup, isStoredGroupMember, storedGroupMemberIds, systemGroupId, type GroupSettingValue, type SystemGroupName, type UserGroupRecord } from "../store/user_groups";

const DAY_SECONDS = 86400;

/** Organization-level group settings this layer enforces (defaults in REALM_DEFAULTS). */
export type RealmGroupSettingName =
  | "can_create_public_channel_group"
  | "can_create_private_channel_group"
  | "can_create_web_public_channel_group"
  | "can_add_subscribers_group"
  | "can_add_custom_emoji_group"
  | "can_create_groups"
  | "can_manage_all_groups"
  | "direct_message_permission_group"
  | "direct_message_initiator_group"
  | "can_mention_many_users_group"
  | "can_move_messages_between_topics_group"
  | "can_move_messages_between_channels_group"
  | "can_resolve_topics_group"
  | "can_delete_any_message_group"
  | "can_delete_own_message_group"
  | "can_create_bots_group"
  | "can_create_write_only_bots_group"
  | "create_multiuse_invite_group"
  | "can_invite_users_group";

function realmSettings(h: Hearth): Record<string, unknown> {
  return getRealm(h.store)?.settings ?? {};
}

export function realmGroupSetting(h: Hearth, name: RealmGroupSettingName): GroupSettingValue {
  return realmSetting(realmSettings(h), name) as GroupSettingValue;
}

/** Whether `user` is in an organization group setting (defaults in src/store/realm_settings.ts). */
export function inRealmGroup(h: Hearth, user: UserRecord, name: RealmGroupSettingName): boolean {
  return isUserInGroupSetting(h, user, realmGroupSetting(h, name));
}

/** Days before a new member becomes a full member (`waiting_period_threshold`). */
export function realmWaitingPeriodDays(h: Hearth): number {
  const value = realmSetting(realmSettings(h), "waiting_period_threshold");
  return typeof value === "number" ? value : 0;
}

/** The organization's `message_retention_days` (-1: forever). */
export function realmMessageRetentionDays(h: Hearth): number {
  const value = realmSetting(realmSettings(h), "message_retention_days");
  return typeof value === "number" ? value : -1;
}

/** Zulip's `is_provisional_member` negated: members past the waiting period, and every higher role. */
export function isFullMember(h: Hearth, user: UserRecord): boolean {
  if (user.role <= Role.MODERATOR) return true;
  if (user.role !== Role.MEMBER) return false;
  const days = realmWaitingPeriodDays(h);
  return Date.now() / 1000 - user.date_joined >= days * DAY_SECONDS;
}

/** Role test behind each system group; deactivated users belong to none. */
function inSystemGroup(h: Hearth, user: UserRecord, name: string): boolean {
  if (!user.is_active) return false;
  switch (name) {
    case "role:internet":
    case "role:everyone":
      return true;
    case "role:members":
      return user.role <= Role.MEMBER;
    case "role:fullmembers":
      return isFullMember(h, user);
    case "role:moderators":
      return user.role <= Role.MODERATOR;
    case "role:administrators":
      return user.role <= Role.ADMINISTRATOR;
    case "role:owners":
      return user.role === Role.OWNER;
    default:
      return false;
  }
}

/** System groups' stored shape in Zulip: each role group contains the next stricter one. */
const SYSTEM_SUBGROUP: Partial<Record<SystemGroupName, SystemGroupName>> = {
  "role:internet": "role:everyone",
  "role:everyone": "role:members",
  "role:members": "role:fullmembers",
  "role:fullmembers": "role:moderators",
  "role:moderators": "role:administrators",
  "role:administrators": "role:owners",
};

export function directSubgroupIds(h: Hearth, group: UserGroupRecord): number[] {
  if (!group.is_system_group) return group.direct_subgroup_ids;
  const sub = SYSTEM_SUBGROUP[group.name as SystemGroupName];
  return sub ? [systemGroupId(h.store, sub)] : [];
}

/** Direct members as Zulip stores them: for system groups, the users whose role is exactly that level. */
export function directMemberIds(h: Hearth, group: UserGroupRecord): number[] {
  if (!group.is_system_group) {
    return storedGroupMemberIds(h.store, group.id).filter((id) => getUser(h.store, id)?.is_active);
  }
  const ids: number[] = [];
  for (const u of allUsers(h.store)) {
    if (!u.is_active || u.is_system_bot) continue;
    const exact =
      (group.name === "role:owners" && u.role === Role.OWNER) ||
      (group.name === "role:administrators" && u.role === Role.ADMINISTRATOR) ||
      (group.name === "role:moderators" && u.role === Role.MODERATOR) ||
      (group.name === "role:fullmembers" && u.role === Role.MEMBER && isFullMember(h, u)) ||
      (group.name === "role:members" && u.role === Role.MEMBER) ||
      (group.name === "role:everyone" && u.role === Role.GUEST);
    if (exact) ids.push(u.id);
  }
  return ids;
}

/** Whether `user` belongs to the group, directly or through subgroups (cycles tolerated). */
export function isUserInGroup(h: Hearth, user: UserRecord, groupId: number, seen: Set<number> = new Set()): boolean {
  if (!user.is_active || seen.has(groupId)) return false;
  seen.add(groupId);
  const group = getUserGroup(h.store, groupId);
  if (!group || group.deactivated) return false;
  if (group.is_system_group) return inSystemGroup(h, user, group.name);
  if (isStoredGroupMember(h.store, groupId, user.id)) return true;
  return group.direct_subgroup_ids.some((sub) => isUserInGroup(h, user, sub, seen));
}

/** The group-setting evaluator: a group ID, or `{direct_members, direct_subgroups}` with subgroups recursive. */
export function isUserInGroupSetting(h: Hearth, user: UserRecord, value: GroupSettingValue): boolean {
  if (!user.is_active) return false;
  if (typeof value === "number") return isUserInGroup(h, user, value);
  if (value.direct_members.includes(user.id)) return true;
  const seen = new Set<number>();
  return value.direct_subgroups.some((id) => isUserInGroup(h, user, id, seen));
}

/** Every active user a group-setting value covers (for event recipient lists and group mentions). */
export function usersInGroupSetting(h: Hearth, value: GroupSettingValue): number[] {
  const candidates = storedMembersReachable(h, value);
  const users = candidates ? [...candidates].sort((a, b) => a - b).map((id) => getUser(h.store, id)) : allUsers(h.store);
  const ids: number[] = [];
  for (const u of users) if (u && !u.is_system_bot && isUserInGroupSetting(h, u, value)) ids.push(u.id);
  return ids;
}

/**
 * The stored members of every group a value reaches, a superset of who it covers;
 * undefined when it reaches a system group, whose members are defined by role and
 * need the scan of all users.
 */
function storedMembersReachable(h: Hearth, value: GroupSettingValue): Set<number> | undefined {
  const ids = new Set<number>(typeof value === "number" ? [] : value.direct_members);
  const pending = typeof value === "number" ? [value] : [...value.direct_subgroups];
  const seen = new Set<number>();
  for (let groupId = pending.pop(); groupId !== undefined; groupId = pending.pop()) {
    if (seen.has(groupId)) continue;
    seen.add(groupId);
    const group = getUserGroup(h.store, groupId);
    if (!group) continue;
    if (group.is_system_group) return undefined;
    for (const id of storedGroupMemberIds(h.store, groupId)) ids.add(id);
    pending.push(...group.direct_subgroup_ids);
  }
  return ids;
}

export function isSystemGroupSetting(h: Hearth, value: GroupSettingValue, name: SystemGroupName): boolean {
  return typeof value === "number" && value === systemGroupId(h.store, name);
}

export interface GroupSettingRules {
  /** Zulip's `allow_everyone_group`; `role:internet` is never allowed on this server (no spectators). */
  allowEveryone: boolean;
  allowNobody?: boolean;
  allowOwners?: boolean;
}

/**
 * Validates a group-setting value from a request and returns its canonical form:
 * an anonymous group of exactly one subgroup and no members becomes that group's ID,
 * as Zulip stores it; members and subgroups are deduplicated and sorted.
 */
export function checkGroupSettingValue(h: Hearth, name: string, value: GroupSettingValue, rules: GroupSettingRules): GroupSettingValue {
  const checkGroupId = (id: number): void => {
    const group = getUserGroup(h.store, id);
    if (!group || group.deactivated) throw badRequest("Invalid user group");
    if (!group.is_system_group) return;
    const forbidden =
      group.name === "role:internet" ||
      (group.name === "role:everyone" && !rules.allowEveryone) ||
      (group.name === "role:nobody" && rules.allowNobody === false) ||
      (group.name === "role:owners" && rules.allowOwners === false);
    if (forbidden) throw badRequest(`'${name}' setting cannot be set to '${group.name}' group.`);
  };
  if (typeof value === "number") {
    checkGroupId(value);
    return value;
  }
  const members = [...new Set(value.direct_members)].sort((a, b) => a - b);
  const subgroups = [...new Set(value.direct_subgroups)].sort((a, b) => a - b);
  for (const id of members) {
    const u = getUser(h.store, id);
    if (!u || u.is_system_bot || !u.is_active) throw badRequest(`Invalid user ID: ${id}`);
  }
  for (const id of subgroups) checkGroupId(id);
  if (members.length === 0 && subgroups.length === 1) return subgroups[0];
  return { direct_members: members, direct_subgroups: subgroups };
}

/**
 * A group setting's `{new, old}` update (channels, user groups, the organization):
 * the new canonical value, or undefined when it names what is already set. A stale
 * `old` is a 400, so two admins editing at once cannot overwrite each other unseen.
 */
export function applyGroupSettingUpdate(
  h: Hearth,
  name: string,
  update: { new: GroupSettingValue; old?: GroupSettingValue },
  current: GroupSettingValue,
  rules: GroupSettingRules,
): GroupSettingValue | undefined {
  if (update.old !== undefined && !sameGroupSettingValue(update.old, current)) throw badRequest("'old' value does not match the expected value.");
  const value = checkGroupSettingValue(h, name, update.new, rules);
  return sameGroupSettingValue(value, current) ? undefined : value;
}

/** Whether two group-setting values name the same set (member and subgroup order does not matter). */
export function sameGroupSettingValue(a: GroupSettingValue, b: GroupSettingValue): boolean {
  // A client's `old` may spell a stored group ID as an anonymous group of that one subgroup.
  const canonical = (v: GroupSettingValue) =>
    typeof v !== "number" && v.direct_members.length === 0 && v.direct_subgroups.length === 1 ? v.direct_subgroups[0] : v;
  a = canonical(a);
  b = canonical(b);
  if (typeof a === "number" || typeof b === "number") return a === b;
  const key = (v: { direct_members: number[]; direct_subgroups: number[] }) =>
    JSON.stringify([[...v.direct_members].sort((x, y) => x - y), [...v.direct_subgroups].sort((x, y) => x - y)]);
  return key(a) === key(b);
}

/** Whether a group-setting value names the group, as its ID or among its anonymous subgroups. */
export function groupSettingUsesGroup(value: GroupSettingValue | undefined, groupId: number): boolean {
  if (value === undefined) return false;
  return typeof value === "number" ? value === groupId : value.direct_subgroups.includes(groupId);
}

/** A group for reading (members, subgroups): any existing group, deactivated ones included, as in Zulip. */
export function accessUserGroupForRead(h: Hearth, groupId: number): UserGroupRecord {
  const group = getUserGroup(h.store, groupId);
  if (!group) throw badRequest("Invalid user group");
  return group;
}

/**
 * Zulip's check on the group-changing endpoints: guests never; bots may from FL 496,
 * with the permissions of their own role and groups.
 */
export function checkMayChangeGroups(user: UserRecord): void {
  if (user.role === Role.GUEST) throw badRequest("Not allowed for guest users");
}

/** The group permission a change needs besides `can_manage_group`. */
export type GroupChangePermission = "can_manage_group" | "can_add_members_group" | "can_remove_members_group" | "can_join_group" | "can_leave_group";

/**
 * Zulip's `has_user_group_access_for_update`: the realm's `can_manage_all_groups`, the
 * group's `can_manage_group`, or the named per-action setting. System groups never.
 */
export function hasUserGroupAccessForUpdate(h: Hearth, user: UserRecord, group: UserGroupRecord, permission: GroupChangePermission): boolean {
  if (group.is_system_group) return false;
  if (inRealmGroup(h, user, "can_manage_all_groups")) return true;
  if (isUserInGroupSetting(h, user, group.settings.can_manage_group)) return true;
  return permission !== "can_manage_group" && isUserInGroupSetting(h, user, group.settings[permission]);
}

/** A user-defined group the user may change; Zulip's one message for missing, system and forbidden groups. */
export function accessUserGroupForUpdate(h: Hearth, user: UserRecord, groupId: number, permission: GroupChangePermission): UserGroupRecord {
  const group = accessUserGroupForRead(h, groupId);
  if (!hasUserGroupAccessForUpdate(h, user, group, permission)) throw badRequest("Insufficient permission");
  return group;
}

/** Every group reachable through subgroups (not the group itself), cycles tolerated. */
export function recursiveSubgroupIds(h: Hearth, group: UserGroupRecord): number[] {
  const seen = new Set<number>([group.id]);
  const queue = [...directSubgroupIds(h, group)];
  const out: number[] = [];
  while (queue.length > 0) {
    const id = queue.shift()!;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(id);
    const sub = getUserGroup(h.store, id);
    if (sub) queue.push(...directSubgroupIds(h, sub));
  }
  return out.sort((a, b) => a - b);
}

/** Members of the group and of all its subgroups (GET /user_groups/{id}/members). */
export function recursiveMemberIds(h: Hearth, group: UserGroupRecord): number[] {
  const ids = new Set(directMemberIds(h, group));
  for (const subId of recursiveSubgroupIds(h, group)) {
    const sub = getUserGroup(h.store, subId);
    if (sub) for (const id of directMemberIds(h, sub)) ids.add(id);
  }
  return [...ids].sort((a, b) => a - b);
}

export const groupInUse = (objections: Record<string, unknown>[]) =>
  new ApiError("Cannot deactivate user group in use.", "CANNOT_DEACTIVATE_GROUP_IN_USE", 400, { objections });
