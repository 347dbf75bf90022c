import { Type as t } from "@sinclair/typebox";
import type { Hearth } from "../context";
import { ApiRoutes } from "../http/route";
import { param } from "../http/params";
import { doDeactivateRealm } from "../actions/realm";

export function realmRoutes(h: Hearth) {
  return new ApiRoutes(h).post(
    "/realm/deactivate",
    // Absent (or JSON null) means no scheduled deletion: allowed because the maximum is null.
    { params: { deletion_delay_days: param.json(t.Union([t.Integer({ minimum: 0 }), t.Null()])).default(null) } },
    async ({ user, params }) => {
      await doDeactivateRealm(h, user, params.deletion_delay_days);
      return {};
    },
  );
}
