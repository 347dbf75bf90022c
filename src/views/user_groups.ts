import type { Hearth } from "../context";
import type { UserGroupJson } from "../schemas/user_groups";
import { allUserGroups, USER_GROUP_SETTINGS, type UserGroupRecord } from "../store/user_groups";
import { directMemberIds, directSubgroupIds } from "../access/groups";

/** A user group as GET /user_groups and register's `realm_user_groups` show it. */
export function formatUserGroup(h: Hearth, group: UserGroupRecord): UserGroupJson {
  return {
    id: group.id,
    name: group.name,
    description: group.description,
    members: [...directMemberIds(h, group)].sort((a, b) => a - b),
    direct_subgroup_ids: directSubgroupIds(h, group),
    is_system_group: group.is_system_group,
    creator_id: group.creator_id,
    date_created: group.date_created,
    deactivated: group.deactivated,
    ...(Object.fromEntries(USER_GROUP_SETTINGS.map((name) => [name, group.settings[name]])) as Pick<UserGroupJson, (typeof USER_GROUP_SETTINGS)[number]>),
  };
}

/** Every group, system groups first (they have the lowest IDs); deactivated ones only when asked. */
export function listUserGroups(h: Hearth, options: { includeDeactivated?: boolean } = {}): UserGroupJson[] {
  const groups: UserGroupJson[] = [];
  for (const g of allUserGroups(h.store)) if (!g.deactivated || options.includeDeactivated) groups.push(formatUserGroup(h, g));
  return groups;
}
