import type { Store } from "../store/db";
import {
  getUserGroupByName,
  putUserGroup,
  SYSTEM_GROUPS,
  USER_GROUP_SETTINGS,
  type UserGroupRecord,
  type UserGroupSettingName,
  type GroupSettingValue,
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
