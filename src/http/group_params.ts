import { Type as t } from "@sinclair/typebox";
import { param, type Param } from "./params";
import { GroupSettingValue } from "../schemas/common";
import { USER_GROUP_SETTINGS } from "../store/user_groups";

/** Zulip's update form for a permission: `{new, old?}` (`old` must match the current value). */
export const GroupSettingUpdate = t.Object({ new: GroupSettingValue, old: t.Optional(GroupSettingValue) });

/**
 * Parameters for a set of group permissions (channels' eleven, user groups' six): as
 * initial values (create), and in the `{new, old}` update form (PATCH).
 */
export function groupSettingParams<N extends string>(names: readonly N[]) {
  return {
    initial: Object.fromEntries(names.map((name) => [name, param.json(GroupSettingValue).optional()])) as Record<N, Param<typeof GroupSettingValue, false>>,
    update: Object.fromEntries(names.map((name) => [name, param.json(GroupSettingUpdate).optional()])) as Record<N, Param<typeof GroupSettingUpdate, false>>,
    /** The permissions a request sets. */
    pick<V>(params: Record<string, unknown>): Partial<Record<N, V>> {
      const out: Partial<Record<N, V>> = {};
      for (const name of names) if (params[name] !== undefined) out[name] = params[name] as V;
      return out;
    },
  };
}

/** The six permissions of a user group. */
export const userGroupSettingParams = groupSettingParams(USER_GROUP_SETTINGS);
