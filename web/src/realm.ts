/**
 * The organization's rules as the client knows them: the `realm_*` fields of POST
 * /register and its `realm` events, and its user groups (`realm_user_groups` and the
 * `user_group` events), which the group settings name. The actions a page offers
 * follow them; the server still decides.
 */
import { onEvent, onRegister } from "./panels";
import { S } from "./state";

export const realm: Record<string, any> = {};
interface Group {
  id: number;
  name: string;
  members: number[];
  direct_subgroup_ids: number[];
  is_system_group?: boolean;
  deactivated?: boolean;
}
export type GroupSetting = number | { direct_members: number[]; direct_subgroups: number[] };
const groups = new Map<number, Group>();

onRegister((state) => {
  for (const key of Object.keys(realm)) delete realm[key];
  for (const [key, value] of Object.entries(state)) if (key.startsWith("realm_") && key !== "realm_users" && key !== "realm_user_groups") realm[key] = value;
  groups.clear();
  for (const g of (state.realm_user_groups ?? []) as Group[]) groups.set(g.id, g);
});

const without = (list: number[], gone: number[]) => list.filter((id) => !gone.includes(id));

onEvent((event) => {
  if (event.type === "realm") {
    if (event.op === "update") realm[`realm_${event.property}`] = event.value;
    if (event.op === "update_dict") for (const [key, value] of Object.entries(event.data ?? {})) realm[`realm_${key}`] = value;
    return;
  }
  if (event.type !== "user_group") return;
  if (event.op === "add") groups.set(event.group.id, event.group);
  else if (event.op === "remove") groups.delete(event.group_id);
  const group = groups.get(event.group_id);
  if (!group) return;
  if (event.op === "add_members") group.members = [...group.members, ...event.user_ids];
  else if (event.op === "remove_members") group.members = without(group.members, event.user_ids);
  else if (event.op === "add_subgroups") group.direct_subgroup_ids = [...group.direct_subgroup_ids, ...event.direct_subgroup_ids];
  else if (event.op === "remove_subgroups") group.direct_subgroup_ids = without(group.direct_subgroup_ids, event.direct_subgroup_ids);
  else if (event.op === "update") Object.assign(group, event.data);
});

export const myRole = (): number => S.users.get(S.me.user_id)?.role ?? (S.me.is_admin ? 200 : 400);
const ROLE_GROUPS: Record<string, number> = { "role:owners": 100, "role:administrators": 200, "role:moderators": 300, "role:members": 400, "role:everyone": 600, "role:internet": 600 };

/** Whether I belong to the group, directly or through its subgroups; role groups by my current role. */
function inGroup(id: number, seen = new Set<number>()): boolean {
  const group = groups.get(id);
  if (!group || group.deactivated || seen.has(id)) return false;
  seen.add(id);
  if (group.is_system_group && group.name in ROLE_GROUPS) return myRole() <= ROLE_GROUPS[group.name];
  if (group.members.includes(S.me.user_id)) return true;
  return group.direct_subgroup_ids.some((sub) => inGroup(sub, seen));
}

/** Whether I am in a group-setting value: a group's ID, or direct members and subgroups. */
export function inGroupSetting(setting: GroupSetting | undefined | null): boolean {
  if (setting === undefined || setting === null) return false;
  if (typeof setting === "number") return inGroup(setting);
  const seen = new Set<number>();
  return setting.direct_members.includes(S.me.user_id) || setting.direct_subgroups.some((id) => inGroup(id, seen));
}
