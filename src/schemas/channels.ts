import { Type as t, type Static } from "@sinclair/typebox";
import { GroupSettingValue, Nullable, success } from "./common";

/** The per-channel group settings (Zulip's Stream permission fields), in the API's order. */
export const CHANNEL_GROUP_SETTINGS = [
  "can_add_subscribers_group",
  "can_administer_channel_group",
  "can_create_topic_group",
  "can_delete_any_message_group",
  "can_delete_own_message_group",
  "can_move_messages_out_of_channel_group",
  "can_move_messages_within_channel_group",
  "can_remove_subscribers_group",
  "can_resolve_topics_group",
  "can_send_message_group",
  "can_subscribe_group",
] as const;
export type ChannelGroupSettingName = (typeof CHANNEL_GROUP_SETTINGS)[number];

export const TOPICS_POLICIES = ["inherit", "allow_empty_topic", "disable_empty_topic", "empty_topic_only"] as const;
export type TopicsPolicy = (typeof TOPICS_POLICIES)[number];

/** Zulip's `BasicChannel` (OpenAPI, with the newer fields of addendum §9 and the spec's Channel table). */
export const Channel = t.Object({
  stream_id: t.Integer(),
  name: t.String({ minLength: 1, maxLength: 60 }),
  is_archived: t.Boolean(),
  description: t.String({ maxLength: 1024 }),
  rendered_description: t.String(),
  date_created: t.Integer(),
  creator_id: Nullable(t.Integer()),
  invite_only: t.Boolean(),
  is_web_public: t.Boolean(),
  stream_post_policy: t.Union([t.Literal(1), t.Literal(2), t.Literal(3), t.Literal(4)]),
  is_announcement_only: t.Boolean(),
  message_retention_days: Nullable(t.Integer()),
  history_public_to_subscribers: t.Boolean(),
  first_message_id: Nullable(t.Integer()),
  folder_id: Nullable(t.Integer()),
  topics_policy: t.Union([t.Literal("inherit"), t.Literal("allow_empty_topic"), t.Literal("disable_empty_topic"), t.Literal("empty_topic_only")]),
  is_recently_active: t.Boolean(),
  stream_weekly_traffic: Nullable(t.Integer()),
  subscriber_count: t.Number(),
  default_push_notifications: t.Boolean(),
  can_add_subscribers_group: GroupSettingValue,
  can_administer_channel_group: GroupSettingValue,
  can_create_topic_group: GroupSettingValue,
  can_delete_any_message_group: GroupSettingValue,
  can_delete_own_message_group: GroupSettingValue,
  can_move_messages_out_of_channel_group: GroupSettingValue,
  can_move_messages_within_channel_group: GroupSettingValue,
  can_remove_subscribers_group: GroupSettingValue,
  can_resolve_topics_group: GroupSettingValue,
  can_send_message_group: GroupSettingValue,
  can_subscribe_group: GroupSettingValue,
});

/** OpenAPI `Subscriptions`: the channel plus personal settings; `subscribers` only when asked for. */
export const Subscription = t.Composite([
  Channel,
  t.Object({
    color: t.String({ pattern: "^#[0-9a-f]{6}$" }),
    is_muted: t.Boolean(),
    in_home_view: t.Boolean(),
    pin_to_top: t.Boolean(),
    desktop_notifications: Nullable(t.Boolean()),
    email_notifications: Nullable(t.Boolean()),
    wildcard_mentions_notify: Nullable(t.Boolean()),
    push_notifications: Nullable(t.Boolean()),
    audible_notifications: Nullable(t.Boolean()),
    subscribers: t.Optional(t.Array(t.Integer())),
    partial_subscribers: t.Optional(t.Array(t.Integer())),
  }),
]);

export type ChannelView = Static<typeof Channel>;
export type SubscriptionView = Static<typeof Subscription>;

export const GetSubscriptionsResponse = success({ subscriptions: t.Array(Subscription) });

/** FL 289: keyed by user ID (as a string), each a list of channel names. */
const NamesByUser = t.Record(t.String({ pattern: "^[0-9]+$" }), t.Array(t.String()));
export const SubscribeResponse = success({
  subscribed: NamesByUser,
  already_subscribed: NamesByUser,
  unauthorized: t.Optional(t.Array(t.String())),
  // FL 397: present when send_new_subscription_messages is true (its default).
  new_subscription_messages_sent: t.Optional(t.Boolean()),
});
export const UnsubscribeResponse = success({ removed: t.Array(t.String()), not_removed: t.Array(t.String()) });

export const GetStreamsResponse = success({ streams: t.Array(t.Composite([Channel, t.Object({ is_default: t.Optional(t.Boolean()) })])) });
export const GetStreamResponse = success({ stream: Channel });
export const GetStreamIdResponse = success({ stream_id: t.Integer() });
export const GetSubscribersResponse = success({ subscribers: t.Array(t.Integer()) });
export const SubscriptionStatusResponse = success({ is_subscribed: t.Boolean() });
export const StreamEmailResponse = success({ email: t.String({ pattern: "^[^@\\s]+@[^@\\s]+$" }) });

/** User groups have their own module; GET /user_groups is also checked by the channel tests. */
export { UserGroup, UserGroupsResponse as GetUserGroupsResponse } from "./user_groups";

// Events (OpenAPI `/events` shapes).
export const SubscriptionAddEvent = t.Object({ type: t.Literal("subscription"), op: t.Literal("add"), subscriptions: t.Array(Subscription) });
export const SubscriptionRemoveEvent = t.Object({
  type: t.Literal("subscription"),
  op: t.Literal("remove"),
  subscriptions: t.Array(t.Object({ stream_id: t.Integer(), name: t.String() }, { additionalProperties: false })),
});
export const SubscriptionUpdateEvent = t.Object({
  type: t.Literal("subscription"),
  op: t.Literal("update"),
  stream_id: t.Integer(),
  property: t.String(),
  value: t.Union([t.Integer(), t.Boolean(), t.String()]),
});
export const SubscriptionPeerEvent = t.Object({
  type: t.Literal("subscription"),
  op: t.Union([t.Literal("peer_add"), t.Literal("peer_remove")]),
  stream_ids: t.Array(t.Integer()),
  user_ids: t.Array(t.Integer()),
});
export const StreamCreateEvent = t.Object({ type: t.Literal("stream"), op: t.Literal("create"), streams: t.Array(Channel) });
export const StreamDeleteEvent = t.Object({
  type: t.Literal("stream"),
  op: t.Literal("delete"),
  streams: t.Array(Channel),
  stream_ids: t.Array(t.Integer()),
});
export const StreamUpdateEvent = t.Object({
  type: t.Literal("stream"),
  op: t.Literal("update"),
  stream_id: t.Integer(),
  name: t.String(),
  property: t.String(),
  value: t.Union([t.Integer(), t.Boolean(), t.String(), t.Null(), GroupSettingValue]),
  rendered_description: t.Optional(t.String()),
  history_public_to_subscribers: t.Optional(t.Boolean()),
  is_web_public: t.Optional(t.Boolean()),
});
/** FL 330: the default channels' IDs (channel objects before). */
export const DefaultStreamsEvent = t.Object({ type: t.Literal("default_streams"), default_streams: t.Array(t.Integer()) });
/** A default channel group; `streams` its channels' IDs (FL 330; channel objects before). */
export const DefaultStreamGroup = t.Object(
  { name: t.String(), id: t.Integer(), description: t.String(), streams: t.Array(t.Integer()) },
  { additionalProperties: false },
);
export const DefaultStreamGroupsEvent = t.Object({ type: t.Literal("default_stream_groups"), default_stream_groups: t.Array(DefaultStreamGroup) });
