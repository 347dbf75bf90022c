import { DefaultStreamsEvent, DefaultStreamGroupsEvent, StreamCreateEvent, StreamDeleteEvent, StreamUpdateEvent, SubscriptionAddEvent, SubscriptionPeerEvent, SubscriptionRemoveEvent, SubscriptionUpdateEvent } from "./channels";
import { UserGroupEvent } from "./user_groups";
import { Type as t, type Static, type TProperties, type TSchema } from "@sinclair/typebox";
import { Bool, ErrorEnvelope, Int, List, Nullable, Str, success } from "./common";
import { User } from "./users";
import { RemindersEvent, ScheduledMessagesEvent } from "./scheduled_messages";
import { DisplayRecipientUser, EditHistoryEntry, Reaction } from "./messages";
import { BotService, DevicePushFields, OnboardingStep, RealmBot, SavedSnippet } from "./register";

/**
 * GET /events and every event an action publishes, as Zulip's OpenAPI and the real
 * clients (the mobile app's event parsing, zulip-terminal) describe them. The tests
 * check every delivered event against these schemas.
 */
const BaseEvent = t.Object({ id: Int(), type: Str() });

export const GetEventsResponse = success({ events: List(BaseEvent), queue_id: Str() });

export const BadEventQueueIdError = t.Composite([
  ErrorEnvelope,
  t.Object({ code: t.Literal("BAD_EVENT_QUEUE_ID"), queue_id: Str(), msg: t.String({ pattern: "^Bad event queue ID: " }) }),
]);

/** An event's common part: its queue ID and its type. */
const Ev = <T extends string, P extends TProperties>(type: T, props: P) => t.Object({ id: Int(), type: t.Literal(type), ...props });
const Lits = <V extends string | number>(...vs: V[]) => t.Union(vs.map((v) => t.Literal(v)));

/** OpenAPI `MessagesEvent` (the `message` of a message event: no `flags`, which sit beside it). */
const MessageEventBase = {
  id: Int(),
  sender_id: Int(),
  content: Str(),
  recipient_id: Int(),
  timestamp: Int(),
  client: Str(),
  subject: Str(),
  topic_links: List(t.Object({ text: Str(), url: Str() })),
  is_me_message: Bool(),
  reactions: List(Reaction),
  submessages: List(t.Object({ id: Int(), message_id: Int(), sender_id: Int(), msg_type: Str(), content: Str() })),
  sender_full_name: Str(),
  sender_email: Str(),
  sender_realm_str: Str(),
  avatar_url: Nullable(Str()),
  content_type: Lits("text/html", "text/x-markdown"),
  // Not present if never edited (or edit history is hidden).
  edit_history: t.Optional(List(EditHistoryEntry)),
  last_edit_timestamp: t.Optional(Int()),
  // FL 365
  last_moved_timestamp: t.Optional(Int()),
};
const MessageEventMessage = t.Union([
  // stream_id: "Only present for stream messages"; display_recipient is the channel's name.
  t.Object({ ...MessageEventBase, type: t.Literal("stream"), stream_id: Int(), display_recipient: Str() }),
  t.Object({ ...MessageEventBase, type: t.Literal("private"), display_recipient: List(DisplayRecipientUser) }),
]);

/** OpenAPI `EmojiReactionEvent` plus `message_id`; the deprecated `user` object went away at FL 484. */
const ReactionEvent = (op: "add" | "remove") =>
  Ev("reaction", {
    op: t.Literal(op),
    message_id: Int(),
    emoji_name: Str(),
    emoji_code: Str(),
    reaction_type: Lits("unicode_emoji", "realm_emoji", "zulip_extra_emoji"),
    user_id: Int(),
    user: t.Optional(t.Object({ user_id: Int(), email: Str(), full_name: Str(), is_mirror_dummy: t.Optional(Bool()) })),
  });

/** OpenAPI `Attachments` at FL 508: `create_time` in seconds (FL 443), `message_ids` instead of `messages` (FL 472). */
const EventAttachment = t.Object({ id: Int(), name: Str(), path_id: Str(), size: Int(), create_time: Int(), message_ids: List(Int()) });

/** OpenAPI `CustomProfileField`. */
const CustomProfileFieldSchema = t.Object({
  id: Int(),
  type: Lits(1, 2, 3, 4, 5, 6, 7, 8),
  order: Int(),
  name: Str(),
  hint: Str(),
  field_data: Str(),
  display_in_profile_summary: t.Optional(Bool()),
  required: Bool(),
  // FL 296
  editable_by_user: t.Optional(Bool()),
});

/** OpenAPI `RealmEmoji`: still_url is required but nullable since FL 113. */
const RealmEmojiSchema = t.Object({ id: Str(), name: Str(), source_url: Str(), still_url: Nullable(Str()), deactivated: Bool(), author_id: Nullable(Int()) });

/** OpenAPI `Draft`. Its `required` list (type, to, topic, content) is for requests; drafts the server sends always carry their id and timestamp. */
const DraftSchema = t.Object({ id: Int(), type: Lits("", "stream", "private"), to: List(Int()), topic: Str(), content: Str(), timestamp: Int() });

/** ChannelFolder (addendum §1, FL 389; `order` FL 414). */
const ChannelFolderSchema = t.Object({
  id: Int(),
  name: Str(),
  description: Str(),
  rendered_description: Str(),
  creator_id: Nullable(Int()),
  date_created: Nullable(Int()),
  is_archived: Bool(),
  order: t.Optional(Int()),
});

/** NavigationView (addendum §2, FL 390): `name` only for custom views. */
const NavigationViewSchema = t.Object({ fragment: Str(), is_pinned: Bool(), name: t.Optional(Nullable(Str())) });

/** update_message_flags remove: `message_details[id]`, by message type. */
const UnreadMessageDetails = t.Union([
  t.Object({ type: t.Literal("private"), mentioned: t.Optional(Bool()), user_ids: List(Int()) }),
  t.Object({ type: t.Literal("stream"), mentioned: t.Optional(Bool()), stream_id: Int(), topic: Str(), unmuted_stream_msg: t.Optional(Bool()) }),
]);

const TypingUser = t.Object({ user_id: Int(), email: Str() });
const TypingEvent = (op: "start" | "stop") =>
  t.Union([
    Ev("typing", { op: t.Literal(op), message_type: t.Literal("direct"), sender: TypingUser, recipients: List(TypingUser) }),
    Ev("typing", { op: t.Literal(op), message_type: t.Literal("stream"), sender: TypingUser, stream_id: Int(), topic: Str() }),
  ]);

/** The event shapes this module sends, as the mobile app parses them. */
export const EventSchemas = {
  scheduled_messages: ScheduledMessagesEvent,
  reminders: RemindersEvent,
  heartbeat: t.Object({ id: Int(), type: t.Literal("heartbeat") }),
  invites_changed: t.Object({ id: Int(), type: t.Literal("invites_changed") }),
  realm: t.Union([
    t.Object({ id: Int(), type: t.Literal("realm"), op: t.Literal("update"), property: Str(), value: t.Unknown() }),
    t.Object({ id: Int(), type: t.Literal("realm"), op: t.Literal("update_dict"), property: t.Literal("default"), data: t.Record(Str(), t.Unknown()) }),
    t.Object({ id: Int(), type: t.Literal("realm"), op: t.Literal("deactivated"), realm_id: Int() }),
  ]),
  realm_user: t.Union([
    t.Object({ id: Int(), type: t.Literal("realm_user"), op: t.Literal("add"), person: User }),
    t.Object({ id: Int(), type: t.Literal("realm_user"), op: t.Literal("update"), person: t.Intersect([t.Object({ user_id: Int() }), t.Record(Str(), t.Unknown())]) }),
    t.Object({ id: Int(), type: t.Literal("realm_user"), op: t.Literal("remove"), person: t.Object({ user_id: Int(), full_name: Str() }) }),
  ]),
  realm_bot: t.Union([
    t.Object({ id: Int(), type: t.Literal("realm_bot"), op: t.Literal("add"), bot: RealmBot }),
    t.Object({ id: Int(), type: t.Literal("realm_bot"), op: t.Union([t.Literal("update"), t.Literal("delete"), t.Literal("remove")]), bot: t.Intersect([t.Object({ user_id: Int(), services: t.Optional(List(BotService)) }), t.Record(Str(), t.Unknown())]) }),
  ]),
  presence: t.Union([
    // simplified_presence_events (FL 419)
    t.Object({ id: Int(), type: t.Literal("presence"), presences: t.Record(Str(), t.Object({ active_timestamp: Int(), idle_timestamp: Int() })) }),
    // legacy: what the mobile app and zulip-terminal parse
    t.Object({
      id: Int(),
      type: t.Literal("presence"),
      user_id: Int(),
      email: Str(),
      server_timestamp: t.Number(),
      presence: t.Record(Str(), t.Object({ client: Str(), status: t.Union([t.Literal("active"), t.Literal("idle")]), timestamp: Int(), pushable: Bool() })),
    }),
  ]),
  alert_words: t.Object({ id: Int(), type: t.Literal("alert_words"), alert_words: List(Str()) }),
  onboarding_steps: t.Object({ id: Int(), type: t.Literal("onboarding_steps"), onboarding_steps: List(OnboardingStep) }),
  submessage: t.Object({ id: Int(), type: t.Literal("submessage"), msg_type: Str(), content: Str(), message_id: Int(), sender_id: Int(), submessage_id: Int() }),
  muted_users: t.Object({ id: Int(), type: t.Literal("muted_users"), muted_users: List(t.Object({ id: Int(), timestamp: Int() })) }),
  saved_snippets: t.Union([
    t.Object({ id: Int(), type: t.Literal("saved_snippets"), op: t.Union([t.Literal("add"), t.Literal("update")]), saved_snippet: SavedSnippet }),
    t.Object({ id: Int(), type: t.Literal("saved_snippets"), op: t.Literal("remove"), saved_snippet_id: Int() }),
  ]),
  user_status: t.Object({
    id: Int(),
    type: t.Literal("user_status"),
    user_id: Int(),
    away: t.Optional(Bool()),
    status_text: t.Optional(Str()),
    emoji_name: t.Optional(Str()),
    emoji_code: t.Optional(Str()),
    reaction_type: t.Optional(Str()),
  }),
  user_settings: t.Object({ id: Int(), type: t.Literal("user_settings"), op: t.Literal("update"), property: Str(), value: t.Unknown(), language_name: t.Optional(Str()) }),
  subscription: t.Union([SubscriptionAddEvent, SubscriptionRemoveEvent, SubscriptionUpdateEvent, SubscriptionPeerEvent]),
  stream: t.Union([StreamCreateEvent, StreamDeleteEvent, StreamUpdateEvent]),
  default_streams: DefaultStreamsEvent,
  default_stream_groups: DefaultStreamGroupsEvent,
  user_group: UserGroupEvent,
  message: Ev("message", { message: MessageEventMessage, flags: List(Str()), local_message_id: t.Optional(Str()) }),
  update_message: Ev("update_message", {
    user_id: Nullable(Int()),
    rendering_only: Bool(),
    message_id: Int(),
    message_ids: List(Int()),
    flags: List(Str()),
    edit_timestamp: Int(),
    stream_name: t.Optional(Str()),
    stream_id: t.Optional(Int()),
    new_stream_id: t.Optional(Int()),
    propagate_mode: t.Optional(Lits("change_one", "change_later", "change_all")),
    orig_subject: t.Optional(Str()),
    subject: t.Optional(Str()),
    topic_links: t.Optional(List(t.Object({ text: Str(), url: Str() }))),
    orig_content: t.Optional(Str()),
    orig_rendered_content: t.Optional(Str()),
    prev_rendered_content_version: t.Optional(Int()),
    content: t.Optional(Str()),
    rendered_content: t.Optional(Str()),
    is_me_message: t.Optional(Bool()),
  }),
  update_message_flags: t.Union([
    Ev("update_message_flags", { op: t.Literal("add"), operation: t.Optional(t.Literal("add")), flag: Str(), messages: List(Int()), all: Bool() }),
    Ev("update_message_flags", {
      op: t.Literal("remove"),
      operation: t.Optional(t.Literal("remove")),
      flag: Str(),
      messages: List(Int()),
      // Deprecated; "Will be false for all specified flags".
      all: t.Optional(t.Literal(false)),
      // Only present if the flag is "read".
      message_details: t.Optional(t.Record(Str(), UnreadMessageDetails)),
    }),
  ]),
  delete_message: t.Intersect([
    t.Union([
      Ev("delete_message", { message_type: t.Literal("stream"), stream_id: Int(), topic: Str() }),
      Ev("delete_message", { message_type: t.Literal("private") }),
    ]),
    // message_ids with the bulk_message_deletion capability, else one message_id.
    t.Union([t.Object({ message_ids: List(Int()) }), t.Object({ message_id: Int() })]),
  ]),
  reaction: t.Union([ReactionEvent("add"), ReactionEvent("remove")]),
  typing: t.Union([TypingEvent("start"), TypingEvent("stop")]),
  typing_edit_message: Ev("typing_edit_message", {
    op: Lits("start", "stop"),
    sender_id: Int(),
    message_id: Int(),
    recipient: t.Union([
      t.Object({ type: t.Literal("channel"), channel_id: Int(), topic: Str() }),
      t.Object({ type: t.Literal("direct"), user_ids: List(Int()) }),
    ]),
  }),
  drafts: t.Union([
    Ev("drafts", { op: t.Literal("add"), drafts: List(DraftSchema) }),
    Ev("drafts", { op: t.Literal("update"), draft: DraftSchema }),
    Ev("drafts", { op: t.Literal("remove"), draft_id: Int() }),
  ]),
  navigation_view: t.Union([
    Ev("navigation_view", { op: t.Literal("add"), navigation_view: NavigationViewSchema }),
    Ev("navigation_view", { op: t.Literal("update"), fragment: Str(), data: t.Object({ name: t.Optional(Nullable(Str())), is_pinned: t.Optional(Nullable(Bool())) }) }),
    Ev("navigation_view", { op: t.Literal("remove"), fragment: Str() }),
  ]),
  attachment: t.Union([
    Ev("attachment", { op: Lits("add", "update"), attachment: EventAttachment, upload_space_used: Int() }),
    Ev("attachment", { op: t.Literal("remove"), attachment: t.Object({ id: Int() }), upload_space_used: Int() }),
  ]),
  user_topic: Ev("user_topic", { stream_id: Int(), topic_name: Str(), last_updated: Int(), visibility_policy: Lits(0, 1, 2, 3) }),
  // [channel name, topic, UNIX timestamp] (3-tuples since FL 1).
  muted_topics: Ev("muted_topics", { muted_topics: List(t.Tuple([Str(), Str(), Int()])) }),
  channel_folder: t.Union([
    Ev("channel_folder", { op: t.Literal("add"), channel_folder: ChannelFolderSchema }),
    Ev("channel_folder", {
      op: t.Literal("update"),
      channel_folder_id: Int(),
      data: t.Object({ name: t.Optional(Str()), description: t.Optional(Str()), rendered_description: t.Optional(Str()), is_archived: t.Optional(Bool()) }),
    }),
    Ev("channel_folder", { op: t.Literal("reorder"), order: List(Int()) }),
  ]),
  realm_linkifiers: Ev("realm_linkifiers", { realm_linkifiers: List(t.Object({ id: Int(), pattern: Str(), url_template: Str() })) }),
  realm_playgrounds: Ev("realm_playgrounds", { realm_playgrounds: List(t.Object({ id: Int(), name: Str(), pygments_language: Str(), url_template: Str() })) }),
  realm_domains: t.Union([
    Ev("realm_domains", { op: Lits("add", "change"), realm_domain: t.Object({ domain: Str(), allow_subdomains: Bool() }) }),
    Ev("realm_domains", { op: t.Literal("remove"), domain: Str() }),
  ]),
  realm_emoji: t.Union([
    Ev("realm_emoji", { op: t.Literal("update"), realm_emoji: t.Record(Str(), RealmEmojiSchema) }),
    // individual_emoji_changes (FL 491): the new emoji in `emoji`.
    Ev("realm_emoji", { op: t.Literal("add"), emoji: RealmEmojiSchema }),
    Ev("realm_emoji", { op: t.Literal("update_one"), emoji_id: Str(), data: t.Object({ deactivated: t.Optional(Bool()) }) }),
  ]),
  // FL 468/470: `update` carries only the fields that changed (the mobile app tells absent from null).
  device: t.Union([
    Ev("device", { op: Lits("add", "remove"), device_id: Int() }),
    Ev("device", {
      op: t.Literal("update"),
      device_id: Int(),
      push_key_id: t.Optional(DevicePushFields.push_key_id),
      push_token_id: t.Optional(DevicePushFields.push_token_id),
      pending_push_token_id: t.Optional(DevicePushFields.pending_push_token_id),
      push_token_last_updated_timestamp: t.Optional(DevicePushFields.push_token_last_updated_timestamp),
      push_registration_error_code: t.Optional(DevicePushFields.push_registration_error_code),
    }),
  ]),
  custom_profile_fields: Ev("custom_profile_fields", { fields: List(CustomProfileFieldSchema) }),
  realm_user_settings_defaults: Ev("realm_user_settings_defaults", { op: t.Literal("update"), property: Str(), value: t.Union([Bool(), Int(), Str()]) }),
} satisfies Record<string, TSchema>;

/** A schema's type, with every array readonly: a published event's lists are never changed, and a readonly list may fill one. */
type Frozen<T> = T extends readonly (infer U)[] ? readonly Frozen<U>[] : T extends object ? { readonly [K in keyof T]: Frozen<T[K]> } : T;
type WithoutId<T> = T extends unknown ? Frozen<Omit<T, "id">> : never;

type ClientEvent = WithoutId<{ [K in keyof typeof EventSchemas]: Static<(typeof EventSchemas)[K]> }[keyof typeof EventSchemas]>;

/** The events of one type, e.g. `EventOf<"update_message">`. */
export type EventOf<K extends keyof typeof EventSchemas> = Extract<ClientEvent, { readonly type: K }>;

export type SubscriptionAddBothForms = Extract<EventOf<"subscription">, { readonly op: "add" }> & {
  readonly resolved_subscriptions: Extract<EventOf<"subscription">, { readonly op: "add" }>["subscriptions"];
};

/**
 * Events published with both forms of a capability-dependent payload, of which
 * src/events/shaping.ts gives each queue the one its client asked for: a client never
 * receives them as such.
 */
type ShapedOnDelivery =
  | (Extract<EventOf<"subscription">, { readonly op: "add" }> & { readonly resolved_subscriptions: Extract<EventOf<"subscription">, { readonly op: "add" }>["subscriptions"] })
  | (Extract<EventOf<"stream">, { readonly op: "delete" | "create" }> & { readonly archived_update: Extract<EventOf<"stream">, { readonly op: "update" }> })
  | (Extract<EventOf<"subscription">, { readonly op: "add" }> & {
      readonly resolved_subscriptions: Extract<EventOf<"subscription">, { readonly op: "add" }>["subscriptions"];
      readonly only_without_archived_channels: true;
    })
  | (Extract<EventOf<"subscription">, { readonly user_ids: readonly number[] }> & { readonly only_without_archived_channels: true })
  // Changes to an archived channel, for clients with the archived_channels capability only (FL 362).
  | ((EventOf<"stream"> | EventOf<"subscription"> | SubscriptionAddBothForms) & { readonly only_with_archived_channels: true })
  | (Extract<EventOf<"presence">, { readonly presences: unknown }> & { readonly legacy: Omit<Extract<EventOf<"presence">, { readonly user_id: number }>, "type"> })
  | (EventOf<"message"> & { readonly message: { readonly rendered_content: string } })
  | (Extract<EventOf<"realm_emoji">, { readonly op: "update" }> & { readonly individual: Extract<EventOf<"realm_emoji">, { readonly op: "add" | "update_one" }> })
  | (EventOf<"user_group"> & { readonly without_deactivated_groups: EventOf<"user_group"> | null });

/**
 * Every event an action may publish, as the schemas above describe it (the tests
 * check every delivered event against them), without the `id` each queue gives its
 * copy. `tx.notify` takes only these.
 */
export type TypedEvent = ClientEvent | ShapedOnDelivery;

/** The payload shapes view builders return, as events and responses carry them. */
export type MessageEventJson = Static<typeof MessageEventMessage>;
export type AttachmentJson = Static<typeof EventAttachment>;
export type CustomProfileFieldJson = Static<typeof CustomProfileFieldSchema>;
export type RealmEmojiJson = Static<typeof RealmEmojiSchema>;
export type NavigationViewJson = Static<typeof NavigationViewSchema>;
