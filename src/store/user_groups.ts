import { StoreCache } from "./cache";
import { fitsKey, type Store } from "./db";

/**
 * A group-setting value as stored and as sent on the wire: a group ID, or an
 * anonymous group of direct members and subgroups.
 */
export type GroupSettingValue = number | { direct_members: number[]; direct_subgroups: number[] };

/** Zulip's system groups, in the order Zulip creates them (IDs are allocated in this order). */
export const SYSTEM_GROUPS = [
  { name: "role:internet", description: "Everyone on the internet" },
  { name: "role:everyone", description: "Everyone including guests" },
  { name: "role:members", description: "Everyone except guests" },
  { name: "role:fullmembers", description: "Members of this organization, not including new accounts and guests" },
  { name: "role:moderators", description: "Moderators of this organization, including administrators" },
  { name: "role:administrators", description: "Administrators of this organization, including owners" },
  { name: "role:owners", description: "Owners of this organization" },
  { name: "role:nobody", description: "Nobody" },
] as const;
export type SystemGroupName = (typeof SYSTEM_GROUPS)[number]["name"];

/** The group settings every user group carries (Zulip's UserGroup permission fields). */
export const USER_GROUP_SETTINGS = [
  "can_add_members_group",
  "can_join_group",
  "can_leave_group",
  "can_manage_group",
  "can_mention_group",
  "can_remove_members_group",
] as const;
export type UserGroupSettingName = (typeof USER_GROUP_SETTINGS)[number];

export interface UserGroupRecord {
  id: number;
  name: string;
  description: string;
  /** Role-based groups whose membership is derived from user roles, never stored. */
  is_system_group: boolean;
  /** Direct subgroups of user-defined groups; system groups derive theirs (see `systemSubgroups`). */
  direct_subgroup_ids: number[];
  creator_id: number | null;
  /** Unix seconds; null for system groups (Zulip reports none). */
  date_created: number | null;
  deactivated: boolean;
  settings: Record<UserGroupSettingName, GroupSettingValue>;
}

/**
 * Groups by ID and group IDs by lower-cased name, while no group is written: every
 * message send checks the channel's posting group (docs/benchmarks.md). putUserGroup,
 * the only writer of both key spaces, invalidates them.
 */
const groupCache = new StoreCache<number, UserGroupRecord | undefined>();
const groupIdByName = new StoreCache<string, number | undefined>();

export function getUserGroup(store: Store, id: number): UserGroupRecord | undefined {
  return groupCache.get(store, id, () => store.dbs.userGroups.get(id) as UserGroupRecord | undefined);
}

export function getUserGroupByName(store: Store, name: string): UserGroupRecord | undefined {
  // A name from a request (a mention) may be longer than any key: no group has it.
  if (!fitsKey(name)) return undefined;
  const key = name.toLowerCase();
  const id = groupIdByName.get(store, key, () => store.dbs.userGroupsByName.get(key) as number | undefined);
  return id === undefined ? undefined : getUserGroup(store, id);
}

/** Writes a group and keeps the name index in step; call only inside `commit`. */
export function putUserGroup(store: Store, group: UserGroupRecord, previousName?: string): void {
  groupCache.invalidate(store);
  groupIdByName.invalidate(store);
  if (previousName !== undefined && previousName.toLowerCase() !== group.name.toLowerCase()) {
    store.dbs.userGroupsByName.remove(previousName.toLowerCase());
  }
  store.dbs.userGroups.put(group.id, group);
  store.dbs.userGroupsByName.put(group.name.toLowerCase(), group.id);
}

export function* allUserGroups(store: Store): Generator<UserGroupRecord> {
  for (const { value } of store.dbs.userGroups.getRange({})) yield value as UserGroupRecord;
}

/** The ID of a system group; the groups exist from realm init (or server start for older folders). */
export function systemGroupId(store: Store, name: SystemGroupName): number {
  const id = groupIdByName.get(store, name, () => store.dbs.userGroupsByName.get(name) as number | undefined);
  if (id === undefined) throw new Error(`System group ${name} is missing; the data folder was not initialised`);
  return id;
}

/** Direct members stored for a user-defined group. */
export function storedGroupMemberIds(store: Store, groupId: number): number[] {
  const ids: number[] = [];
  for (const key of store.dbs.userGroupMembers.getKeys({ start: [groupId], end: [groupId, Infinity] })) {
    ids.push((key as [number, number])[1]);
  }
  return ids;
}

export function isStoredGroupMember(store: Store, groupId: number, userId: number): boolean {
  return store.dbs.userGroupMembers.get([groupId, userId]) !== undefined;
}

/** Makes `userId` a direct member of a user-defined group; call only inside `commit`. */
export function addStoredGroupMember(store: Store, groupId: number, userId: number): void {
  store.dbs.userGroupMembers.put([groupId, userId], true);
}

/** Call only inside `commit`. */
export function removeStoredGroupMember(store: Store, groupId: number, userId: number): void {
  store.dbs.userGroupMembers.remove([groupId, userId]);
}
