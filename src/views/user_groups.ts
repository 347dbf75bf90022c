import type { Hearth } from "../context";
import { allUserGroups, USER_GROUP_SETTINGS, type UserGroupRecord } from "../store/user_groups";
import { directMemberIds, directSubgroupIds } from "../access/groups";

/** A user group as GET /user_groups and register's `realm_user_groups` show it. */
export function formatUserGroup(h: Hearth, group: UserGroupRecord): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: group.id,
    name: group.name,
    description: group.description,
    members: [...directMemberIds(h, group)].sort((a, b) => a - b),
    direct_subgroup_ids: directSubgroupIds(h, group),
    is_system_group: group.is_system_group,
    creator_id: group.creator_id,
    date_created: group.date_created,
    deactivated: group.deactivated,
  };
  for (const name of USER_GROUP_SETTINGS) view[name] = group.settings[name];
  return view;
}

/** Every group, system groups first (they have the lowest IDs); deactivated ones only when asked. */
export function listUserGroups(h: Hearth, options: { includeDeactivated?: boolean } = {}): Record<string, unknown>[] {
  const groups: Record<string, unknown>[] = [];
  for (const g of allUserGroups(h.store)) if (!g.deactivated || options.includeDeactivated) groups.push(formatUserGroup(h, g));
  return groups;
}
