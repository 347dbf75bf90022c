import type { Hearth } from "../context";
import { ApiRoutes } from "../http/route";
import { Param, param, type ParamSpecs } from "../http/params";
import { USER_SETTINGS } from "../views/settings";
import { checkUpdateSettings, checkUpdateUserSettingsDefaults } from "../actions/settings";
import { currentPasswordCheck } from "../auth/login";
import { badRequest } from "../errors";

/** Every personal setting is a PATCH /settings parameter: strings raw, the rest JSON (Zulip's typed_endpoint). */
const settingParams: ParamSpecs = {};
for (const [name, s] of Object.entries(USER_SETTINGS)) {
  const spec = new Param(s.schema, typeof s.default === "string" ? "string" : "json", false);
  // A setting that may be null (twenty_four_hour_time, FL 408) takes JSON null as a value, not as "left out".
  settingParams[name] = name === "twenty_four_hour_time" ? spec.nullMeansNull() : spec;
}

const accountParams = {
  full_name: param.string().optional(),
  email: param.string().optional(),
  old_password: param.string().optional(),
  new_password: param.string().optional(),
  timezone: param.string().optional(),
  email_address_visibility: param.int().optional(),
};

export function settingsRoutes(h: Hearth) {
  return new ApiRoutes(h)
    .patch("/realm/user_settings_defaults", { params: { ...settingParams, email_address_visibility: param.int().optional() } }, async ({ user, params }) => {
      const changes: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(params)) if (value !== undefined) changes[name] = value;
      await checkUpdateUserSettingsDefaults(h, user, changes);
      return {};
    })
    .patch("/settings", { params: { ...settingParams, ...accountParams, target_users: param.string().optional() } }, async ({ user, params }) => {
    // FL 444's bulk change of other users' settings is not offered: refused, so that
    // an administrator's request is not applied to their own settings instead.
    if (params.target_users !== undefined) throw badRequest("Changing other users' settings (target_users) is not supported");
    const { target_users: _bulk, full_name, email, old_password, new_password, timezone, email_address_visibility, ...rest } = params as Record<string, any>;
    const settings: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(rest)) if (value !== undefined) settings[name] = value;
    await checkUpdateSettings(h, user, { settings, full_name, email, old_password, new_password, timezone, email_address_visibility }, currentPasswordCheck(h, user));
    return {};
  });
}
