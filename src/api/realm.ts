import { Type as t } from "@sinclair/typebox";
import type { Hearth } from "../context";
import { ApiRoutes } from "../http/route";
import { param } from "../http/params";
import { doDeactivateRealm } from "../actions/realm";
import { doAddRealmDomain, doChangeRealmDomain, doRemoveRealmDomain, getRealmDomains, realmDomainView } from "../actions/realm_domains";

export function realmRoutes(h: Hearth) {
  return new ApiRoutes(h)
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
