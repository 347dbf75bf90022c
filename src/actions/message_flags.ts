import type { Hearth } from "../context";
import { commit, type Transaction } from "../events/commit";
import { badRequest } from "../errors";
import { accessChannel } from "../access/channels";
import { invalidMessage, readableChannels, readableMessage, visibleFlags } from "../access/messages";
import { getSubscription } from "../store/subscriptions";
import { getMessage, MENTION_BITS, MessageFlag, messageLocation, topicKey, type MessageLocation, type MessageRecord } from "../store/messages";
import { getUserFlags, indexRows, setUserFlagsOfMessages } from "../store/user_messages";
import { unreadMessageIds } from "../store/unread";
import { visibilityPolicyOf } from "../store/user_topics";
import type { UserRecord } from "../store/users";
import { isSubscribedTo } from "../views/message_channels";
import { isRowMuted } from "../views/message_state";
import { fetchRange, type AnchorSpec } from "../views/narrow";
import { type CompiledNarrow } from "../views/narrow_compile";

/** A user's flags on messages (Zulip's zerver/actions/message_flags.py). */

export const EDITABLE_FLAGS = ["read", "starred", "collapsed"] as const;
const ALL_FLAG_NAMES = ["read", "starred", "collapsed", "mentioned", "wildcard_mentioned", "has_alert_word", "historical"];

export function checkFlagName(flag: string): "read" | "starred" | "collapsed" {
  if (!ALL_FLAG_NAMES.includes(flag)) throw badRequest(`Invalid flag: '${flag}'`);
  if (!(EDITABLE_FLAGS as readonly string[]).includes(flag)) throw badRequest(`Flag not editable: '${flag}'`);
  return flag as "read" | "starred" | "collapsed";
}

/** Zulip's `message_details` of a flag removal, for the unread counts of clients. */
function messageDetails(h: Hearth, userId: number, ids: number[]): Record<string, unknown> {
  const details: Record<string, unknown> = {};
  for (const id of ids) {
    const m = getMessage(h.store, id);
    if (!m) continue;
    const bits = getUserFlags(h.store, userId, id) ?? 0;
    const d: Record<string, unknown> = { type: m.type };
    if (bits & MENTION_BITS) d.mentioned = true;
    if (m.type === "stream") {
      d.stream_id = m.channel_id;
      d.topic = m.topic;
      d.unmuted_stream_msg = !isRowMuted(getSubscription(h.store, m.channel_id!, userId)?.is_muted === true, visibilityPolicyOf(h.store, userId, m.channel_id!, m.topic));
    } else d.user_ids = m.dm_user_ids!.filter((x) => x !== userId);
    details[String(id)] = d;
  }
  return details;
}

/**
 * Adds or removes a flag on messages for one user; returns the IDs whose flag
 * changed. Messages the user only sees historically get a `historical` row when
 * starred or collapsed (as Zulip does); marking them read or unread changes nothing.
 */
export async function doUpdateFlags(h: Hearth, user: UserRecord, ids: number[], op: "add" | "remove", flag: "read" | "starred" | "collapsed", options: { all?: boolean } = {}): Promise<number[]> {
  return commit(h, (tx) => {
    const changed = applyFlagChange(h, user, ids, op, flag);
    publishFlagChange(tx, h, user, changed, op, flag, options.all ?? false);
    return changed;
  });
}

/** Inside a commit: sets or clears one flag on the messages; returns the IDs whose flags changed. */
export function applyFlagChange(h: Hearth, user: UserRecord, ids: number[], op: "add" | "remove", flag: "read" | "starred" | "collapsed"): number[] {
  const bit = MessageFlag[flag];
  const changes: { message: MessageRecord; before: number | undefined; after: number }[] = [];
  const readable = readableChannels(h, user);
  for (const id of new Set(ids)) {
    const m = getMessage(h.store, id);
    if (!m) continue;
    const before = getUserFlags(h.store, user.id, id);
    let current = before;
    if (current === undefined) {
      if (flag === "read" || visibleFlags(h, user, m, readable) === undefined) continue;
      current = MessageFlag.read | MessageFlag.historical;
    }
    const after = op === "add" ? current | bit : current & ~bit;
    if (after !== current) changes.push({ message: m, before, after });
  }
  // Written together: marking a backlog read rewrites each run of it once, not once per message.
  setUserFlagsOfMessages(h.store, user.id, changes);
  return changes.map((change) => change.message.id);
}

/** Inside the commit that changed the flags: the user's `update_message_flags` event. */
export function publishFlagChange(tx: Transaction, h: Hearth, user: UserRecord, changed: number[], op: "add" | "remove", flag: string, all = false): void {
  if (changed.length === 0 && !all) return;
  const event: Record<string, unknown> = { type: "update_message_flags", op, operation: op, flag, messages: changed, all };
  if (op === "remove" && flag === "read") event.message_details = messageDetails(h, user.id, changed);
  tx.notify(event as any, [user.id]);
}

/**
 * The messages a flag change applies to. Marking unread in channels one is not
 * subscribed to would create unreads nobody can clear from the channel list: Zulip
 * (FL 355) skips those messages and names the channels (ascending; empty for any
 * other change).
 */
function flagTargets(h: Hearth, user: UserRecord, messages: readonly MessageRecord[], op: "add" | "remove", flag: string): { ids: number[]; ignoredChannels: number[] } {
  if (flag !== "read" || op !== "remove") return { ids: messages.map((m) => m.id), ignoredChannels: [] };
  const ignored = new Set<number>();
  const ids: number[] = [];
  for (const message of messages) {
    if (message.type === "stream" && !isSubscribedTo(h, message.channel_id!, user.id)) ignored.add(message.channel_id!);
    else ids.push(message.id);
  }
  return { ids, ignoredChannels: [...ignored].sort((a, b) => a - b) };
}

/** POST /messages/flags (see flagTargets for `ignoredChannels`). */
export async function checkUpdateFlags(h: Hearth, user: UserRecord, ids: number[], op: string, flag: string): Promise<{ changed: number[]; ignoredChannels: number[] }> {
  if (op !== "add" && op !== "remove") throw badRequest(`Invalid message flag operation: '${op}'`);
  const name = checkFlagName(flag);
  const readable = readableChannels(h, user);
  const messages: MessageRecord[] = [];
  for (const id of ids) {
    const found = readableMessage(h, user, id, readable);
    if (!found) throw invalidMessage();
    messages.push(found.message);
  }
  const targets = flagTargets(h, user, messages, op, name);
  return { changed: await doUpdateFlags(h, user, targets.ids, op, name), ignoredChannels: targets.ignoredChannels };
}

/** Whether a flag change marks messages unread: the only one whose answer names the channels it skipped. */
export function markingUnread(op: string, flag: string): boolean {
  return op === "remove" && flag === "read";
}

/** Unread messages of the user whose location matches `test`, oldest first (reads index rows only). */
function unreadIds(h: Hearth, user: UserRecord, test: (location: MessageLocation) => boolean): number[] {
  const ids: number[] = [];
  for (const { id, value } of indexRows(h.store, user.id, "unread", 0, "newer")) {
    const m = value === true ? getMessage(h.store, id) : undefined; // rows from before locations were stored
    if (test(m ? messageLocation(m) : (value as MessageLocation))) ids.push(id);
  }
  return ids;
}

/** `POST /messages/flags/narrow`: the flag change over one window of a narrow, with Zulip's counts. */
export async function checkUpdateFlagsForNarrow(
  h: Hearth,
  user: UserRecord,
  req: { narrow: CompiledNarrow; anchor: AnchorSpec; includeAnchor: boolean; numBefore: number; numAfter: number; op: "add" | "remove"; flag: string },
): Promise<Record<string, unknown>> {
  const flag = checkFlagName(req.flag);
  const range = fetchRange(h, user, req.narrow, req.anchor, req.includeAnchor, req.numBefore, req.numAfter);
  const processed = range.matches.map((m) => m.message.id);
  const targets = flagTargets(h, user, range.matches.map((m) => m.message), req.op, flag);
  const changed = await doUpdateFlags(h, user, targets.ids, req.op, flag);
  return {
    processed_count: processed.length,
    updated_count: changed.length,
    first_processed_id: processed[0] ?? null,
    last_processed_id: processed[processed.length - 1] ?? null,
    found_oldest: range.found_oldest,
    found_newest: range.found_newest,
    // Only when marking unread (FL 355: "only present when flag is read and op is remove").
    ...(markingUnread(req.op, flag) ? { ignored_because_not_subscribed_channels: targets.ignoredChannels } : {}),
  };
}

export async function doMarkAllAsRead(h: Hearth, user: UserRecord): Promise<void> {
  const ids = unreadIds(h, user, () => true);
  await doUpdateFlags(h, user, ids, "add", "read", { all: true });
}

export function unreadFromSender(h: Hearth, user: UserRecord, senderId: number): number[] {
  const ids: number[] = [];
  for (const id of unreadMessageIds(h.store, user.id, 0, "newer")) {
    if (getMessage(h.store, id)?.sender_id === senderId) ids.push(id);
  }
  return ids;
}

/** `POST /mark_stream_as_read` and `/mark_topic_as_read`: a channel whose messages the user may read. */
export async function checkMarkChannelAsRead(h: Hearth, user: UserRecord, channelId: number, topic?: string): Promise<void> {
  accessChannel(h, user, channelId, { requireContentAccess: true, allowArchived: true });
  await doMarkChannelAsRead(h, user, channelId, topic);
}

async function doMarkChannelAsRead(h: Hearth, user: UserRecord, channelId: number, topic?: string): Promise<void> {
  const key = topic === undefined ? null : topicKey(topic);
  const ids = unreadIds(h, user, (loc) => Array.isArray(loc) && loc[0] === channelId && (key === null || topicKey(loc[1]) === key));
  await doUpdateFlags(h, user, ids, "add", "read");
}
