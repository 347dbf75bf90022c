import { Type as t } from "@sinclair/typebox";
import type { Hearth } from "../context";
import { ApiRoutes } from "../http/route";
import { param } from "../http/params";
import { pathId } from "../http/path";
import { doCreateProfileField, doDeleteProfileField, doReorderProfileFields, doSetProfileData, checkProfileData, doUpdateProfileField } from "../actions/profile_fields";
import { profileFieldsView } from "../views/profile_fields";

export const ProfileDataUpdate = t.Array(t.Object({ id: t.Integer(), value: t.Union([t.String(), t.Array(t.Integer())]) }));

const fieldSettings = {
  name: param.string().optional(),
  hint: param.string().optional(),
  field_data: param.json(t.Unknown()).optional(),
  display_in_profile_summary: param.bool().optional(),
  required: param.bool().optional(),
  editable_by_user: param.bool().optional(),
  use_for_user_matching: param.bool().optional(),
};

export function profileFieldRoutes(h: Hearth) {
  return new ApiRoutes(h)
    .get("/realm/profile_fields", {}, () => ({ custom_fields: profileFieldsView(h) }))
    .post("/realm/profile_fields", { params: { field_type: param.int(), ...fieldSettings } }, async ({ user, params }) => {
      const { field_type, ...input } = params;
      return { id: await doCreateProfileField(h, user, field_type, input) };
    })
    .patch("/realm/profile_fields", { params: { order: param.json(t.Array(t.Integer())) } }, async ({ user, params }) => {
      await doReorderProfileFields(h, user, params.order);
      return {};
    })
    .patch("/realm/profile_fields/:field_id", { params: fieldSettings }, async ({ user, params, path }) => {
      await doUpdateProfileField(h, user, pathId(path.field_id, "field ID"), params);
      return {};
    })
    .delete("/realm/profile_fields/:field_id", {}, async ({ user, path }) => {
      await doDeleteProfileField(h, user, pathId(path.field_id, "field ID"));
      return {};
    })
    .patch("/users/me/profile_data", { params: { data: param.json(ProfileDataUpdate) } }, async ({ user, params }) => {
      await doSetProfileData(h, user, checkProfileData(h, user, user, params.data));
      return {};
    })
    .delete("/users/me/profile_data", { params: { data: param.json(t.Array(t.Integer())) } }, async ({ user, params }) => {
      await doSetProfileData(h, user, checkProfileData(h, user, user, params.data.map((id) => ({ id, value: null }))));
      return {};
    });
}
