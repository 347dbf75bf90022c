import { pathId } from "../http/path";
import { Type as t } from "@sinclair/typebox";
import type { Hearth, GroupSettingValue } from "../context";
import { ApiError } from "../errors";
import { ApiRoutes } from "../http/route";
import { param } from "../http/params";
import { userGroupSettingParams } from "../http/group_params";
import { accessUserGroupForRead, directMemberIds, directSubgroupIds, recursiveMemberIds, recursiveSubgroupIds } from "../access/groups";
import { checkCreateUserGroup, checkDeactivateUserGroup, checkUpdateUserGroup } from "../actions/user_groups";
import { checkUpdateUserGroupMembership, checkUpdateUserGroupSubgroups } from "../actions/user_group_members";
import { accessUser } from "../access/users";
import { listUserGroups } from "../views/user_groups";

const groupIdOf = (path: Record<string, string>) => pathId(path.user_group_id, "user group");

const IdList = t.Array(t.Integer());

/** The six group permissions: initial values (create) and `{new, old}` updates (PATCH). */
const settingParams = userGroupSettingParams.initial;
const settingUpdateParams = userGroupSettingParams.update;
const pickSettings = userGroupSettingParams.pick;

export function userGroupsRoutes(h: Hearth) {
  return new ApiRoutes(h)
    .get("/user_groups", { params: { include_deactivated_groups: param.bool().default(false) } }, ({ params }) => ({
      user_groups: listUserGroups(h, { includeDeactivated: params.include_deactivated_groups }),
    }))
    .post(
      "/user_groups/create",
      {
        params: {
          name: param.string(),
          description: param.string(),
          members: param.json(IdList),
          subgroups: param.json(IdList).default([]),
          ...settingParams,
        },
      },
      async ({ user, params }) => ({
        group_id: await checkCreateUserGroup(h, user, {
          name: params.name,
          description: params.description,
          members: params.members,
          subgroups: params.subgroups,
          settings: pickSettings<GroupSettingValue>(params),
        }),
      }),
    )
    .patch(
      "/user_groups/:user_group_id",
      { params: { name: param.string().optional(), description: param.string().optional(), deactivated: param.bool().optional(), ...settingUpdateParams } },
      async ({ user, params, path }) => {
        await checkUpdateUserGroup(h, user, groupIdOf(path), {
          name: params.name,
          description: params.description,
          deactivated: params.deactivated,
          settings: pickSettings<{ new: GroupSettingValue; old?: GroupSettingValue }>(params),
        });
        return {};
      },
    )
    // Removed in Zulip at FL 294 (groups are deactivated instead); at our level Zulip's
    // router answers 405 for a method the path does not have, with the allowed ones.
    .delete("/user_groups/:user_group_id", { auth: "none" }, () => {
      throw new ApiError("Method Not Allowed", "BAD_REQUEST", 405, { allowed_methods: ["PATCH"] }, { Allow: "PATCH" });
    })
    .post("/user_groups/:user_group_id/deactivate", {}, async ({ user, path }) => {
      await checkDeactivateUserGroup(h, user, groupIdOf(path));
      return {};
    })
    .post(
      "/user_groups/:user_group_id/members",
      { params: { add: param.json(IdList).optional(), delete: param.json(IdList).optional(), add_subgroups: param.json(IdList).optional(), delete_subgroups: param.json(IdList).optional() } },
      async ({ user, params, path }) => {
        await checkUpdateUserGroupMembership(h, user, groupIdOf(path), params);
        return {};
      },
    )
    .get("/user_groups/:user_group_id/members", { params: { direct_member_only: param.bool().default(false) } }, ({ params, path }) => {
      const group = accessUserGroupForRead(h, groupIdOf(path));
      return { members: params.direct_member_only ? [...directMemberIds(h, group)].sort((a, b) => a - b) : recursiveMemberIds(h, group) };
    })
    .get("/user_groups/:user_group_id/members/:user_id", { params: { direct_member_only: param.bool().default(false) } }, ({ params, path }) => {
      const group = accessUserGroupForRead(h, groupIdOf(path));
      const target = accessUser(h, pathId(path.user_id, "user ID"), { allowDeactivated: true });
      const members = params.direct_member_only ? directMemberIds(h, group) : recursiveMemberIds(h, group);
      return { is_user_group_member: members.includes(target.id) };
    })
    .post(
      "/user_groups/:user_group_id/subgroups",
      { params: { add: param.json(IdList).default([]), delete: param.json(IdList).default([]) } },
      async ({ user, params, path }) => {
        await checkUpdateUserGroupSubgroups(h, user, groupIdOf(path), params.add, params.delete);
        return {};
      },
    )
    .get("/user_groups/:user_group_id/subgroups", { params: { direct_subgroup_only: param.bool().default(false) } }, ({ params, path }) => {
      const group = accessUserGroupForRead(h, groupIdOf(path));
      return { subgroups: params.direct_subgroup_only ? [...directSubgroupIds(h, group)].sort((a, b) => a - b) : recursiveSubgroupIds(h, group) };
    });
}
