import { Type as t } from "@sinclair/typebox";
import { Nullable, success } from "./common";

/** OpenAPI `EmojiReaction` (with the deprecated `user` object zulip-terminal reads). */
export const Reaction = t.Object({
  emoji_name: t.String(),
  emoji_code: t.String(),
  reaction_type: t.Union([t.Literal("unicode_emoji"), t.Literal("realm_emoji"), t.Literal("zulip_extra_emoji")]),
  user_id: t.Integer(),
  user: t.Optional(t.Object({ id: t.Integer(), email: t.String(), full_name: t.String(), is_mirror_dummy: t.Boolean() })),
});

export const DisplayRecipientUser = t.Object({ id: t.Integer(), email: t.String(), full_name: t.String(), is_mirror_dummy: t.Boolean() });

export const EditHistoryEntry = t.Object({
  user_id: Nullable(t.Integer()),
  timestamp: t.Integer(),
  prev_content: t.Optional(t.String()),
  prev_rendered_content: t.Optional(t.String()),
  prev_rendered_content_version: t.Optional(t.Integer()),
  prev_stream: t.Optional(t.Integer()),
  stream: t.Optional(t.Integer()),
  prev_topic: t.Optional(t.String()),
  topic: t.Optional(t.String()),
});

/** OpenAPI `MessagesBase` plus `flags`, with what zulip-flutter requires. */
export const Message = t.Object({
  id: t.Integer(),
  sender_id: t.Integer(),
  content: t.String(),
  recipient_id: t.Integer(),
  timestamp: t.Integer(),
  client: t.String(),
  subject: t.String(),
  topic_links: t.Array(t.Object({ text: t.String(), url: t.String() })),
  is_me_message: t.Boolean(),
  reactions: t.Array(Reaction),
  submessages: t.Array(t.Object({ id: t.Integer(), message_id: t.Integer(), sender_id: t.Integer(), msg_type: t.String(), content: t.String() })),
  sender_full_name: t.String(),
  sender_email: t.String(),
  sender_realm_str: t.String(),
  display_recipient: t.Union([t.String(), t.Array(DisplayRecipientUser)]),
  type: t.Union([t.Literal("stream"), t.Literal("private")]),
  stream_id: t.Optional(t.Integer()),
  avatar_url: Nullable(t.String()),
  content_type: t.Union([t.Literal("text/html"), t.Literal("text/x-markdown")]),
  flags: t.Array(t.String()),
  edit_history: t.Optional(t.Array(EditHistoryEntry)),
  last_edit_timestamp: t.Optional(t.Integer()),
  last_moved_timestamp: t.Optional(t.Integer()),
  match_content: t.Optional(t.String()),
  match_subject: t.Optional(t.String()),
});

export const SendMessageResponse = success({
  id: t.Integer(),
  automatic_new_visibility_policy: t.Optional(t.Union([t.Literal(2), t.Literal(3)])),
  // FL 508.
  message_url: t.String(),
  message_link: t.String(),
});

export const GetMessagesResponse = success({
  anchor: t.Integer(),
  found_anchor: t.Boolean(),
  found_oldest: t.Boolean(),
  found_newest: t.Boolean(),
  history_limited: t.Boolean(),
  messages: t.Array(Message),
});

/** GET /messages with `message_ids` (FL 300): no anchor, every found_* false. */
export const GetMessagesByIdsResponse = success({
  found_anchor: t.Literal(false),
  found_oldest: t.Literal(false),
  found_newest: t.Literal(false),
  history_limited: t.Boolean(),
  messages: t.Array(Message),
});

export const GetMessageResponse = success({ raw_content: t.String(), message: Message });

export const UpdateMessageResponse = success({ detached_uploads: t.Array(t.Unknown()) });

export const MessageHistoryResponse = success({
  message_history: t.Array(
    t.Object({
      user_id: Nullable(t.Integer()),
      timestamp: t.Integer(),
      topic: t.String(),
      content: t.String(),
      rendered_content: t.String(),
      prev_content: t.Optional(t.String()),
      prev_rendered_content: t.Optional(t.String()),
      /** Only for content edits: the edit's changes, marked word by word. */
      content_html_diff: t.Optional(t.String()),
      prev_topic: t.Optional(t.String()),
      prev_stream: t.Optional(t.Integer()),
      stream: t.Optional(t.Integer()),
    }),
  ),
});

/** `ignored_because_not_subscribed_channels` only when marking unread (`flag` read, `op` remove), as Zulip sends it. */
export const UpdateFlagsResponse = success({ messages: t.Array(t.Integer()), ignored_because_not_subscribed_channels: t.Optional(t.Array(t.Integer())) });

export const UpdateFlagsForNarrowResponse = success({
  processed_count: t.Integer(),
  updated_count: t.Integer(),
  first_processed_id: Nullable(t.Integer()),
  last_processed_id: Nullable(t.Integer()),
  found_oldest: t.Boolean(),
  found_newest: t.Boolean(),
  ignored_because_not_subscribed_channels: t.Optional(t.Array(t.Integer())),
});

export const RenderResponse = success({ rendered: t.String() });
export const ReadReceiptsResponse = success({ user_ids: t.Array(t.Integer()) });
export const TopicsResponse = success({ topics: t.Array(t.Object({ name: t.String(), max_id: t.Integer() })) });
