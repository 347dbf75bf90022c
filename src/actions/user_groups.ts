import type { Store } from "../store/db";
import type { EventOf } from "../schemas/events";
import type { Hearth } from "../context";
import { commit, type Transaction } from "../events/commit";
import { activeUserIds, allUsers, getUser, Role, type UserRecord } from "../store/users";
import { accessUserGroupForUpdate, applyGroupSettingUpdate, checkGroupSettingValue, checkMayChangeGroups, groupInUse, groupSettingUsesGroup, isFullMember, inRealmGroup, type GroupSettingRules } from "../access/groups";
import { badRequest } from "../errors";
import { getRealm } from "../store/realm";
import { allChannels } from "../store/channels";
import { CHANNEL_GROUP_SETTINGS } from "../schemas/channels";
import { formatUserGroup } from "../views/user_groups";
import { allUserGroups, getUserGroup, getUserGroupByName, isStoredGroupMember, putUserGroup, SYSTEM_GROUPS, USER_GROUP_SETTINGS, type UserGroupRecord, type UserGroupSettingName, type GroupSettingValue, systemGroupId, type SystemGroupName, addStoredGroupMember } from "../store/user_groups";
import { REALM_DEFAULTS, SYSTEM_GROUP_IDS } from "../store/realm_settings";

/**
 * Creates whichever of Zulip's role-based system groups are missing; call only inside
 * `commit`. Runs in realm init's transaction and again at every server start, so a
 * data folder initialised before groups existed gets them (idempotent).
 */
export function createMissingSystemGroups(store: Store): void {
  // Zulip's defaults for system groups' own settings: only administrators manage them.
  const settings: Record<UserGroupSettingName, GroupSettingValue> = {
    can_add_members_group: SYSTEM_GROUP_IDS["role:nobody"],
    can_join_group: SYSTEM_GROUP_IDS["role:nobody"],
    can_leave_group: SYSTEM_GROUP_IDS["role:nobody"],
    can_manage_group: SYSTEM_GROUP_IDS["role:nobody"],
    can_mention_group: SYSTEM_GROUP_IDS["role:everyone"],
    can_remove_members_group: SYSTEM_GROUP_IDS["role:nobody"],
  };
  for (const spec of SYSTEM_GROUPS) {
    if (getUserGroupByName(store, spec.name)) continue;
    putUserGroup(store, {
      id: store.nextId("user_group"),
      name: spec.name,
      description: spec.description,
      is_system_group: true,
      direct_subgroup_ids: [],
      creator_id: null,
      date_created: null,
      deactivated: false,
      settings: { ...settings },
    });
  }
  // Organization settings name system groups by fixed IDs (SYSTEM_GROUP_IDS); they are the
  // first groups of every data folder, so the counter hands out exactly those IDs.
  for (const [name, id] of Object.entries(SYSTEM_GROUP_IDS)) {
    if (getUserGroupByName(store, name)?.id !== id) throw new Error(`System group ${name} does not have ID ${id}`);
  }
}

/** At server start: adds the system groups to a data folder that predates them. */
export async function ensureSystemGroups(store: Store): Promise<void> {
  if (SYSTEM_GROUPS.every((g) => getUserGroupByName(store, g.name))) return;
  await store.commit(() => createMissingSystemGroups(store));
}

/** The system groups a user is a direct member of, by role (Zulip's stored role-group memberships). */
function directSystemGroups(h: Hearth, user: UserRecord | null): Set<number> {
  const ids = new Set<number>();
  if (!user || !user.is_active || user.is_system_bot) return ids;
  const byRole: Record<number, SystemGroupName> = {
    [Role.OWNER]: "role:owners",
    [Role.ADMINISTRATOR]: "role:administrators",
    [Role.MODERATOR]: "role:moderators",
    [Role.MEMBER]: "role:members",
    [Role.GUEST]: "role:everyone",
  };
  const name = byRole[user.role];
  if (name) ids.add(systemGroupId(h.store, name));
  if (user.role === Role.MEMBER && isFullMember(h, user)) ids.add(systemGroupId(h.store, "role:fullmembers"));
  return ids;
}

/**
 * `user_group` add_members / remove_members for the role groups whose direct members
 * changed with a user's creation, role change, deactivation or reactivation. Every
 * user sees every group's members (`realm_user_groups`).
 */
export function notifySystemGroupMembership(tx: Transaction, h: Hearth, before: UserRecord | null, after: UserRecord): void {
  const was = directSystemGroups(h, before);
  const now = directSystemGroups(h, after);
  const everyone = activeUserIds(h);
  for (const id of was) {
    if (!now.has(id)) tx.notify({ type: "user_group", op: "remove_members", group_id: id, user_ids: [after.id] }, everyone);
  }
  for (const id of now) {
    if (!was.has(id)) tx.notify({ type: "user_group", op: "add_members", group_id: id, user_ids: [after.id] }, everyone);
  }
  // FL 303: user-defined groups list only active members, so (re)activation changes them too.
  if (before && before.is_active !== after.is_active) {
    const op = after.is_active ? "add_members" : "remove_members";
    for (const group of allUserGroups(h.store)) {
      if (group.is_system_group || !isStoredGroupMember(h.store, group.id, after.id)) continue;
      publishGroupEvent(tx, h, group, { type: "user_group", op, group_id: group.id, user_ids: [after.id] });
    }
  }
}

/** The users now in role:fullmembers directly (members past the waiting period). */
export function fullMemberIds(h: Hearth): Set<number> {
  const ids = new Set<number>();
  for (const u of allUsers(h.store)) if (u.is_active && !u.is_system_bot && u.role === Role.MEMBER && isFullMember(h, u)) ids.add(u.id);
  return ids;
}

/** After the waiting period changed: role:fullmembers gains and loses members (Zulip's update_users_in_full_members_system_group). */
export function notifyFullMembersChanged(tx: Transaction, h: Hearth, before: ReadonlySet<number>): void {
  const after = fullMemberIds(h);
  const groupId = systemGroupId(h.store, "role:fullmembers");
  const everyone = activeUserIds(h);
  const removed = [...before].filter((id) => !after.has(id));
  const added = [...after].filter((id) => !before.has(id));
  if (removed.length > 0) tx.notify({ type: "user_group", op: "remove_members", group_id: groupId, user_ids: removed.sort((a, b) => a - b) }, everyone);
  if (added.length > 0) tx.notify({ type: "user_group", op: "add_members", group_id: groupId, user_ids: added.sort((a, b) => a - b) }, everyone);
}

// ---------------------------------------------------------------------------
// User-defined groups: create, update, deactivate/reactivate (members and subgroups: user_group_members.ts).
// ---------------------------------------------------------------------------

/** Zulip's `UserGroup.MAX_NAME_LENGTH` and `INVALID_NAME_PREFIXES`. */
export const MAX_USER_GROUP_NAME_LENGTH = 100;
const INVALID_GROUP_NAME_PREFIXES = ["@", "role:", "user:", "stream:", "channel:"];

function checkUserGroupName(h: Hearth, name: string, exceptGroupId?: number): string {
  if (name.trim() === "") throw badRequest("User group name can't be empty!");
  if (name.length > MAX_USER_GROUP_NAME_LENGTH) {
    throw badRequest(`User group name cannot exceed ${MAX_USER_GROUP_NAME_LENGTH} characters.`);
  }
  for (const prefix of INVALID_GROUP_NAME_PREFIXES) {
    if (name.startsWith(prefix)) throw badRequest(`User group name cannot start with '${prefix}'.`);
  }
  const other = getUserGroupByName(h.store, name);
  if (other && other.id !== exceptGroupId) throw badRequest(`User group '${name}' already exists.`);
  return name;
}

/**
 * Zulip's GROUP_PERMISSION_SETTINGS for user groups: which system groups each setting
 * refuses (`role:internet` never: Hearth has no spectators) and the default of a new
 * group ("creator" = an anonymous group of just the creator).
 */
const GROUP_PERMISSION_RULES: Record<UserGroupSettingName, GroupSettingRules & { defaultValue: SystemGroupName | "creator" }> = {
  can_add_members_group: { allowEveryone: false, defaultValue: "creator" },
  can_join_group: { allowEveryone: false, defaultValue: "role:nobody" },
  can_leave_group: { allowEveryone: true, defaultValue: "role:everyone" },
  can_manage_group: { allowEveryone: false, defaultValue: "creator" },
  can_mention_group: { allowEveryone: true, allowOwners: false, defaultValue: "role:everyone" },
  can_remove_members_group: { allowEveryone: false, defaultValue: "role:nobody" },
};

function checkUserGroupSetting(h: Hearth, name: UserGroupSettingName, value: GroupSettingValue): GroupSettingValue {
  return checkGroupSettingValue(h, name, value, GROUP_PERMISSION_RULES[name]);
}

/** Who hears about groups: every active user (all of them see `realm_user_groups`). */
function groupAudience(h: Hearth): readonly number[] {
  return activeUserIds(h);
}

/**
 * Publishes an event about a group. Clients without `include_deactivated_groups` do not
 * know deactivated groups, so they hear nothing about one (Zulip: renaming a deactivated
 * group sends them nothing; we extend that to every change, so their state stays whole).
 */
export function publishGroupEvent(tx: Transaction, h: Hearth, group: UserGroupRecord, event: EventOf<"user_group">): void {
  tx.notify(group.deactivated ? { ...event, without_deactivated_groups: null } : event, groupAudience(h));
}

export interface CreateUserGroupInput {
  name: string;
  description: string;
  members: number[];
  subgroups: number[];
  settings: Partial<Record<UserGroupSettingName, GroupSettingValue>>;
}

export function checkActiveUserIds(h: Hearth, ids: number[]): number[] {
  for (const id of ids) {
    const u = getUser(h.store, id);
    if (!u || !u.is_active || u.is_system_bot) throw badRequest(`Invalid user ID: ${id}`);
  }
  return [...new Set(ids)].sort((a, b) => a - b);
}

/** Subgroup candidates: existing, active groups (deactivated ones are unusable until reactivated). */
export function checkSubgroupIds(h: Hearth, ids: number[]): number[] {
  for (const id of ids) {
    const group = getUserGroup(h.store, id);
    if (!group || group.deactivated) throw badRequest("Invalid user group ID: " + id);
  }
  return [...new Set(ids)].sort((a, b) => a - b);
}

export async function checkCreateUserGroup(h: Hearth, actor: UserRecord, input: CreateUserGroupInput): Promise<number> {
  checkMayChangeGroups(actor);
  if (!inRealmGroup(h, actor, "can_create_groups")) throw badRequest("Insufficient permission");
  const name = checkUserGroupName(h, input.name);
  const members = checkActiveUserIds(h, input.members);
  // FL 311: the creator may add any subgroups, whatever the new group's own permissions.
  const subgroups = checkSubgroupIds(h, input.subgroups);
  const settings = {} as Record<UserGroupSettingName, GroupSettingValue>;
  for (const setting of USER_GROUP_SETTINGS) {
    const given = input.settings[setting];
    const rule = GROUP_PERMISSION_RULES[setting];
    settings[setting] =
      given !== undefined
        ? checkUserGroupSetting(h, setting, given)
        : rule.defaultValue === "creator"
          ? { direct_members: [actor.id], direct_subgroups: [] }
          : systemGroupId(h.store, rule.defaultValue);
  }
  return commit(h, (tx) => {
    // Checked again inside the transaction: a concurrent create may have taken the name.
    checkUserGroupName(h, name);
    const created: UserGroupRecord = {
      id: h.store.nextId("user_group"),
      name,
      description: input.description,
      is_system_group: false,
      direct_subgroup_ids: subgroups,
      creator_id: actor.id,
      date_created: Math.floor(Date.now() / 1000),
      deactivated: false,
      settings,
    };
    putUserGroup(h.store, created);
    for (const id of members) addStoredGroupMember(h.store, created.id, id);
    tx.notify({ type: "user_group", op: "add", group: formatUserGroup(h, created) }, groupAudience(h));
    return created.id;
  });
}

export interface UpdateUserGroupInput {
  name?: string;
  description?: string;
  deactivated?: boolean;
  settings: Partial<Record<UserGroupSettingName, { new: GroupSettingValue; old?: GroupSettingValue }>>;
}

export async function checkUpdateUserGroup(h: Hearth, actor: UserRecord, groupId: number, input: UpdateUserGroupInput): Promise<void> {
  checkMayChangeGroups(actor);
  const settingsGiven = USER_GROUP_SETTINGS.filter((s) => input.settings[s] !== undefined);
  if (input.name === undefined && input.description === undefined && input.deactivated === undefined && settingsGiven.length === 0) {
    throw badRequest("No new data supplied");
  }
  const group = accessUserGroupForUpdate(h, actor, groupId, "can_manage_group");
  const changes: Partial<Pick<UserGroupRecord, "name" | "description">> = {};
  const settingChanges: Partial<UserGroupRecord["settings"]> = {};
  const data: Record<string, unknown> = {};
  if (input.name !== undefined && input.name !== group.name) data.name = changes.name = checkUserGroupName(h, input.name, group.id);
  if (input.description !== undefined && input.description !== group.description) data.description = changes.description = input.description;
  for (const setting of settingsGiven) {
    const value = applyGroupSettingUpdate(h, setting, input.settings[setting]!, group.settings[setting], GROUP_PERMISSION_RULES[setting]);
    if (value === undefined) continue;
    data[setting] = settingChanges[setting] = value;
  }
  // `deactivated=true` does nothing (deactivation has its own endpoint); `false` reactivates (FL 386).
  const reactivate = input.deactivated === false && group.deactivated;
  if (Object.keys(data).length === 0 && !reactivate) return;

  await commit(h, (tx) => {
    // Only this request's changes go onto the stored record: a deactivation or
    // membership change committed meanwhile stays as it is.
    const current = getUserGroup(h.store, group.id)!;
    if (changes.name !== undefined && changes.name !== current.name) checkUserGroupName(h, changes.name, group.id);
    const next = { ...current, ...changes, settings: { ...current.settings, ...settingChanges }, deactivated: reactivate ? false : current.deactivated };
    putUserGroup(h.store, next, current.name);
    if (Object.keys(data).length > 0) {
      // Sent while the group's old status decides who hears it (a rename of a deactivated group reaches only capable clients).
      publishGroupEvent(tx, h, group, { type: "user_group", op: "update", group_id: group.id, data });
    }
    if (reactivate) {
      const update = { type: "user_group", op: "update", group_id: group.id, data: { deactivated: false } } as const;
      const add = { type: "user_group", op: "add", group: formatUserGroup(h, next) } as const;
      tx.notify({ ...update, without_deactivated_groups: add }, groupAudience(h));
    }
  });
}

/** Where a group is used in a permission (Zulip's objections for CANNOT_DEACTIVATE_GROUP_IN_USE). */
function groupObjections(h: Hearth, groupId: number): Record<string, unknown>[] {
  const objections: Record<string, unknown>[] = [];
  const realmSettings = { ...REALM_DEFAULTS, ...(getRealm(h.store)?.settings ?? {}) };
  const realmUses = Object.keys(realmSettings)
    .filter((key) => /_groups?$/.test(key) && groupSettingUsesGroup(realmSettings[key] as GroupSettingValue, groupId))
    .sort();
  if (realmUses.length > 0) objections.push({ type: "realm", settings: realmUses });
  for (const channel of allChannels(h.store)) {
    if (channel.is_archived) continue;
    const uses = CHANNEL_GROUP_SETTINGS.filter((s) => groupSettingUsesGroup(channel.groups[s], groupId));
    if (uses.length > 0) objections.push({ type: "channel", channel_id: channel.id, settings: uses });
  }
  for (const other of allUserGroups(h.store)) {
    if (other.id === groupId || other.deactivated) continue;
    const uses = USER_GROUP_SETTINGS.filter((s) => groupSettingUsesGroup(other.settings[s], groupId));
    if (uses.length > 0) objections.push({ type: "user_group", group_id: other.id, settings: uses });
  }
  return objections;
}

export async function checkDeactivateUserGroup(h: Hearth, actor: UserRecord, groupId: number): Promise<void> {
  checkMayChangeGroups(actor);
  const group = accessUserGroupForUpdate(h, actor, groupId, "can_manage_group");
  if (group.deactivated) return;
  const objections = groupObjections(h, group.id);
  if (objections.length > 0) throw groupInUse(objections);
  await commit(h, (tx) => {
    const current = getUserGroup(h.store, group.id)!;
    putUserGroup(h.store, { ...current, deactivated: true });
    const update = { type: "user_group", op: "update", group_id: group.id, data: { deactivated: true } } as const;
    const remove = { type: "user_group", op: "remove", group_id: group.id } as const;
    tx.notify({ ...update, without_deactivated_groups: remove }, groupAudience(h));
  });
}
