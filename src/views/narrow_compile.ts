import type { Hearth } from "../context";
import { ApiError, badRequest } from "../errors";
import { getUser, type UserRecord } from "../store/users";
import { conversationKey, MAX_DM_PARTICIPANTS, getMessage, MessageFlag, RESOLVED_TOPIC_PREFIX, MENTION_BITS, searchWords, topicKey, type MessageRecord } from "../store/messages";
import { idsForTermPrefix, idsInRange, idsOfSender, mergeIds } from "../store/message_indexes";
import { unreadMessageIds } from "../store/unread";
import { topicIdsFrom } from "../store/topic_ids";
import { userMessageIds } from "../store/user_messages";
import { channelById, channelByName, canReadChannel, readableArchivedChannels, type MessageChannel } from "./message_channels";
import { visibleFlags } from "../access/messages";
import { visibilityPolicyOf, VisibilityPolicy } from "../store/user_topics";
import { getSubscription } from "../store/subscriptions";
import { visibleUserByEmail } from "../access/users";

/**
 * The narrow engine. A narrow becomes one *source* — the most selective index range,
 * walked from the anchor in either direction — and a list of *filters* checked on
 * each candidate. Only candidates are read, so a topic narrow reads the topic's rows
 * and nothing else.
 */
export interface NarrowTerm {
  operator: string;
  operand: unknown;
  negated: boolean;
}

export const badNarrow = (what: string) => new ApiError(`Invalid narrow operator: ${what}`, "BAD_NARROW", 400);

/** Accepts the object form and the legacy list form (`[["stream","Denmark"]]`). */
export function parseNarrow(raw: unknown): NarrowTerm[] {
  if (raw === undefined || raw === null || raw === "") return [];
  if (!Array.isArray(raw)) throw badRequest("narrow is not a list");
  return raw.map((item, i) => {
    if (Array.isArray(item)) {
      if (item.length < 2 || typeof item[0] !== "string") throw badRequest(`narrow[${i}] is not a valid narrow element`);
      return { operator: item[0], operand: item[1], negated: false };
    }
    if (item && typeof item === "object" && typeof (item as any).operator === "string" && "operand" in item) {
      const o = item as { operator: string; operand: unknown; negated?: unknown };
      return { operator: o.operator, operand: o.operand, negated: o.negated === true };
    }
    throw badRequest(`narrow[${i}] is missing a required field`);
  });
}

type Source = (from: number, direction: "older" | "newer") => Iterable<number>;
type Filter = (m: MessageRecord, flags: number) => boolean;

export interface CompiledNarrow {
  source: Source;
  filters: Filter[];
  /** Words of `search` operators, for highlighting. */
  searchWords: string[];
  /** `near`/`id` anchor hint. */
  nearId: number | null;
  /** Channel operand when the narrow is a channel (for read-marking and `with`). */
  channel: MessageChannel | null;
  /**
   * The same narrow with `is:unread` added, compiled on demand (for `first_unread`);
   * `byUnreadRows`: walking the viewer's unread rows whatever else it names (see firstUnreadId).
   */
  unreadOnly(byUnreadRows?: boolean): CompiledNarrow;
  /** The source walks the viewer's "unread" rows: each candidate's row is known to exist. */
  sourceIsUnread: boolean;
}

function userByOperand(h: Hearth, viewer: UserRecord, operand: unknown, what: string): UserRecord {
  if (operand === "me") return viewer;
  let u: UserRecord | undefined;
  if (typeof operand === "number") u = getUser(h.store, operand);
  else if (typeof operand === "string" && /^\d+$/.test(operand)) u = getUser(h.store, Number(operand));
  // By the address the viewer sees (a hidden real address finds nothing), as for recipients.
  else if (typeof operand === "string") u = visibleUserByEmail(h, viewer, operand.trim());
  if (!u || u.is_system_bot) throw badNarrow(`unknown user in ${what}`);
  return u;
}

function dmParticipants(h: Hearth, viewer: UserRecord, operand: unknown, what: string): number[] {
  let items: unknown[];
  if (Array.isArray(operand)) items = operand;
  else if (typeof operand === "number") items = [operand];
  else if (typeof operand === "string") items = operand.split(",").map((s) => s.trim()).filter(Boolean);
  else throw badNarrow(`invalid ${what} operand`);
  if (items.length >= MAX_DM_PARTICIPANTS) throw badNarrow(`too many users in ${what}`);
  return items.map((x) => userByOperand(h, viewer, x, what).id);
}

export function channelByOperand(h: Hearth, viewer: UserRecord, operand: unknown): MessageChannel {
  let channel: MessageChannel | undefined;
  if (typeof operand === "number") channel = channelById(h, operand);
  else if (typeof operand === "string" && /^\d+$/.test(operand)) channel = channelById(h, Number(operand)) ?? channelByName(h, operand);
  else if (typeof operand === "string") channel = channelByName(h, operand);
  if (!channel || !canReadChannel(h, viewer, channel)) throw badNarrow("unknown channel");
  return channel;
}


/** True when every query word is a prefix of some word of the text. */
function matchesWords(text: string, words: string[]): boolean {
  const have = searchWords(text);
  return words.every((w) => have.some((x) => x.startsWith(w)));
}

export function compileNarrow(h: Hearth, viewer: UserRecord, terms: NarrowTerm[], preferUnreadRows = false): CompiledNarrow {
  const filters: Filter[] = [];
  const words: string[] = [];
  let nearId: number | null = null;
  let channel: MessageChannel | null = null;
  let topic: string | null = null;
  // Candidate sources, most selective first; the first one set wins.
  let idSource: number | null = null;
  let dmKey: string | null = null;
  let userIndex: string | null = null;
  let senderId: number | null = null;
  let archivedChannelIds: number[] | null = null;

  const add = (term: NarrowTerm, test: Filter) => filters.push(term.negated ? (m, f) => !test(m, f) : test);

  for (const term of terms) {
    const { operator, operand, negated } = term;
    switch (operator) {
      case "channel":
      case "stream": {
        const c = channelByOperand(h, viewer, operand);
        if (!negated) channel = c;
        add(term, (m) => m.channel_id === c.id);
        break;
      }
      case "channels":
      case "streams": {
        if (operand === "archived") {
          // FL 489: every message of the archived channels the viewer may read, their history included.
          const archived = readableArchivedChannels(h, viewer);
          const ids = new Set(archived.map((c) => c.id));
          if (!negated) archivedChannelIds ??= archived.map((c) => c.id);
          add(term, (m) => m.type === "stream" && ids.has(m.channel_id!));
          break;
        }
        if (operand !== "public" && operand !== "web-public") throw badNarrow(`invalid channels operand`);
        add(term, (m) => m.type === "stream" && channelById(h, m.channel_id!)?.invite_only === false);
        break;
      }
      case "mentions": {
        // FL 446: a personal, visible mention of the user (not silent, not a group or wildcard one),
        // as the renderer writes it, so it answers for any user and follows edits.
        const u = userByOperand(h, viewer, operand, "mentions");
        const mark = `<span class="user-mention" data-user-id="${u.id}">`;
        if (!negated && u.id === viewer.id) userIndex ??= "mentioned";
        add(term, (m) => m.rendered_content.includes(mark));
        break;
      }
      case "topic":
      case "subject": {
        if (typeof operand !== "string") throw badNarrow("invalid topic operand");
        const name = operand.trim();
        const key = topicKey(name);
        if (!negated) topic = key;
        // The same name as written spares lower-casing each message's topic.
        add(term, (m) => m.type === "stream" && (m.topic === name || topicKey(m.topic) === key));
        break;
      }
      case "sender": {
        const u = userByOperand(h, viewer, operand, "sender");
        if (!negated) senderId = u.id;
        add(term, (m) => m.sender_id === u.id);
        break;
      }
      case "dm":
      case "pm-with": {
        const ids = dmParticipants(h, viewer, operand, operator);
        const key = conversationKey([...ids, viewer.id]);
        if (!negated) dmKey = key;
        add(term, (m) => m.type === "private" && conversationKey(m.dm_user_ids!) === key);
        break;
      }
      case "dm-including":
      case "group-pm-with": {
        const u = userByOperand(h, viewer, operand, operator);
        if (!negated) userIndex ??= "dm";
        add(term, (m) => m.type === "private" && m.dm_user_ids!.includes(u.id));
        break;
      }
      case "is": {
        switch (operand) {
          case "dm":
          case "private":
            if (!negated) userIndex ??= "dm";
            add(term, (m) => m.type === "private");
            break;
          case "unread":
            if (!negated) userIndex = "unread";
            add(term, (_m, f) => !(f & MessageFlag.read));
            break;
          case "starred":
            if (!negated) userIndex = "starred";
            add(term, (_m, f) => (f & MessageFlag.starred) !== 0);
            break;
          case "mentioned":
            if (!negated) userIndex = "mentioned";
            add(term, (_m, f) => (f & MENTION_BITS) !== 0);
            break;
          case "alerted":
            if (!negated) userIndex = "alerted";
            add(term, (_m, f) => (f & MessageFlag.has_alert_word) !== 0);
            break;
          case "resolved":
            add(term, (m) => m.type === "stream" && m.topic.startsWith(RESOLVED_TOPIC_PREFIX));
            break;
          case "followed":
            add(term, (m) => m.type === "stream" && visibilityPolicyOf(h.store, viewer.id, m.channel_id!, m.topic) === VisibilityPolicy.FOLLOWED);
            break;
          case "muted":
            // Zulip's rule: a muted topic, or a muted channel unless the topic is unmuted or followed.
            add(term, (m) => {
              if (m.type !== "stream") return false;
              const policy = visibilityPolicyOf(h.store, viewer.id, m.channel_id!, m.topic);
              if (policy === VisibilityPolicy.MUTED) return true;
              if (policy === VisibilityPolicy.UNMUTED || policy === VisibilityPolicy.FOLLOWED) return false;
              return getSubscription(h.store, m.channel_id!, viewer.id)?.is_muted === true;
            });
            break;
          default:
            throw badNarrow(`unknown 'is' operand ${String(operand)}`);
        }
        break;
      }
      case "has": {
        const prop = HAS_OPERANDS.get(String(operand));
        if (operand === "reaction" || operand === "reactions") add(term, (m) => m.reactions.length > 0);
        else if (prop) add(term, (m) => m[prop] === true);
        else throw badNarrow(`unknown 'has' operand ${String(operand)}`);
        break;
      }
      case "id": {
        const id = messageIdOperand(operand);
        if (!negated) idSource = id;
        add(term, (m) => m.id === id);
        break;
      }
      case "near": {
        nearId = messageIdOperand(operand);
        break;
      }
      case "with": {
        // FL 271: the conversation that contains the message, wherever it moved.
        const m = getMessage(h.store, messageIdOperand(operand));
        const target = m && visibleFlags(h, viewer, m) !== undefined ? m : undefined;
        if (!target) throw badNarrow("invalid message ID");
        if (target.type === "stream") {
          const key = topicKey(target.topic);
          channel = channelById(h, target.channel_id!) ?? null;
          topic = key;
          filters.push((x) => x.channel_id === target.channel_id && topicKey(x.topic) === key);
        } else {
          const key = conversationKey(target.dm_user_ids!);
          dmKey = key;
          filters.push((x) => x.type === "private" && conversationKey(x.dm_user_ids!) === key);
        }
        break;
      }
      case "search": {
        if (typeof operand !== "string") throw badNarrow("invalid search operand");
        const w = searchWords(operand);
        if (negated) add(term, (m) => matchesWords(m.content + " " + m.topic, w));
        else {
          words.push(...w);
          filters.push((m) => matchesWords(m.content + " " + m.topic, w));
        }
        break;
      }
      default:
        throw badNarrow(`unknown operator ${operator}`);
    }
  }

  const store = h.store;
  let source: Source;
  let sourceIsUnread = false;
  if (preferUnreadRows && userIndex === "unread") {
    source = (from, dir) => unreadMessageIds(store, viewer.id, from, dir);
    sourceIsUnread = true;
  } else if (idSource !== null) {
    const id = idSource;
    source = (from, dir) => ((dir === "older" ? id <= from : id >= from) ? [id] : []);
  } else if (channel && topic !== null) {
    const c = channel.id;
    const t = topic;
    source = (from, dir) => topicIdsFrom(store, c, t, from, dir);
  } else if (dmKey !== null) {
    const k = dmKey;
    source = (from, dir) => idsInRange(store, "dmMessages", [k], from, dir);
  } else if (userIndex !== null && userIndex !== "dm") {
    const index = userIndex;
    source = (from, dir) => (index === "unread" ? unreadMessageIds(store, viewer.id, from, dir) : idsInRange(store, "userMessageIndex", [viewer.id, index], from, dir));
    sourceIsUnread = index === "unread";
  } else if (words.length > 0) {
    // The longest word is usually the rarest; its words' rows, merged in ID order, give the candidates.
    const pivot = [...words].sort((a, b) => b.length - a.length)[0];
    source = (from, dir) => idsForTermPrefix(store, pivot, from, dir);
  } else if (archivedChannelIds !== null) {
    const ids = archivedChannelIds;
    source = (from, dir) => mergeIds(ids.map((c) => idsInRange(store, "channelMessages", [c], from, dir)), dir);
  } else if (channel) {
    const c = channel.id;
    source = (from, dir) => idsInRange(store, "channelMessages", [c], from, dir);
  } else if (senderId !== null) {
    const s = senderId;
    source = (from, dir) => idsOfSender(store, s, from, dir);
  } else if (userIndex === "dm") {
    source = (from, dir) => idsInRange(store, "userMessageIndex", [viewer.id, "dm"], from, dir);
  } else {
    // No narrowing index: the user's own messages (Zulip's combined feed reads UserMessage).
    source = (from, dir) => userMessageIds(store, viewer.id, from, dir);
  }
  return {
    source,
    filters,
    searchWords: words,
    nearId,
    channel,
    unreadOnly: (byUnreadRows = false) => compileNarrow(h, viewer, [...terms, { operator: "is", operand: "unread", negated: false }], byUnreadRows),
    sourceIsUnread,
  };
}

const HAS_OPERANDS = new Map<string, keyof MessageRecord>([
  ["link", "has_link"],
  ["links", "has_link"],
  ["image", "has_image"],
  ["images", "has_image"],
  ["attachment", "has_attachment"],
  ["attachments", "has_attachment"],
]);

/** A message ID operand: an integer, or a string of digits (`id:""` or `with:[1]` are not IDs). */
function messageIdOperand(operand: unknown): number {
  const id = typeof operand === "number" ? operand : typeof operand === "string" && /^\d+$/.test(operand) ? Number(operand) : NaN;
  if (!Number.isSafeInteger(id)) throw badNarrow("invalid message ID");
  return id;
}
