import { StoreCache } from "./cache";
import type { Store } from "./db";
import { firstAbove, type IndexRow } from "./message_indexes";
import type { MessageLocation } from "./messages";
import { decodeFormat1Run, decodeRun, encodeRun, type Run } from "./unread_run_encoding";

/**
 * Unread runs, the form in which the background job (unread_rows.ts) writes a user's
 * "unread" rows for one batch of messages: one run per user and batch instead of a
 * row per message, two puts instead of one per message. The key layout is at the top
 * of unread.ts. A run's IDs are all at least its start, and the runs of one user
 * cover disjoint spans (one per batch), so the run that may hold a message is the one
 * with the greatest start not above it.
 *
 * A run entry means exactly what a written "unread" row means, and leaves as one
 * does: whatever removes a user's "unread" row for a message (reading it, losing it,
 * its deletion) takes it out of the run (applyRunRemovals), and a move updates its
 * location there (relocateInUnreadRuns). A message is never both in a run and in a
 * written "unread" row: the job skips messages with a row, and a message leaves the
 * run before a new row can be written for it.
 */
const UNREAD_RUN = "unreadBatch";
const UNREAD_RUN_PLACES = "unreadBatchPlaces";
/**
 * A batch's messages for one user are split into runs of at most this many: taking a
 * message out rewrites its run, and a user reading a backlog message by message
 * rewrites it each time. (Changes to many messages at once gather their removals and
 * rewrite each run once, which keeps a large deletion about as fast as with a row per
 * message; rewriting a whole batch's run per message and recipient was an order of
 * magnitude slower.)
 */
export const RUN_MAX_IDS = 64;

/** Meta key: during the upgrade to format 2, the users below this ID have their runs in format 2 already. */
const FORMAT2_PROGRESS = ["format2RunsUpgradedBelowUser"];
const UPGRADE_USERS_PER_COMMIT = 50;

/**
 * Rewrites every run record of a format-1 store in format 2's encoding, at start
 * (src/store/format.ts), before anything reads runs. A few users per commit, so that
 * no transaction grows with the store; each commit records how far it got, and a
 * start after a crash midway resumes there. Users are never deleted, so the users key
 * space names everyone who can hold runs.
 */
export async function upgradeRunsToFormat2(store: Store): Promise<number> {
  const from = (store.dbs.meta.get(FORMAT2_PROGRESS) as number | undefined) ?? 0;
  const userIds = [...store.dbs.users.getKeys({ start: from })] as number[];
  let count = 0;
  for (let i = 0; i < userIds.length; i += UPGRADE_USERS_PER_COMMIT) {
    const chunk = userIds.slice(i, i + UPGRADE_USERS_PER_COMMIT);
    await store.commit(() => {
      for (const userId of chunk) {
        const runs: { key: unknown; run: Run }[] = [];
        for (const { key, value } of store.dbs.userMessageIndex.getRange({ start: [userId, UNREAD_RUN, 0], end: [userId, UNREAD_RUN, Number.MAX_SAFE_INTEGER] })) {
          runs.push({ key, run: decodeFormat1Run((key as [number, string, number])[2], value) });
        }
        for (const { key, run } of runs) store.dbs.userMessageIndex.put(key, encodeRun(run.start, run.ids, run.placeAt));
        count += runs.length;
      }
      store.dbs.meta.put(FORMAT2_PROGRESS, chunk[chunk.length - 1] + 1);
    });
  }
  runsChanged(store);
  return count;
}

/** Once the format's version is recorded: the upgrade's progress mark goes. Call inside `store.commit`. */
export function endRunsUpgrade(store: Store): void {
  store.dbs.meta.remove(FORMAT2_PROGRESS);
}

/** The user's runs from the one that may hold `from`, in the given direction. */
function* userRuns(store: Store, userId: number, from: number, direction: "older" | "newer"): Generator<Run> {
  let after = from;
  for (const { key, value } of store.dbs.userMessageIndex.getRange({ start: [userId, UNREAD_RUN, from], end: [userId, UNREAD_RUN, -1], reverse: true, limit: direction === "older" ? undefined : 1 })) {
    const start = (key as [number, string, number])[2];
    yield decodeRun(start, value);
    after = start;
  }
  if (direction === "older") return;
  for (const { key, value } of store.dbs.userMessageIndex.getRange({ start: [userId, UNREAD_RUN, Math.max(after, from) + 1], end: [userId, UNREAD_RUN, Number.MAX_SAFE_INTEGER] })) {
    yield decodeRun((key as [number, string, number])[2], value);
  }
}

/**
 * Each user's runs last looked up, decoded, by start: a walk over a user's messages
 * (GET /messages) asks for the flags of message after message, and a topic's newest 50
 * cross many runs, so keeping one run per user cost a range scan at every crossing, on
 * every request. Writes to runs on this thread drop them all (runsChanged), as does each
 * batch of the worker once the main thread hears of it (loadPendingUnreadIndex); reads
 * inside a transaction, which writes follow, never use them (StoreCache hands them a
 * fresh, unkept set). The worker's writes go to runs of later messages, or, for a batch
 * planned again, to the same messages. Only runs found are kept, at most
 * RUNS_KEPT_PER_USER per user (past that the user's are dropped and kept afresh).
 */
const RUNS_KEPT_PER_USER = 32;
class KnownRuns {
  /** Ascending by start; the runs of one user cover disjoint spans. */
  readonly runs: Run[] = [];
  /**
   * The user's newest runs, newest first, read from the top with none left out between
   * them (`newestRunIds`), as they stood at watermark `newestAt`; `newestAll`: the oldest
   * run is among them.
   */
  newest: Run[] = [];
  newestAt = -1;
  newestAll = false;

  /** The kept run spanning `messageId`, if any: no other run of the user starts inside a run's span. */
  spanning(messageId: number): Run | undefined {
    const runs = this.runs;
    let lo = 0;
    let hi = runs.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (runs[mid].start <= messageId) lo = mid + 1;
      else hi = mid;
    }
    const run = runs[lo - 1];
    return run !== undefined && messageId <= run.ids[run.ids.length - 1] ? run : undefined;
  }

  keep(run: Run): void {
    if (this.runs.length >= RUNS_KEPT_PER_USER) this.runs.length = 0;
    let at = 0;
    while (at < this.runs.length && this.runs[at].start < run.start) at++;
    if (this.runs[at]?.start === run.start) this.runs[at] = run;
    else this.runs.splice(at, 0, run);
  }
}
const knownRuns = new StoreCache<number, KnownRuns>();

export function runsChanged(store: Store): void {
  knownRuns.invalidate(store);
}

/** The run holding a user's "unread" row for a message, and the message's position in it. */
function unreadRunHolding(store: Store, userId: number, messageId: number): (Run & { at: number }) | undefined {
  const known = knownRuns.get(store, userId, () => new KnownRuns());
  let run = known.spanning(messageId);
  if (run === undefined) {
    // The run with the greatest start not above the message: the only one that may hold it.
    for (const found of userRuns(store, userId, messageId, "older")) {
      run = found;
      break;
    }
    if (run === undefined || messageId > run.ids[run.ids.length - 1]) return undefined;
    known.keep(run);
  }
  const at = firstAbove(run.ids, messageId - 1);
  return run.ids[at] === messageId ? { ...run, at } : undefined;
}

/** Whether one of the user's runs holds their "unread" row for a message. */
export function inUnreadRun(store: Store, userId: number, messageId: number): boolean {
  return unreadRunHolding(store, userId, messageId) !== undefined;
}

/** Where the run holding a user's "unread" row for a message says the message is; undefined when no run holds it. */
export function unreadRunLocation(store: Store, userId: number, messageId: number): MessageLocation | undefined {
  const inRun = unreadRunHolding(store, userId, messageId);
  return inRun && runPlaces(store, userId, inRun.start)[inRun.placeAt[inRun.at]];
}

function runPlaces(store: Store, userId: number, start: number): MessageLocation[] {
  return (store.dbs.userMessageIndex.get([userId, UNREAD_RUN_PLACES, start]) as MessageLocation[] | undefined) ?? [];
}

/** Removes a user's runs starting from `from` to `to` (inclusive). Call inside `store.commit`. */
export function removeRuns(store: Store, userId: number, from: number, to: number): void {
  runsChanged(store);
  for (const key of store.dbs.userMessageIndex.getKeys({ start: [userId, UNREAD_RUN, from], end: [userId, UNREAD_RUN, to + 1] })) {
    const start = (key as [number, string, number])[2];
    store.dbs.userMessageIndex.remove([userId, UNREAD_RUN, start]);
    store.dbs.userMessageIndex.remove([userId, UNREAD_RUN_PLACES, start]);
  }
}

/**
 * Writes a user's run (non-empty). Call inside `store.commit`. Its places are told
 * apart by identity, so callers pass one object per distinct location: the job's batch
 * and a bulk load share one per place, a rewrite passes the run's own places, and a
 * move makes its new locations shared (samePlacesShared). Comparing each new place
 * with the run's others as JSON was a large share of the job's unread side
 * (docs/benchmarks.md, "The background job's cost").
 */
export function putRun(store: Store, userId: number, start: number, ids: ArrayLike<number>, locations: readonly MessageLocation[]): void {
  putRunRecords(store, userId, runRecords(start, ids, locations));
}

/** A run's two records as stored, for putRunRecords: the job writes the same run for every user who holds the same messages. */
export interface RunRecords {
  start: number;
  ids: ArrayLike<number>;
  run: Buffer;
  places: MessageLocation[];
}

/** A run's records (see putRun for `locations`). */
export function runRecords(start: number, ids: ArrayLike<number>, locations: readonly MessageLocation[]): RunRecords {
  const places: MessageLocation[] = [];
  const at = new Map<MessageLocation, number>();
  const placeAt = locations.map((location) => at.get(location) ?? (at.set(location, places.length), places.push(location) - 1));
  return { start, ids, run: encodeRun(start, ids, placeAt), places };
}

/** Writes a user's run from its records. Call inside `store.commit`. */
export function putRunRecords(store: Store, userId: number, records: RunRecords): void {
  runsChanged(store);
  store.dbs.userMessageIndex.put([userId, UNREAD_RUN, records.start], records.run);
  store.dbs.userMessageIndex.put([userId, UNREAD_RUN_PLACES, records.start], records.places);
}

/** The locations with those equal by value made one object (the first of them), for putRun. */
function samePlacesShared(locations: readonly MessageLocation[]): MessageLocation[] {
  const byValue = new Map<string, MessageLocation>();
  return locations.map((location) => {
    const key = JSON.stringify(location);
    return byValue.get(key) ?? (byValue.set(key, location), location);
  });
}

/**
 * "unread" rows held in runs to take out, by user: gathered over all the messages of
 * a change, then written once per run (applyRunRemovals), since taking a message out
 * rewrites its run.
 */
export type RunRemovals = Map<number, number[]>;

/**
 * Visits, once each, the user's runs that span some of these messages, with those
 * messages (ascending IDs in, in any order): a change to many messages rewrites each
 * run once.
 */
function forEachRunSpanning(store: Store, userId: number, messageIds: Iterable<number>, visit: (run: Run, spanned: number[]) => void): void {
  const ids = [...new Set(messageIds)].sort((x, y) => x - y);
  if (ids.length === 0) return;
  // One walk over the runs from the first ID's to the last ID (not a lookup per ID: most
  // IDs of a large change are in no run); collected first, since `visit` rewrites runs.
  const runs: Run[] = [];
  for (const run of userRuns(store, userId, ids[0], "newer")) {
    if (run.start > ids[ids.length - 1]) break;
    runs.push(run);
  }
  let i = 0;
  for (const run of runs) {
    const last = run.ids[run.ids.length - 1];
    while (i < ids.length && ids[i] < run.start) i++;
    const spanned: number[] = [];
    for (; i < ids.length && ids[i] <= last; i++) spanned.push(ids[i]);
    if (spanned.length > 0) visit(run, spanned);
  }
}

/** Takes the gathered messages out of the users' runs that hold them. Call inside `store.commit`. */
export function applyRunRemovals(store: Store, removals: RunRemovals): void {
  for (const [userId, messageIds] of removals) forEachRunSpanning(store, userId, messageIds, (run, gone) => rewriteRunWithout(store, userId, run, new Set(gone)));
}

function rewriteRunWithout(store: Store, userId: number, run: Run, gone: ReadonlySet<number>): void {
  const kept: number[] = [];
  for (let i = 0; i < run.ids.length; i++) if (!gone.has(run.ids[i])) kept.push(i);
  if (kept.length === run.ids.length) return;
  if (kept.length === 0) {
    removeRuns(store, userId, run.start, run.start);
    return;
  }
  // Rewritten through putRun so places no kept entry uses are dropped.
  const places = runPlaces(store, userId, run.start);
  putRun(
    store,
    userId,
    run.start,
    kept.map((i) => run.ids[i]),
    kept.map((i) => places[run.placeAt[i]]),
  );
}

/** Points the user's run entries for moved messages (message ID → its new place) at their new places, each run rewritten once. */
export function relocateInUnreadRuns(store: Store, userId: number, moved: ReadonlyMap<number, MessageLocation>): void {
  forEachRunSpanning(store, userId, moved.keys(), (run, spanned) => {
    const places = runPlaces(store, userId, run.start);
    const locations = Array.from(run.placeAt, (at) => places[at]);
    let changed = false;
    for (const id of spanned) {
      const at = firstAbove(run.ids, id - 1);
      if (run.ids[at] !== id) continue;
      locations[at] = moved.get(id)!;
      changed = true;
    }
    // Rewritten through putRun so places no entry uses any more are dropped; a moved
    // message's new place may equal another's, or one the run already has.
    if (changed) putRun(store, userId, run.start, run.ids, samePlacesShared(locations));
  });
}

/** A user's run rows with their locations, walking from `from` (inclusive) in the given direction. */
export function* unreadRunRows(store: Store, userId: number, from: number, direction: "older" | "newer"): Generator<IndexRow> {
  for (const run of userRuns(store, userId, from, direction)) {
    const places = runPlaces(store, userId, run.start);
    for (const i of runPositions(run.ids, from, direction)) yield { id: run.ids[i], value: places[run.placeAt[i]] };
  }
}

export function* unreadRunIds(store: Store, userId: number, from: number, direction: "older" | "newer", watermark: number): Generator<number> {
  if (direction === "older" && !store.inTransaction) {
    yield* newestRunIds(store, userId, from, watermark);
    return;
  }
  for (const run of userRuns(store, userId, from, direction)) for (const i of runPositions(run.ids, from, direction)) yield run.ids[i];
}

/**
 * At most this many of a user's newest runs are kept for walks from the top (a few
 * pages of `is:unread`, at most RUN_MAX_IDS IDs each); a walk past them reads the rest.
 */
const NEWEST_RUNS_KEPT = 16;

/**
 * unreadRunIds walking older, from the user's newest runs kept in memory (KnownRuns
 * `newest`): GET /messages for `is:unread` opened a range scan and decoded the newest
 * runs again on every request, most of its merge of the unread rows. The kept runs are
 * dropped with the rest of KnownRuns by every write of runs on this thread and each
 * batch of the worker once heard of (runsChanged), and are also read again when the
 * watermark has moved: the worker's last commit of a batch writes the batch's runs and
 * moves it, so a walk that sees the new watermark, before the main thread hears of the
 * batch, reads the new runs rather than a top that lacks them (their messages no longer
 * count as implicit rows). Its earlier commits write runs of messages past the
 * watermark, which are still implicit rows, merged with these.
 */
function* newestRunIds(store: Store, userId: number, from: number, watermark: number): Generator<number> {
  const known = knownRuns.get(store, userId, () => new KnownRuns());
  if (known.newestAt !== watermark) {
    known.newest = [];
    known.newestAll = false;
    known.newestAt = watermark;
  }
  const kept = known.newest;
  // The kept runs serve the walk when they reach down to the run that may hold `from` (or hold all):
  // every run with a start at or above the lowest kept start is kept.
  let i = 0;
  if (kept.length > 0 || known.newestAll) {
    if (!known.newestAll && kept[kept.length - 1].start > from) {
      yield* storedRunIdsOlder(store, userId, from);
      return;
    }
    while (i < kept.length && kept[i].start > from) i++;
  }
  for (; i < kept.length; i++) {
    const ids = kept[i].ids;
    for (let j = firstAbove(ids, from) - 1; j >= 0; j--) yield ids[j];
  }
  if (known.newestAll) return;
  // Past the kept runs: one scan on, its runs kept while there is room and this walk's list is still the user's.
  const below = kept.length === 0 ? Number.MAX_SAFE_INTEGER : kept[kept.length - 1].start - 1;
  let keeping = true;
  for (const { key, value } of store.dbs.userMessageIndex.getRange({ start: [userId, UNREAD_RUN, below], end: [userId, UNREAD_RUN, -1], reverse: true })) {
    const run = decodeRun((key as [number, string, number])[2], value);
    keeping &&= known.newest === kept && kept.length < NEWEST_RUNS_KEPT;
    // Another walk of the same user, advanced in turn with this one, may have kept these already.
    if (keeping && (kept.length === 0 || run.start < kept[kept.length - 1].start)) kept.push(run);
    if (run.start > from) continue;
    const ids = run.ids;
    for (let j = firstAbove(ids, from) - 1; j >= 0; j--) yield ids[j];
  }
  if (keeping && known.newest === kept) known.newestAll = true;
}

function* storedRunIdsOlder(store: Store, userId: number, from: number): Generator<number> {
  for (const run of userRuns(store, userId, from, "older")) {
    const ids = run.ids;
    for (let j = firstAbove(ids, from) - 1; j >= 0; j--) yield ids[j];
  }
}

/** Positions in an ascending list from `from` (inclusive) in the given direction. */
function* runPositions(ids: ArrayLike<number>, from: number, direction: "older" | "newer"): Generator<number> {
  if (direction === "older") for (let i = firstAbove(ids, from) - 1; i >= 0; i--) yield i;
  else for (let i = firstAbove(ids, from - 1); i < ids.length; i++) yield i;
}

