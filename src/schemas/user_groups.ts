import { type Static, Type as t } from "@sinclair/typebox";
import { GroupSettingValue, Nullable, success } from "./common";

/** A user group as GET /user_groups, register's `realm_user_groups` and `user_group` add events show it. */
export const UserGroup = t.Object({
  id: t.Integer(),
  name: t.String(),
  description: t.String(),
  members: t.Array(t.Integer()),
  direct_subgroup_ids: t.Array(t.Integer()),
  is_system_group: t.Boolean(),
  creator_id: Nullable(t.Integer()),
  date_created: Nullable(t.Integer()),
  deactivated: t.Boolean(),
  can_add_members_group: GroupSettingValue,
  can_join_group: GroupSettingValue,
  can_leave_group: GroupSettingValue,
  can_manage_group: GroupSettingValue,
  can_mention_group: GroupSettingValue,
  can_remove_members_group: GroupSettingValue,
});

const Base = { id: t.Integer(), type: t.Literal("user_group") };

/** The `user_group` event, one object per op (Zulip's OpenAPI event schemas). */
export const UserGroupEvent = t.Union([
  t.Object({ ...Base, op: t.Literal("add"), group: UserGroup }),
  t.Object({
    ...Base,
    op: t.Literal("update"),
    group_id: t.Integer(),
    data: t.Object({
      name: t.Optional(t.String()),
      description: t.Optional(t.String()),
      deactivated: t.Optional(t.Boolean()),
      can_add_members_group: t.Optional(GroupSettingValue),
      can_join_group: t.Optional(GroupSettingValue),
      can_leave_group: t.Optional(GroupSettingValue),
      can_manage_group: t.Optional(GroupSettingValue),
      can_mention_group: t.Optional(GroupSettingValue),
      can_remove_members_group: t.Optional(GroupSettingValue),
    }),
  }),
  t.Object({ ...Base, op: t.Literal("remove"), group_id: t.Integer() }),
  t.Object({ ...Base, op: t.Union([t.Literal("add_members"), t.Literal("remove_members")]), group_id: t.Integer(), user_ids: t.Array(t.Integer()) }),
  t.Object({
    ...Base,
    op: t.Union([t.Literal("add_subgroups"), t.Literal("remove_subgroups")]),
    group_id: t.Integer(),
    direct_subgroup_ids: t.Array(t.Integer()),
  }),
]);

export const UserGroupsResponse = success({ user_groups: t.Array(UserGroup) });
export const CreateUserGroupResponse = success({ group_id: t.Integer() });
export const UserGroupMembersResponse = success({ members: t.Array(t.Integer()) });
export const UserGroupSubgroupsResponse = success({ subgroups: t.Array(t.Integer()) });
export const IsUserGroupMemberResponse = success({ is_user_group_member: t.Boolean() });
export const GroupInUseError = t.Object({
  result: t.Literal("error"),
  code: t.Literal("CANNOT_DEACTIVATE_GROUP_IN_USE"),
  msg: t.String(),
  objections: t.Array(t.Object({ type: t.String(), settings: t.Array(t.String()) })),
});

export type UserGroupJson = Static<typeof UserGroup>;
