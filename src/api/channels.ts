import { pathId } from "../http/path";
import { Type as t } from "@sinclair/typebox";
import type { Hearth, GroupSettingValue } from "../context";
import { ApiRoutes } from "../http/route";
import { param } from "../http/params";
import { checkArchiveChannel, checkUpdateChannel } from "../actions/channels";
import { checkUnarchiveChannel } from "../actions/channel_unarchive";
import type { RetentionInput } from "../actions/channel_checks";
import { checkSetDefaultChannel } from "../actions/default_channels";
import { checkCreateChannel, checkSubscribe } from "../actions/subscriptions";
import { checkUnsubscribe } from "../actions/unsubscribe";
import { checkUpdateOwnSubscriptions } from "../actions/own_subscriptions";
import { checkUpdateSubscriptionProperties } from "../actions/subscription_properties";
import { accessChannel, accessChannelByName } from "../access/channels";
import { CHANNEL_GROUP_SETTINGS, TOPICS_POLICIES, type ChannelGroupSettingName, type TopicsPolicy } from "../schemas/channels";
import { groupSettingParams } from "../http/group_params";
import { activeSubscriberIds, formatChannel, getChannelEmailAddress, streamPostPolicyGroupId, subscriptionStatusView, userChannelsView } from "../views/channels";
// Also registers the channel parts of POST /register.
import { listChannels, subscriptionsState } from "../views/channel_state";
import { accessUser } from "../access/users";

/** `{stream_id}` path segments. */
export const pathChannelId = (raw: string): number => pathId(raw, "channel ID");

const retentionParam = () =>
  param.jsonOrString(t.Union([t.Integer(), t.Literal("realm_default"), t.Literal("unlimited"), t.Literal("forever")])).optional();
const topicsPolicyParam = () => param.jsonOrString(t.Union(TOPICS_POLICIES.map((p) => t.Literal(p)))).optional();

/** The eleven channel permissions: initial values (subscribe) and `{new, old}` updates (PATCH /streams). */
const channelGroupParams = groupSettingParams(CHANNEL_GROUP_SETTINGS);
const groupParams = channelGroupParams.initial;

/** The settings of a new channel, as the subscribe and create requests both take them. */
const newChannelParams = {
  announce: param.bool().default(false),
  invite_only: param.bool().default(false),
  is_web_public: param.bool().default(false),
  is_default_stream: param.bool().default(false),
  history_public_to_subscribers: param.bool().optional(),
  message_retention_days: retentionParam(),
  default_push_notifications: param.bool().optional(),
  topics_policy: topicsPolicyParam(),
  folder_id: param.int().optional(),
  send_new_subscription_messages: param.bool().default(true),
  ...groupParams,
};
const groupUpdateParams = channelGroupParams.update;
const pickGroups = channelGroupParams.pick;

/** A new channel's settings, as the subscribe and create requests both name them. */
function newChannelSettings(
  params: {
    invite_only: boolean;
    is_web_public: boolean;
    is_default_stream: boolean;
    history_public_to_subscribers?: boolean;
    message_retention_days?: unknown;
    default_push_notifications?: boolean;
    topics_policy?: string;
    folder_id?: number;
  },
  groups: Partial<Record<ChannelGroupSettingName, GroupSettingValue>>,
) {
  return {
    invite_only: params.invite_only,
    is_web_public: params.is_web_public,
    is_default_stream: params.is_default_stream,
    history_public_to_subscribers: params.history_public_to_subscribers,
    message_retention_days: params.message_retention_days as RetentionInput | undefined,
    default_push_notifications: params.default_push_notifications,
    topics_policy: (params.topics_policy ?? "inherit") as TopicsPolicy,
    folder_id: params.folder_id,
    groups,
  };
}

export function channelsRoutes(h: Hearth) {
  return new ApiRoutes(h)
    // The older single call for both (Zulip's update-subscriptions).
    .patch(
      "/users/me/subscriptions",
      {
        params: {
          delete: param.json(t.Array(t.String())).default([]),
          add: param.json(t.Array(t.Object({ name: t.String(), color: t.Optional(t.String()), description: t.Optional(t.String()) }))).default([]),
        },
      },
      async ({ user, params }) => ({ ...(await checkUpdateOwnSubscriptions(h, user, params.delete, params.add)) }),
    )
    .get("/users/me/subscriptions", { params: { include_subscribers: param.bool().default(false) } }, ({ user, params }) => ({
      subscriptions: subscriptionsState(h, user, { includeSubscribers: params.include_subscribers, notificationSettingsNull: true }),
    }))
    .post(
      "/users/me/subscriptions",
      {
        params: {
          subscriptions: param.json(t.Array(t.Object({ name: t.String(), description: t.Optional(t.String()), color: t.Optional(t.String()) }))),
          principals: param.json(t.Union([t.Array(t.String()), t.Array(t.Integer())])).optional(),
          authorization_errors_fatal: param.bool().default(true),
          ...newChannelParams,
          stream_post_policy: param.int().optional(),
        },
      },
      async ({ user, params }) => {
        const groups = pickGroups<GroupSettingValue>(params);
        if (params.stream_post_policy !== undefined && groups.can_send_message_group === undefined) {
          groups.can_send_message_group = streamPostPolicyGroupId(h, params.stream_post_policy);
        }
        return {
          ...(await checkSubscribe(h, user, {
            subscriptions: params.subscriptions,
            principals: params.principals,
            authorizationErrorsFatal: params.authorization_errors_fatal,
            announce: params.announce,
            sendNewSubscriptionMessages: params.send_new_subscription_messages,
            creation: newChannelSettings(params, groups),
          })),
        };
      },
    )
    // FL 417: a channel created with the subscribe request's settings, its subscribers by ID.
    .post(
      "/channels/create",
      {
        params: {
          name: param.string(),
          description: param.string().default(""),
          subscribers: param.json(t.Array(t.Integer())),
          ...newChannelParams,
        },
      },
      async ({ user, params }) =>
        checkCreateChannel(h, user, {
          name: params.name,
          description: params.description,
          subscribers: params.subscribers,
          announce: params.announce,
          sendNewSubscriptionMessages: params.send_new_subscription_messages,
          creation: newChannelSettings(params, pickGroups<GroupSettingValue>(params)),
        }),
    )
    .delete(
      "/users/me/subscriptions",
      {
        params: {
          subscriptions: param.json(t.Array(t.String())),
          principals: param.json(t.Union([t.Array(t.String()), t.Array(t.Integer())])).optional(),
        },
      },
      async ({ user, params }) => ({ ...(await checkUnsubscribe(h, user, params.subscriptions, params.principals)) }),
    )
    .post(
      "/users/me/subscriptions/properties",
      {
        params: {
          subscription_data: param.json(
            t.Array(t.Object({ stream_id: t.Integer(), property: t.String(), value: t.Union([t.Boolean(), t.String(), t.Integer()]) })),
          ),
        },
      },
      async ({ user, params }) => {
        await checkUpdateSubscriptionProperties(h, user, params.subscription_data);
        return {};
      },
    )
    .post("/users/me/subscriptions/:stream_id", { params: singlePropertyParams }, async ({ user, params, path }) => {
      await checkUpdateSubscriptionProperties(h, user, [{ stream_id: pathChannelId(path.stream_id), ...params }]);
      return {};
    })
    .patch("/users/me/subscriptions/:stream_id", { params: singlePropertyParams }, async ({ user, params, path }) => {
      await checkUpdateSubscriptionProperties(h, user, [{ stream_id: pathChannelId(path.stream_id), ...params }]);
      return {};
    })
    .get(
      "/streams",
      {
        params: {
          include_public: param.bool().default(true),
          include_web_public: param.bool().default(false),
          include_subscribed: param.bool().default(true),
          include_all_active: param.bool().default(false),
          include_all: param.bool().default(false),
          include_can_access_content: param.bool().default(false),
          include_default: param.bool().default(false),
          include_owner_subscribed: param.bool().default(false),
          exclude_archived: param.bool().default(true),
        },
      },
      ({ user, params }) => ({ streams: listChannels(h, user, params) }),
    )
    .get("/streams/:stream_id", {}, ({ user, path }) => ({
      stream: formatChannel(h, accessChannel(h, user, pathChannelId(path.stream_id), { allowArchived: true })),
    }))
    .get("/get_stream_id", { params: { stream: param.string() } }, ({ user, params }) => ({
      stream_id: accessChannelByName(h, user, params.stream).id,
    }))
    .get("/streams/:stream_id/members", {}, ({ user, path }) => {
      const channel = accessChannel(h, user, pathChannelId(path.stream_id), { allowArchived: true });
      return { subscribers: activeSubscriberIds(h, channel.id) };
    })
    .get("/users/:user_id/subscriptions/:stream_id", {}, ({ user, path }) => {
      const target = accessUser(h, pathId(path.user_id, "user ID"), { allowDeactivated: true });
      const channel = accessChannel(h, user, pathChannelId(path.stream_id), { allowArchived: true });
      return subscriptionStatusView(h, channel, target);
    })
    // FL 440; bots may be asked about too (FL 458), and deactivated users as in the per-channel check above.
    .get("/users/:user_id/channels", {}, ({ user, path }) =>
      userChannelsView(h, user, accessUser(h, pathId(path.user_id, "user ID"), { allowDeactivated: true })),
    )
    .get("/streams/:stream_id/email_address", { params: { sender_id: param.int().optional() } }, ({ user, params, path }) => ({
      email: getChannelEmailAddress(h, user, pathChannelId(path.stream_id), params.sender_id),
    }))
    .patch(
      "/streams/:stream_id",
      {
        params: {
          description: param.string().optional(),
          new_name: param.string().optional(),
          is_private: param.bool().optional(),
          is_web_public: param.bool().optional(),
          history_public_to_subscribers: param.bool().optional(),
          is_default_stream: param.bool().optional(),
          message_retention_days: retentionParam(),
          topics_policy: topicsPolicyParam(),
          folder_id: param.json(t.Union([t.Integer(), t.Null()])).optional().nullMeansNull(),
          stream_post_policy: param.int().optional(),
          is_announcement_only: param.bool().optional(),
          // FL 388: false unarchives (before any other change is applied); true archives, after them.
          is_archived: param.bool().optional(),
          ...groupUpdateParams,
        },
      },
      async ({ user, params, path }) => {
        const raw = params as Record<string, unknown>;
        const channelId = pathChannelId(path.stream_id);
        if (params.is_archived === false) await checkUnarchiveChannel(h, user, channelId);
        const others = Object.entries(raw).some(([name, value]) => name !== "is_archived" && value !== undefined);
        if (others || params.is_archived === undefined) {
          await checkUpdateChannel(h, user, channelId, {
            new_name: params.new_name,
            description: params.description,
            is_private: params.is_private,
            is_web_public: params.is_web_public,
            history_public_to_subscribers: params.history_public_to_subscribers,
            is_default_stream: params.is_default_stream,
            message_retention_days: params.message_retention_days as RetentionInput | undefined,
            topics_policy: params.topics_policy as TopicsPolicy | undefined,
            folder_id: params.folder_id,
            stream_post_policy: params.stream_post_policy ?? (params.is_announcement_only === undefined ? undefined : params.is_announcement_only ? 2 : 1),
            groups: pickGroups<{ new: GroupSettingValue; old?: GroupSettingValue }>(raw),
          });
        }
        if (params.is_archived === true) await checkArchiveChannel(h, user, channelId);
        return {};
      },
    )
    .delete("/streams/:stream_id", {}, async ({ user, path }) => {
      await checkArchiveChannel(h, user, pathChannelId(path.stream_id));
      return {};
    })
    .post("/default_streams", { params: { stream_id: param.int() } }, async ({ user, params }) => {
      await checkSetDefaultChannel(h, user, params.stream_id, true);
      return {};
    })
    .delete("/default_streams", { params: { stream_id: param.int() } }, async ({ user, params }) => {
      await checkSetDefaultChannel(h, user, params.stream_id, false);
      return {};
    });
}

const singlePropertyParams = {
  property: param.string(),
  value: param.jsonOrString(t.Union([t.Boolean(), t.String(), t.Integer()])),
};


