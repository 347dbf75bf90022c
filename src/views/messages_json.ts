import type { Hearth } from "../context";
import { flagList, type MessageRecord } from "../store/messages";
import { userWriteVersion, type UserRecord } from "../store/users";
import { realmWriteVersion } from "../store/realm";
import { getAvatarSalt } from "../store/avatars";
import { formatMessage, type MessageViewOptions } from "./messages";
import { channelById } from "./message_channels";
import { boundedMemo } from "../lib/collections";

/**
 * A message as GET /messages shows it, serialized: formatMessage's object without
 * the viewer's flags, kept per message record and options, with the flags spliced in
 * per request. Building and serializing each message's object was most of a narrow
 * read's cost after the walk (docs/benchmarks.md); Zulip caches message dicts without
 * the per-user part for the same reason.
 *
 * What the object shows comes from, and how each change is followed:
 * - the message record (content, topic, channel, reactions, submessages, edit
 *   history; a deleted message is never walked): entries are keyed by the record
 *   object, and `getMessageShared` hands out a new object whenever the stored bytes
 *   differ;
 * - users (sender name, email and its visibility, avatar version; DM participants;
 *   reacting users): `userWriteVersion`;
 * - realm settings (linkifiers for topic_links, the edit-history policy, the empty
 *   topic's name) and the realm's address (avatar URLs, placeholder emails):
 *   `realmWriteVersion` and the URL itself, and the avatar salt;
 * - the channel's name (display_recipient): compared on each hit;
 * - the request's options (apply_markdown, allow_empty_topic_name): part of the key.
 * The formatted object does not depend on the viewer (formatMessage reads only the
 * message and what is listed above). Memory is bounded by the shared records: a
 * WeakMap entry lives as long as its record in that bounded cache.
 */
const serialized = new WeakMap<
  MessageRecord,
  { key: string; channelName: string | undefined; json: string; lastFlags: number; withLastFlags: string }
>();

/**
 * What a formatted message depends on besides its record, read once per request:
 * `key` for everything but the channel's name, whose lookups are kept here for the
 * request (its messages are mostly of one or a few channels).
 */
export interface MessageJsonContext {
  key: string;
  channelNames: Map<number, string | undefined>;
}

/** The context of one request's messages; read once per request. */
export function messageJsonKey(h: Hearth, options: MessageViewOptions): MessageJsonContext {
  return {
    key: `${userWriteVersion()}:${realmWriteVersion()}:${getAvatarSalt(h.store) ?? ""}:${h.realmUrl()}:${options.applyMarkdown ? 1 : 0}${options.allowEmptyTopicName ? 1 : 0}`,
    channelNames: new Map(),
  };
}

function channelNameOf(h: Hearth, context: MessageJsonContext, channelId: number): string | undefined {
  const names = context.channelNames;
  if (names.has(channelId)) return names.get(channelId);
  const name = channelById(h, channelId)?.name;
  names.set(channelId, name);
  return name;
}

/** Bounded: the distinct flag combinations in use are few. */
const flagListJson = boundedMemo(1024, (flags: number) => JSON.stringify(flagList(flags)));

/**
 * One message's JSON object for a viewer with `flags`; `extra` (serialized fields,
 * without braces) is appended, for search highlights. `context` is messageJsonKey's
 * for the same options and request. Records from `getMessageShared` are cached; do
 * not pass a record that will be changed.
 */
export function messageJson(h: Hearth, viewer: UserRecord, m: MessageRecord, flags: number, options: MessageViewOptions, context: MessageJsonContext, extra = ""): string {
  const channelName = m.type === "stream" ? channelNameOf(h, context, m.channel_id!) : undefined;
  const key = context.key;
  let entry = serialized.get(m);
  // Outside a transaction only: inside one, reads may see writes that roll back.
  if (entry === undefined || entry.key !== key || entry.channelName !== channelName || h.store.inTransaction) {
    const json = JSON.stringify(formatMessage(h, viewer, m, null, options)).slice(0, -1);
    entry = { key, channelName, json, lastFlags: -1, withLastFlags: "" };
    if (!h.store.inTransaction) serialized.set(m, entry);
  }
  if (extra !== "") return `${entry.json},"flags":${flagListJson(flags)},${extra}}`;
  // The whole object for the flags last asked for (most readers' are the same: none,
  // or "read"), kept as one flat string for the answer's join.
  if (entry.lastFlags !== flags) {
    entry.withLastFlags = `${entry.json},"flags":${flagListJson(flags)}}`;
    entry.lastFlags = flags;
  }
  return entry.withLastFlags;
}
