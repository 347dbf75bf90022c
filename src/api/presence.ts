import type { Hearth } from "../context";
import { badRequest } from "../errors";
import { ApiRoutes } from "../http/route";
import { param } from "../http/params";
import { doUpdatePresence } from "../actions/presence";
import { getRealmPresences, getUserPresence } from "../views/presence";
import { accessUserByIdOrEmail } from "../access/users";

export function presenceRoutes(h: Hearth) {
  return new ApiRoutes(h)
    .post(
      "/users/me/presence",
      {
        params: {
          status: param.string(),
          ping_only: param.bool().default(false),
          new_user_input: param.bool().default(false),
          slim_presence: param.bool().default(false),
          last_update_id: param.int().optional(),
          history_limit_days: param.int().optional(),
        },
      },
      async ({ user, params }) => {
        if (params.status !== "active" && params.status !== "idle") throw badRequest(`Invalid status: ${params.status}`);
        await doUpdatePresence(h, user, params.status);
        if (params.ping_only) return {};
        // A client that passes last_update_id gets only newer rows, in the modern format (FL 263).
        const slim = params.slim_presence || params.last_update_id !== undefined;
        const sinceUpdateId = params.last_update_id !== undefined && params.last_update_id >= 0 ? params.last_update_id : undefined;
        const { presences, presence_last_update_id } = getRealmPresences(h, { slim, sinceUpdateId, historyLimitDays: params.history_limit_days });
        return { presences, server_timestamp: Date.now() / 1000, presence_last_update_id };
      },
    )
    .get("/realm/presence", {}, () => {
      const { presences } = getRealmPresences(h, { slim: false });
      return { presences, server_timestamp: Date.now() / 1000 };
    })
    // The router needs one parameter name per position: `:user_id` holds an ID or an email.
    .get("/users/:user_id/presence", {}, ({ user, path }) => {
      const raw = path.user_id;
      const target = accessUserByIdOrEmail(h, user, raw);
      const presence = getUserPresence(h, target);
      if (!presence) throw badRequest(`No presence data for ${raw}`);
      // server_timestamp from FL 497, as the other presence endpoints give it.
      return { presence, server_timestamp: Date.now() / 1000 };
    });
}
