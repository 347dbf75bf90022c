import type { Hearth } from "../context";
import { escapeHtml, escapeRegExp } from "../lib/text";
import { ApiError, badRequest } from "../errors";
import { type UserRecord } from "../store/users";
import { firstMessageIdSentSince, getMessageShared, type MessageRecord } from "../store/messages";
import { flagsOfUnread, flagsRowsBetween, getUserFlags, userFlagsGivenRows } from "../store/user_messages";
import { readableChannels, visibleFlags, type ReadableChannels } from "../access/messages";

import { type CompiledNarrow } from "./narrow_compile";

/**
 * Walking a compiled narrow (narrow_compile.ts) from an anchor: the candidates its
 * source gives, each checked against its filters and the viewer's access, the first
 * unread message, the search highlights and GET /messages' range around the anchor.
 */
export interface Match {
  message: MessageRecord;
  flags: number;
}

/** Walks the narrow from `from` (inclusive) and returns up to `limit` visible matches. */
export function walkNarrow(h: Hearth, viewer: UserRecord, narrow: CompiledNarrow, from: number, direction: "older" | "newer", limit: number): Match[] {
  const out: Match[] = [];
  if (limit <= 0) return out;
  for (const match of candidatesInBatches(h, viewer, narrow, from, direction)) {
    if (match === null) continue;
    out.push(match);
    if (out.length >= limit) break;
  }
  return out;
}

/**
 * Each candidate of the narrow's source from `from` (inclusive): its match, or null
 * when the viewer may not see it or it does not match. One step per candidate, so two
 * walks can be advanced in turn (firstUnreadId). Stopping early closes the source.
 */
function* candidates(h: Hearth, viewer: UserRecord, narrow: CompiledNarrow, from: number, direction: "older" | "newer"): Generator<Match | null> {
  const readable = readableChannels(h, viewer);
  for (const id of narrow.source(from, direction)) {
    const message = getMessageShared(h.store, id);
    yield message ? matchOf(h, viewer, narrow, readable, message, narrow.sourceIsUnread ? flagsOfUnread(h.store, viewer.id, id) : undefined) : null;
  }
}

/** A candidate's match, or null; `own` as visibleFlags takes it (the viewer's flags if already read). */
function matchOf(h: Hearth, viewer: UserRecord, narrow: CompiledNarrow, readable: ReadableChannels, message: MessageRecord, own: number | null | undefined): Match | null {
  const flags = visibleFlags(h, viewer, message, readable, own);
  return flags !== undefined && narrow.filters.every((f) => f(message, flags)) ? { message, flags } : null;
}

/** Batches of a walk's candidate IDs, growing from 8 to 64 (a walk that needs few pulls few ahead). */
function* inBatches(ids: Iterable<number>): Generator<number[]> {
  let batch: number[] = [];
  let size = 8;
  for (const id of ids) {
    batch.push(id);
    if (batch.length < size) continue;
    yield batch;
    batch = [];
    size = Math.min(size * 2, 64);
  }
  if (batch.length > 0) yield batch;
}

/**
 * The same matches as `candidates`, reading the viewer's flags rows a batch of
 * candidates at a time in one range scan where they are sparse (flagsRowsBetween:
 * unread messages with no other flag have none), else one by one. The first batch is
 * read one by one and tells which: a range scan pays only when few of the candidates
 * hold a row (its setup costs several point reads), and a reader who has read most of
 * them holds one for each. A batch whose range holds more rows than candidates is read
 * one by one too, and so is the rest of the walk. For walks that take many candidates
 * in a row (walkNarrow), not for firstUnreadId's steps.
 */
function* candidatesInBatches(h: Hearth, viewer: UserRecord, narrow: CompiledNarrow, from: number, direction: "older" | "newer"): Generator<Match | null> {
  const readable = readableChannels(h, viewer);
  const store = h.store;
  let sparse: boolean | undefined;
  for (const batch of inBatches(narrow.source(from, direction))) {
    const rows = sparse ? flagsRowsBetween(store, viewer.id, Math.min(...batch), Math.max(...batch), batch.length) : undefined;
    if (sparse && rows === undefined) sparse = false;
    let held = 0;
    for (const id of batch) {
      const message = getMessageShared(store, id);
      if (!message) {
        yield null;
        continue;
      }
      let own: number | undefined;
      if (rows !== undefined) own = narrow.sourceIsUnread ? (rows.get(id) ?? 0) : userFlagsGivenRows(store, viewer.id, id, rows);
      else {
        own = narrow.sourceIsUnread ? flagsOfUnread(store, viewer.id, id) : getUserFlags(store, viewer.id, id);
        // Flags 0 are never a row (user_messages.ts): anything else is one.
        if (own) held++;
      }
      yield matchOf(h, viewer, narrow, readable, message, own ?? null);
    }
    sparse ??= held * 4 <= batch.length;
  }
}

/** The message with `viewer`'s flags if they may see it and it matches the narrow. */
export function matchesNarrow(h: Hearth, viewer: UserRecord, narrow: CompiledNarrow, id: number, readable: ReadableChannels = readableChannels(h, viewer)): Match | undefined {
  const message = getMessageShared(h.store, id);
  return (message && matchOf(h, viewer, narrow, readable, message, undefined)) ?? undefined;
}

function matchOne(h: Hearth, viewer: UserRecord, narrow: CompiledNarrow, id: number): Match[] {
  const match = matchesNarrow(h, viewer, narrow, id);
  return match ? [match] : [];
}

/**
 * GET /messages with `message_ids` (FL 300): those of the messages the viewer may read
 * that match the narrow, oldest first.
 */
export function fetchByIds(h: Hearth, viewer: UserRecord, narrow: CompiledNarrow, ids: readonly number[]): Match[] {
  if (ids.length > MAX_MESSAGES_PER_FETCH) throw badRequest(`Too many messages requested (maximum ${MAX_MESSAGES_PER_FETCH}).`);
  return [...new Set(ids)].sort((a, b) => a - b).flatMap((id) => matchOne(h, viewer, narrow, id));
}

/** Zulip's anchor for "newest" and for a first_unread with no unread message. */
export const LARGER_THAN_MAX_MESSAGE_ID = 10_000_000_000_000_000;

/**
 * The oldest unread message of the narrow: the narrow plus `is:unread`. A topic or a
 * conversation is the narrow's own index, but a reader who has read nearly all of a
 * long topic would have its every message checked, while their unread rows may be
 * few (or the other way round). Both walks give the same answer (each applies every
 * term, oldest first), so they are advanced in turn, a candidate each, and the first
 * to answer wins: at most twice the cheaper one's work.
 */
export function firstUnreadId(h: Hearth, viewer: UserRecord, narrow: CompiledNarrow): number | null {
  const own = narrow.unreadOnly();
  if (own.sourceIsUnread) return walkNarrow(h, viewer, own, 0, "newer", 1)[0]?.message.id ?? null;
  const walks = [candidates(h, viewer, own, 0, "newer"), candidates(h, viewer, narrow.unreadOnly(true), 0, "newer")];
  try {
    for (let turn = 0; ; turn++) {
      const step = walks[turn % 2].next();
      if (step.done) return null;
      if (step.value !== null) return step.value.message.id;
    }
  } finally {
    for (const walk of walks) walk.return(undefined);
  }
}


function highlightText(text: string, words: string[]): string {
  if (words.length === 0) return text;
  const escaped = words.map(escapeRegExp);
  const re = new RegExp(`(?<![\\p{L}\\p{N}_])(${escaped.join("|")})[\\p{L}\\p{N}_]*`, "giu");
  return text.replace(re, (m) => `<span class="highlight">${m}</span>`);
}

/** `match_content`: the rendered HTML with matched words wrapped, outside tags only. */
export function highlightHtml(html: string, words: string[]): string {
  return html
    .split(/(<[^>]*>)/)
    .map((part) => (part.startsWith("<") ? part : highlightText(part, words)))
    .join("");
}

export function highlightTopic(topic: string, words: string[]): string {
  return highlightText(escapeHtml(topic), words);
}
export type AnchorSpec = number | "newest" | "oldest" | "first_unread" | { sentSince: number };

/**
 * `anchor_date` (FL 445): an ISO 8601 date or date and time; one without a UTC offset
 * is taken as UTC, as the server keeps every time in UTC.
 */
function parseAnchorDate(raw: string): number {
  const text = raw.trim();
  const iso = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i.exec(text);
  const ms = iso ? Date.parse(iso[1] !== undefined || !/[T ]/i.test(text) ? text.replace(" ", "T") : `${text.replace(" ", "T")}Z`) : NaN;
  if (!Number.isFinite(ms)) throw badRequest("Invalid anchor_date");
  return Math.ceil(ms / 1000);
}

/** `anchorDate`: GET /messages' `anchor_date`, for `anchor=date` (FL 445); other callers have no date anchor. */
export function parseAnchor(raw: unknown, useFirstUnread: boolean, anchorDate?: string | null): AnchorSpec {
  if (useFirstUnread) return "first_unread";
  if (raw === undefined) throw new ApiError("Missing 'anchor' argument", "REQUEST_VARIABLE_MISSING", 400, { var_name: "anchor" });
  if (raw === "newest" || raw === "oldest" || raw === "first_unread") return raw;
  if (raw === "date" && anchorDate !== undefined) {
    if (anchorDate === null) throw new ApiError("Missing 'anchor_date' argument", "REQUEST_VARIABLE_MISSING", 400, { var_name: "anchor_date" });
    return { sentSince: parseAnchorDate(anchorDate) };
  }
  const n = typeof raw === "number" ? raw : typeof raw === "string" && /^-?\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n) && !(Number.isFinite(n) && n >= LARGER_THAN_MAX_MESSAGE_ID)) throw badRequest("Invalid anchor");
  return Math.max(0, Math.min(n, LARGER_THAN_MAX_MESSAGE_ID));
}

export const MAX_MESSAGES_PER_FETCH = 5000;

export interface FetchResult {
  anchor: number;
  matches: Match[];
  found_anchor: boolean;
  found_oldest: boolean;
  found_newest: boolean;
}

/** Zulip's anchor/before/after algorithm (`fetch_messages` + `post_process_limited_query`). */
export function fetchRange(
  h: Hearth,
  viewer: UserRecord,
  narrow: CompiledNarrow,
  anchorSpec: AnchorSpec,
  includeAnchor: boolean,
  numBefore: number,
  numAfter: number,
): FetchResult {
  if (numBefore < 0 || numAfter < 0) throw badRequest("Invalid num_before or num_after");
  if (numBefore + numAfter > MAX_MESSAGES_PER_FETCH) throw badRequest(`Too many messages requested (maximum ${MAX_MESSAGES_PER_FETCH}).`);
  const anchor =
    anchorSpec === "oldest" ? 0
    : anchorSpec === "newest" ? LARGER_THAN_MAX_MESSAGE_ID
    : anchorSpec === "first_unread" ? (firstUnreadId(h, viewer, narrow) ?? LARGER_THAN_MAX_MESSAGE_ID)
    // The first message sent on or after the date, else the newest (FL 445).
    : typeof anchorSpec === "object" ? (firstMessageIdSentSince(h.store, anchorSpec.sentSince) ?? LARGER_THAN_MAX_MESSAGE_ID)
    : anchorSpec;
  // From the anchor's value, as Zulip's fetch_messages does: an anchor of 0 or past
  // every ID reaches that end whatever way it was given.
  const anchoredToLeft = anchor === 0;
  const anchoredToRight = anchor >= LARGER_THAN_MAX_MESSAGE_ID;
  const before = anchor > 0 ? walkNarrow(h, viewer, narrow, Math.min(anchor - 1, Number.MAX_SAFE_INTEGER), "older", numBefore).reverse() : [];
  const atAnchor = includeAnchor && anchor > 0 && anchor < LARGER_THAN_MAX_MESSAGE_ID ? matchOne(h, viewer, narrow, anchor) : [];
  const after = anchor < LARGER_THAN_MAX_MESSAGE_ID ? walkNarrow(h, viewer, narrow, anchor + 1, "newer", numAfter) : [];
  return {
    anchor,
    matches: [...before, ...atAnchor, ...after],
    found_anchor: atAnchor.length === 1,
    found_oldest: anchoredToLeft || before.length < numBefore,
    found_newest: anchoredToRight || after.length < numAfter,
  };
}
