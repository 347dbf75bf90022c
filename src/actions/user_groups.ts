import type { Store } from "../store/db";
import type { Hearth } from "../context";
import { allUsers, Role, type UserRecord } from "../store/users";
import { isFullMember } from "../access/groups";
import { SYSTEM_GROUP_IDS } from "../views/realm-settings";
import {
  getUserGroupByName,
  putUserGroup,
  SYSTEM_GROUPS,
  USER_GROUP_SETTINGS,
  type UserGroupRecord,
  type UserGroupSettingName,
  type GroupSettingValue,
  systemGroupId,
  type SystemGroupName,
} from "../store/user_groups";

/**
 * Creates whichever of Zulip's role-based system groups are missing; call only inside
 * `commit`. Runs in realm init's transaction and again at every server start, so a
 * data folder initialised before groups existed gets them (idempotent).
 * Returns how many groups were created.
 */
export function createMissingSystemGroups(store: Store): number {
  let created = 0;
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
      settings: {} as Record<UserGroupSettingName, GroupSettingValue>,
    });
    created++;
  }
  // Organization settings name system groups by fixed IDs (SYSTEM_GROUP_IDS); they are the
  // first groups of every data folder, so the counter hands out exactly those IDs.
  for (const [name, id] of Object.entries(SYSTEM_GROUP_IDS)) {
    if (getUserGroupByName(store, name)?.id !== id) throw new Error(`System group ${name} does not have ID ${id}`);
  }
  // Zulip's defaults for system groups' own settings: only administrators manage them.
  const nobody = getUserGroupByName(store, "role:nobody")!.id;
  const everyone = getUserGroupByName(store, "role:everyone")!.id;
  for (const spec of SYSTEM_GROUPS) {
    const group = getUserGroupByName(store, spec.name)!;
    if (USER_GROUP_SETTINGS.every((k) => group.settings[k] !== undefined)) continue;
    const settings: Record<UserGroupSettingName, GroupSettingValue> = {
      can_add_members_group: nobody,
      can_join_group: nobody,
      can_leave_group: nobody,
      can_manage_group: nobody,
      can_mention_group: everyone,
      can_remove_members_group: nobody,
    };
    putUserGroup(store, { ...group, settings } satisfies UserGroupRecord);
  }
  return created;
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
export function notifySystemGroupMembership(h: Hearth, before: UserRecord | null, after: UserRecord): void {
  const was = directSystemGroups(h, before);
  const now = directSystemGroups(h, after);
  const everyone: number[] = [];
  for (const u of allUsers(h.store)) if (u.is_active && !u.is_system_bot) everyone.push(u.id);
  for (const id of was) {
    if (!now.has(id)) h.events.publish({ type: "user_group", op: "remove_members", group_id: id, user_ids: [after.id] }, everyone);
  }
  for (const id of now) {
    if (!was.has(id)) h.events.publish({ type: "user_group", op: "add_members", group_id: id, user_ids: [after.id] }, everyone);
  }
}
