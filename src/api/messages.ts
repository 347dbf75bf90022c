import { pathId } from "../http/path";
import { Type as t } from "@sinclair/typebox";
import type { Hearth } from "../context";
import { badRequest, incompatibleParameters } from "../errors";
import { ApiRoutes } from "../http/route";
import { param } from "../http/params";
import { accessMessage, readableChannels } from "../access/messages";
import { renderMessageContent } from "../actions/message_content";
import { checkDeleteMessage, checkDeleteTopic } from "../actions/message_delete";
import { checkEditMessage } from "../actions/message_edit";
import { checkMarkChannelAsRead, checkUpdateFlags, checkUpdateFlagsForNarrow, doMarkAllAsRead, markingUnread } from "../actions/message_flags";
import { checkSendMessage, resolveTarget } from "../actions/message_send";
import { checkReaction } from "../actions/reactions";
import { doTypingChannel, doTypingDirect, doTypingEditMessage } from "../actions/typing";
import { formatMessage, getMessageHistory, sentMessageLinksJson, getReadReceipts, realmSetting, topicDisplayName, topicsForUser, type MessageViewOptions } from "../views/messages";
import { fetchByIds, fetchRange, highlightHtml, highlightTopic, matchesNarrow, parseAnchor } from "../views/narrow";
import { compileNarrow, parseNarrow } from "../views/narrow_compile";
import { checkReportMessage } from "../actions/message_reports";
import { checkAddSubmessage } from "../actions/submessages";
import { checkWidgetContent } from "../markdown/widgets";
import { messageJson, messageJsonKey } from "../views/messages_json";
import { SerializedFields } from "../lib/serialized_fields";
import { boundedMemo } from "../lib/collections";

const messageIdOf = (raw: string) => pathId(raw, "message ID");

const HUMAN_CLIENTS = ["zulipandroid", "zulipios", "zulipdesktop", "zulipmobile", "zulipelectron", "zulipterminal", "zulipflutter", "snipe", "website", "ios", "android"];

/**
 * Zulip's `Client.default_read_by_sender`: messages from full chat clients are
 * read for their sender; those sent through scripts and integrations with the
 * user's key stay unread, so the user notices them. Remembered per name: client names
 * come from User-Agents (clientName), few, and every send asks.
 */
export const isHumanClient: (client: string) => boolean = boundedMemo(200, (client: string) => {
  const name = client.toLowerCase();
  return HUMAN_CLIENTS.includes(name) || name.includes("desktop app") || name.includes("test suite");
});

/** Zulip names the client from the User-Agent's product token ("ZulipMobile/27.1 …" → "ZulipMobile"). */
function clientNameOf(userAgent: string): string {
  const token = userAgent.split(/[/ ]/)[0];
  return token && token.length <= 30 ? token : "API";
}

/** A client sends the same User-Agent with every request: its name is remembered, not split out again. */
const rememberedClientName = boundedMemo(200, clientNameOf);

export function clientName(request: Request): string {
  const ua = request.headers.get("user-agent") ?? "";
  // An unusually long User-Agent is not kept.
  return ua.length <= 300 ? rememberedClientName(ua) : clientNameOf(ua);
}

const narrowParam = param.json(t.Unknown()).default([]);
const anchorParam = param.jsonOrString(t.Union([t.Integer(), t.Number(), t.String()])).optional();

const TypingOp = param.oneOf(["start", "stop"] as const);

export function messagesRoutes(h: Hearth) {
  return new ApiRoutes(h)
    .post(
      "/messages",
      {
        allowIncomingWebhookBots: true,
        params: {
          type: param.oneOf(["stream", "channel", "private", "direct"] as const),
          to: param.jsonOrString(t.Union([t.Integer(), t.String(), t.Array(t.Union([t.Integer(), t.String()]))])),
          topic: param.string().alias("subject").optional(),
          content: param.string(),
          local_id: param.string().optional(),
          queue_id: param.string().optional(),
          read_by_sender: param.bool().optional(),
          widget_content: param.string().optional(),
        },
      },
      async ({ user, params, request }) => {
        const target = resolveTarget(h, user, params.type, params.to, params.topic);
        const client = clientName(request);
        const sent = await checkSendMessage(h, user, {
          target,
          content: params.content,
          client,
          readBySender: params.read_by_sender ?? isHumanClient(client),
          localId: params.local_id,
          queueId: params.queue_id,
          // The Python bindings send `widget_content=null` with every bot reply: no widget.
          widget: params.widget_content === undefined || params.widget_content === "null" ? undefined : checkWidgetContent(params.widget_content),
        });
        // The answer as JSON text: its links are a topic's kept text around the ID (sentMessageLinksJson).
        const policy = sent.automatic_new_visibility_policy === undefined ? "" : `"automatic_new_visibility_policy":${sent.automatic_new_visibility_policy},`;
        return new SerializedFields(`"id":${sent.id},${policy}${sentMessageLinksJson(h, user, sent.message)}`);
      },
    )
    .get(
      "/messages",
      {
        params: {
          anchor: anchorParam,
          // FL 445: with anchor=date.
          anchor_date: param.string().optional(),
          use_first_unread_anchor: param.bool().default(false),
          include_anchor: param.bool().default(true),
          // Optional since FL 300, when message_ids came as the other way to choose.
          num_before: param.int().default(0),
          num_after: param.int().default(0),
          message_ids: param.json(t.Array(t.Integer({ minimum: 0 }))).optional(),
          narrow: narrowParam,
          client_gravatar: param.bool().default(true),
          apply_markdown: param.bool().default(true),
          allow_empty_topic_name: param.bool().default(false),
        },
      },
      ({ user, params }) => {
        const narrow = compileNarrow(h, user, parseNarrow(params.narrow));
        if (params.message_ids !== undefined) {
          // Zulip's check and words: the IDs replace the anchor and the counts.
          if (params.num_before || params.num_after || params.anchor !== undefined || params.use_first_unread_anchor) {
            throw incompatibleParameters(["num_before", "num_after", "anchor", "message_ids", "include_anchor", "use_first_unread_anchor"]);
          }
        }
        const range =
          params.message_ids !== undefined
            ? null
            : fetchRange(
                h,
                user,
                narrow,
                parseAnchor(params.anchor ?? (narrow.nearId !== null ? narrow.nearId : undefined), params.use_first_unread_anchor, params.anchor_date ?? null),
                params.include_anchor,
                params.num_before,
                params.num_after,
              );
        const matches = range ? range.matches : fetchByIds(h, user, narrow, params.message_ids!);
        const options: MessageViewOptions = {
          applyMarkdown: params.apply_markdown,
          allowEmptyTopicName: params.allow_empty_topic_name,
          linkifiers: realmSetting(h, "linkifiers", []),
        };
        // Each message serialized once per change (messages_json.ts), the viewer's flags spliced in.
        const context = messageJsonKey(h, options);
        const messages = matches.map(({ message, flags }) => {
          const extra = narrow.searchWords.length === 0 ? "" : `"match_content":${JSON.stringify(highlightHtml(message.rendered_content, narrow.searchWords))},"match_subject":${JSON.stringify(highlightTopic(topicDisplayName(h, message.topic, options), narrow.searchWords))}`;
          return messageJson(h, user, message, flags, options, context, extra);
        });
        // Concatenated, not joined: the answer's one flattening is then the Response's own copy.
        let joined = "";
        for (let i = 0; i < messages.length; i++) joined = i === 0 ? messages[0] : joined + "," + messages[i];
        const list = `"messages":[${joined}]`;
        // By IDs, Zulip answers no anchor and every found_* false.
        if (!range) return new SerializedFields(`"found_anchor":false,"found_oldest":false,"found_newest":false,"history_limited":false,${list}`);
        return new SerializedFields(
          `"anchor":${JSON.stringify(range.anchor)},"found_anchor":${range.found_anchor},"found_oldest":${range.found_oldest},"found_newest":${range.found_newest},"history_limited":false,${list}`,
        );
      },
    )
    .get(
      "/messages/matches_narrow",
      { params: { msg_ids: param.json(t.Array(t.Integer())), narrow: narrowParam } },
      ({ user, params }) => {
        // Which of the given messages match the narrow, with search highlights (the web app's live-update check).
        const narrow = compileNarrow(h, user, parseNarrow(params.narrow));
        const messages: Record<string, { match_content: string; match_subject: string }> = {};
        const readable = readableChannels(h, user);
        for (const id of params.msg_ids) {
          const found = matchesNarrow(h, user, narrow, id, readable);
          if (!found) continue;
          messages[String(id)] = {
            match_content: highlightHtml(found.message.rendered_content, narrow.searchWords),
            match_subject: highlightTopic(found.message.topic, narrow.searchWords),
          };
        }
        return { messages };
      },
    )
    .get(
      "/messages/:message_id",
      { params: { apply_markdown: param.bool().default(true), allow_empty_topic_name: param.bool().default(false) } },
      ({ user, params, path }) => {
        const { message, flags } = accessMessage(h, user, messageIdOf(path.message_id));
        return {
          raw_content: message.content,
          message: formatMessage(h, user, message, flags, {
            applyMarkdown: params.apply_markdown,
            allowEmptyTopicName: params.allow_empty_topic_name,
          }),
        };
      },
    )
    .patch(
      "/messages/:message_id",
      {
        params: {
          content: param.string().optional(),
          topic: param.string().alias("subject").optional(),
          stream_id: param.int().optional(),
          propagate_mode: param.oneOf(["change_one", "change_later", "change_all"] as const).default("change_one"),
          send_notification_to_old_thread: param.bool().default(false),
          send_notification_to_new_thread: param.bool().default(true),
          prev_content_sha256: param.string().optional(),
        },
      },
      async ({ user, params, path }) =>
        checkEditMessage(h, user, messageIdOf(path.message_id), {
          content: params.content,
          topic: params.topic,
          channelId: params.stream_id,
          propagateMode: params.propagate_mode,
          sendNotificationToOldThread: params.send_notification_to_old_thread,
          sendNotificationToNewThread: params.send_notification_to_new_thread,
          prevContentSha256: params.prev_content_sha256,
        }),
    )
    .delete("/messages/:message_id", {}, async ({ user, path }) => {
      await checkDeleteMessage(h, user, messageIdOf(path.message_id));
      return {};
    })
    .get("/messages/:message_id/history", { params: { allow_empty_topic_name: param.bool().default(false) } }, ({ user, path, params }) => ({
      message_history: getMessageHistory(h, user, messageIdOf(path.message_id), params.allow_empty_topic_name),
    }))
    .get("/messages/:message_id/read_receipts", {}, ({ user, path }) => ({ user_ids: getReadReceipts(h, user, messageIdOf(path.message_id)) }))
    .post(
      "/messages/:message_id/reactions",
      { params: { emoji_name: param.string(), emoji_code: param.string().optional(), reaction_type: param.string().optional() } },
      async ({ user, params, path }) => {
        await checkReaction(h, user, messageIdOf(path.message_id), "add", params);
        return {};
      },
    )
    .delete(
      "/messages/:message_id/reactions",
      { params: { emoji_name: param.string().optional(), emoji_code: param.string().optional(), reaction_type: param.string().optional() } },
      async ({ user, params, path }) => {
        if (params.emoji_name === undefined && params.emoji_code === undefined) throw badRequest("At least one of the following arguments must be present: emoji_name, emoji_code");
        await checkReaction(h, user, messageIdOf(path.message_id), "remove", { ...params, emoji_name: params.emoji_name ?? "" });
        return {};
      },
    )
    .post("/submessage", { params: { message_id: param.int(), msg_type: param.string(), content: param.string() } }, async ({ user, params }) => {
      await checkAddSubmessage(h, user, params.message_id, params.msg_type, params.content);
      return {};
    })
    .post("/messages/render", { params: { content: param.string() } }, ({ user, params }) => ({
      rendered: renderMessageContent(h, user, params.content).html,
    }))
    .post(
      "/messages/flags",
      { params: { messages: param.json(t.Array(t.Integer())), op: param.string(), flag: param.string() } },
      async ({ user, params }) => {
        const { ignoredChannels } = await checkUpdateFlags(h, user, params.messages, params.op, params.flag);
        // Clients read `messages` (the IDs asked for), as Zulip answers; the skipped
        // channels are named only when marking unread, the one change that skips any.
        return { messages: params.messages, ...(markingUnread(params.op, params.flag) ? { ignored_because_not_subscribed_channels: ignoredChannels } : {}) };
      },
    )
    .post(
      "/messages/flags/narrow",
      {
        params: {
          anchor: anchorParam,
          include_anchor: param.bool().default(true),
          num_before: param.int(),
          num_after: param.int(),
          narrow: narrowParam,
          op: param.oneOf(["add", "remove"] as const),
          flag: param.string(),
        },
      },
      ({ user, params }) =>
        checkUpdateFlagsForNarrow(h, user, {
          narrow: compileNarrow(h, user, parseNarrow(params.narrow)),
          anchor: parseAnchor(params.anchor, false),
          includeAnchor: params.include_anchor,
          numBefore: params.num_before,
          numAfter: params.num_after,
          op: params.op,
          flag: params.flag,
        }),
    )
    .post("/mark_all_as_read", {}, async ({ user }) => {
      await doMarkAllAsRead(h, user);
      return { complete: true };
    })
    .post("/mark_stream_as_read", { params: { stream_id: param.int() } }, async ({ user, params }) => {
      await checkMarkChannelAsRead(h, user, params.stream_id);
      return {};
    })
    .post("/mark_topic_as_read", { params: { stream_id: param.int(), topic_name: param.string() } }, async ({ user, params }) => {
      await checkMarkChannelAsRead(h, user, params.stream_id, params.topic_name.trim());
      return {};
    })
    .post(
      "/typing",
      {
        params: {
          op: TypingOp,
          type: param.oneOf(["direct", "private", "stream", "channel"] as const).default("direct"),
          to: param.json(t.Union([t.Array(t.Union([t.Integer(), t.String()])), t.Integer()])).optional(),
          stream_id: param.int().optional(),
          topic: param.string().optional(),
        },
      },
      ({ user, params }) => {
        if (params.type === "direct" || params.type === "private") {
          const to = params.to === undefined ? [] : Array.isArray(params.to) ? params.to : [params.to];
          if (to.length === 0) throw badRequest("Missing 'to' argument");
          doTypingDirect(h, user, params.op, to);
        } else {
          // Before FL 248 `to` carried the channel ID as a one-element list.
          const legacy = Array.isArray(params.to) ? params.to[0] : params.to;
          const channelId = params.stream_id ?? (typeof legacy === "number" ? legacy : undefined);
          if (channelId === undefined) throw badRequest("Missing 'stream_id' argument");
          if (params.topic === undefined) throw badRequest("Missing 'topic' argument");
          doTypingChannel(h, user, params.op, channelId, params.topic);
        }
        return {};
      },
    )
    .post("/messages/:message_id/report", { params: { report_type: param.string(), description: param.string().default("") } }, async ({ user, params, path }) => {
      await checkReportMessage(h, user, messageIdOf(path.message_id), params.report_type, params.description);
      return {};
    })
    .post("/messages/:message_id/typing", { params: { op: TypingOp } }, ({ user, params, path }) => {
      doTypingEditMessage(h, user, params.op, messageIdOf(path.message_id));
      return {};
    })
    // Its name from FL 351 to 360, the message ID in the body: still sent by clients of that time.
    .post("/message_edit_typing", { params: { op: TypingOp, message_id: param.int() } }, ({ user, params }) => {
      doTypingEditMessage(h, user, params.op, params.message_id);
      return {};
    })
    .get("/users/me/:stream_id/topics", { params: { allow_empty_topic_name: param.bool().default(false) } }, ({ user, params, path }) => {
      const options = { applyMarkdown: true, allowEmptyTopicName: params.allow_empty_topic_name };
      return { topics: topicsForUser(h, user, pathId(path.stream_id, "channel ID"), options) };
    })
    .post("/streams/:stream_id/delete_topic", { params: { topic_name: param.string() } }, async ({ user, params, path }) => {
      await checkDeleteTopic(h, user, pathId(path.stream_id, "channel ID"), params.topic_name);
      return { complete: true };
    });
}
