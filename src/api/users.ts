import type { Hearth } from "../context";
import { Type as t } from "@sinclair/typebox";
import { ProfileDataUpdate } from "./profile_fields";
import { ApiRoutes } from "../http/route";
import { param } from "../http/params";
import { pathId } from "../http/path";
import { checkAdminUpdateUser, checkSetUserActive, doRegenerateApiKey, doSetActive } from "../actions/users";
import { checkCreateBot, checkUpdateBot, checkRegenerateBotApiKey } from "../actions/bots";
import { checkCreateUser } from "../actions/create_user";
import { botDefaultsView, botOwnerEmail, ownBotsView } from "../views/bots";
import { accessBot, accessUserByIdOrEmail, accessManagedBot } from "../access/users";
import { formatUser, ownUserView, usersView } from "../views/users";
import { avatarUrl } from "../views/avatars";

const viewParams = {
  client_gravatar: param.bool().default(true),
  include_custom_profile_fields: param.bool().default(false),
};

const pathUserId = (raw: string) => pathId(raw, "user ID");

/** A bot's defaults, in POST /bots and PATCH /bots/{bot_id}: channel names, "" for none. */
const botDefaultsParams = {
  default_sending_stream: param.string().optional(),
  default_events_register_stream: param.string().optional(),
  default_all_public_streams: param.bool().optional(),
};

export function usersRoutes(h: Hearth) {
  return new ApiRoutes(h)
    // FL 384: `user_ids` restricts the list to those users (IDs not among them are left out).
    .get("/users", { params: { ...viewParams, user_ids: param.json(t.Array(t.Integer())).optional() } }, ({ user, params }) => {
      const members = usersView(h, user, { clientGravatar: params.client_gravatar, includeCustomProfileFields: params.include_custom_profile_fields });
      if (params.user_ids === undefined) return { members };
      const wanted = new Set(params.user_ids);
      return { members: members.filter((m) => wanted.has(m.user_id as number)) };
    })
    .get("/users/me", {}, ({ user }) => ownUserView(h, user))
    .get("/users/:user_id", { params: viewParams }, ({ user, params, path }) => {
      const target = accessUserByIdOrEmail(h, user, path.user_id, { allowDeactivated: true });
      return {
        user: formatUser(h, user, target, {
          clientGravatar: params.client_gravatar,
          includeCustomProfileFields: params.include_custom_profile_fields,
        }),
      };
    })
    .post(
      "/users",
      { params: { email: param.string(), password: param.string(), full_name: param.string() } },
      async ({ user, params }) => {
        const created = await checkCreateUser(h, user, params);
        return { user_id: created.id };
      },
    )
    .patch(
      "/users/:user_id",
      {
        params: {
          full_name: param.string().optional(),
          role: param.int().optional(),
          profile_data: param.json(ProfileDataUpdate).optional(),
        },
      },
      async ({ user, params, path }) => {
        await checkAdminUpdateUser(h, user, pathUserId(path.user_id), params);
        return {};
      },
    )
    .delete(
      "/users/me",
      { params: {} },
      async ({ user }) => {
        await doSetActive(h, user, user.id, false);
        return {};
      },
    )
    .delete(
      "/users/:user_id",
      {
        params: {
          deactivation_notification_comment: param.string({ maxLength: 2000 }).optional(),
          actions: param
            .json(
              t.Object(
                {
                  delete_profile: t.Optional(t.Boolean()),
                  delete_public_channel_messages: t.Optional(t.Boolean()),
                  delete_private_channel_messages: t.Optional(t.Boolean()),
                  delete_direct_messages: t.Optional(t.Boolean()),
                },
                { additionalProperties: false },
              ),
            )
            .default({}),
        },
      },
      async ({ user, path, params }) => {
        await checkSetUserActive(h, user, pathUserId(path.user_id), false, params.actions);
        return {};
      },
    )
    .post("/users/:user_id/reactivate", {}, async ({ user, path }) => {
      await checkSetUserActive(h, user, pathUserId(path.user_id), true);
      return {};
    })
    .post("/users/me/api_key/regenerate", {}, async ({ user }) => ({ api_key: await doRegenerateApiKey(h, user) }))
    .post(
      "/bots",
      {
        params: {
          full_name: param.string(),
          short_name: param.string(),
          bot_type: param.int().default(1),
          // An outgoing-webhook bot's service; Zulip reads `payload_url` as JSON (a quoted string), bare text is accepted too.
          payload_url: param.jsonOrString(t.String()).optional(),
          interface_type: param.int().optional(),
          service_name: param.string().optional(),
          ...botDefaultsParams,
        },
      },
      async ({ user, params, files }) => {
        const { payload_url, interface_type, service_name, ...rest } = params;
        const bot = await checkCreateBot(h, user, { ...rest, service: { payload_url, interface_type, service_name }, avatarFiles: [...files.values()] });
        return { user_id: bot.id, api_key: bot.api_key, avatar_url: avatarUrl(h, bot), ...botDefaultsView(h, bot) };
      },
    )
    .get("/bots", {}, ({ user }) => {
      return { bots: ownBotsView(h, user) };
    })
    .patch(
      "/bots/:bot_id",
      {
        params: {
          full_name: param.string().optional(),
          short_name: param.string().optional(),
          role: param.int().optional(),
          bot_owner_id: param.int().optional(),
          service_payload_url: param.jsonOrString(t.String()).optional(),
          service_interface: param.int().optional(),
          ...botDefaultsParams,
        },
      },
      async ({ user, params, path, files }) => {
        const after = await checkUpdateBot(h, user, pathUserId(path.bot_id), { ...params, avatarFiles: [...files.values()] });
        const owner = botOwnerEmail(h, after);
        // Zulip's answer echoes the service parameters (embedded bots' config_data is not built).
        return {
          full_name: after.full_name,
          avatar_url: avatarUrl(h, after),
          service_interface: params.service_interface ?? 1,
          service_payload_url: params.service_payload_url ?? null,
          config_data: null,
          ...botDefaultsView(h, after),
          ...(owner !== null ? { bot_owner: owner } : {}),
        };
      },
    )
    .delete("/bots/:bot_id", {}, async ({ user, path }) => {
      const bot = accessBot(h, pathUserId(path.bot_id), { allowDeactivated: true });
      await doSetActive(h, user, bot.id, false);
      return {};
    })
    // FL 463: the key of a bot the caller manages (owner or administrator).
    .get("/bots/:bot_id/api_key", {}, ({ user, path }) => ({ api_key: accessManagedBot(h, user, pathUserId(path.bot_id)).api_key }))
    .post("/bots/:bot_id/api_key/regenerate", {}, async ({ user, path }) => {
      return { api_key: await checkRegenerateBotApiKey(h, user, pathUserId(path.bot_id)) };
    });
}
