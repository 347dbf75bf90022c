import { Type as t } from "@sinclair/typebox";
import type { Hearth } from "../context";
import { ApiRoutes } from "../http/route";
import { param } from "../http/params";
import { doDeactivateRealm } from "../actions/realm";
import { doAddRealmDomain, doChangeRealmDomain, doRemoveRealmDomain } from "../actions/realm_domains";
import { getRealmDomains, realmDomainView } from "../views/realm_domains";
import { checkUpdateRealm, REALM_BOOLEAN_SETTINGS, REALM_CHANNEL_SETTINGS, REALM_GROUP_SETTINGS, REALM_TIME_LIMIT_SETTINGS } from "../actions/realm_settings";
import { groupSettingParams } from "../http/group_params";

/** PATCH /realm's parameters: each optional; the JSON-valued ones as Zulip declares them. */
const realmSettingParams = {
  name: param.string().optional(),
  description: param.string().optional(),
  waiting_period_threshold: param.int().optional(),
  message_edit_history_visibility_policy: param.oneOf(["all", "moves", "none"] as const).optional(),
  allow_edit_history: param.bool().optional(),
  empty_topic_display_name: param.string().optional(),
  topics_policy: param.string().optional(),
  default_code_block_language: param.string().optional(),
  ...Object.fromEntries(REALM_BOOLEAN_SETTINGS.map((name) => [name, param.bool().optional()])),
  ...Object.fromEntries(REALM_TIME_LIMIT_SETTINGS.map((name) => [name, param.json(t.Union([t.Integer(), t.Literal("unlimited")])).optional()])),
  ...Object.fromEntries(REALM_CHANNEL_SETTINGS.map((name) => [name, param.int().optional()])),
  ...groupSettingParams(REALM_GROUP_SETTINGS).update,
};

export function realmRoutes(h: Hearth) {
  return new ApiRoutes(h)
    .patch("/realm", { params: realmSettingParams }, async ({ user, params }) => {
      const { name, description, waiting_period_threshold, message_edit_history_visibility_policy, allow_edit_history, empty_topic_display_name, topics_policy, ...settings } = params as Record<string, any>;
      return checkUpdateRealm(h, user, {
        name,
        description,
        waiting_period_threshold,
        message_edit_history_visibility_policy,
        allow_edit_history,
        empty_topic_display_name,
        topics_policy,
        settings,
      });
    })
    .get("/realm/domains", {}, () => ({ domains: getRealmDomains(h).map(realmDomainView) }))
    .post("/realm/domains", { params: { domain: param.string(), allow_subdomains: param.bool() } }, async ({ user, params }) => {
      const added = await doAddRealmDomain(h, user, params.domain, params.allow_subdomains);
      return { new_domain: [added.id, added.domain] };
    })
    .patch("/realm/domains/:domain", { params: { allow_subdomains: param.bool() } }, async ({ user, params, path }) => {
      await doChangeRealmDomain(h, user, path.domain, params.allow_subdomains);
      return {};
    })
    .delete("/realm/domains/:domain", {}, async ({ user, path }) => {
      await doRemoveRealmDomain(h, user, path.domain);
      return {};
    })
    .post(
      "/realm/deactivate",
      // Absent (or JSON null) means no scheduled deletion: allowed because the maximum is null.
      { params: { deletion_delay_days: param.json(t.Union([t.Integer({ minimum: 0 }), t.Null()])).default(null) } },
      async ({ user, params }) => {
        await doDeactivateRealm(h, user, params.deletion_delay_days);
        return {};
      },
    );
}
