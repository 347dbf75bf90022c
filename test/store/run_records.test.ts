/**
 * The run records the unread-rows job and the changes to runs write (src/store/unread_runs.ts
 * putRun, src/store/unread_batches.ts): places told apart by identity, a move's new places
 * made shared first so that a run never lists one place twice, and a batch's records,
 * encoded once for the users who hold the same messages, still each user's own.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../../src/store/db";
import type { MessageLocation } from "../../src/store/messages";
import { recipientsVersion } from "../../src/store/unread";
import { writeDeferredUnreadRows, type DeferredUnreadBatch } from "../../src/store/unread_batches";
import { putRun, relocateInUnreadRuns, unreadRunLocation } from "../../src/store/unread_runs";
import { decodeRun } from "../../src/store/unread_run_encoding";

let dir: string;
let store: Store;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-run-records-"));
  store = new Store(dir);
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A user's runs as stored: start, IDs, and each ID's place. */
function runsOf(userId: number): { start: number; ids: number[]; places: MessageLocation[]; placeOf: MessageLocation[] }[] {
  const out = [];
  for (const { key, value } of store.dbs.userMessageIndex.getRange({ start: [userId, "unreadBatch", 0], end: [userId, "unreadBatch", Number.MAX_SAFE_INTEGER] })) {
    const start = (key as [number, string, number])[2];
    const run = decodeRun(start, value);
    const places = store.dbs.userMessageIndex.get([userId, "unreadBatchPlaces", start]) as MessageLocation[];
    out.push({ start, ids: [...run.ids], places, placeOf: Array.from(run.placeAt, (at) => places[at]) });
  }
  return out;
}

test("a run lists each shared place once; a move to places equal to each other or to one it has keeps them listed once", async () => {
  const a: MessageLocation = [1, "alpha"];
  const b: MessageLocation = [1, "beta"];
  await store.commit(() => putRun(store, 7, 10, [10, 11, 12, 13], [a, b, a, b]));
  expect(runsOf(7)).toEqual([{ start: 10, ids: [10, 11, 12, 13], places: [a, b], placeOf: [a, b, a, b] }]);
  // Two messages moved to one new place (a separate object each, as a move makes them), one to a place the run has.
  const moved = new Map<number, MessageLocation>([
    [10, [2, "gamma"]],
    [12, [2, "gamma"]],
    [13, [1, "alpha"]],
  ]);
  await store.commit(() => relocateInUnreadRuns(store, 7, moved));
  const [run] = runsOf(7);
  expect(run.placeOf).toEqual([[2, "gamma"], b, [2, "gamma"], a]);
  expect(run.places).toHaveLength(3);
  expect(new Set(run.places.map((p) => JSON.stringify(p))).size).toBe(3);
  const expected: [number, MessageLocation][] = [[10, [2, "gamma"]], [11, b], [12, [2, "gamma"]], [13, a]];
  for (const [id, place] of expected) expect(unreadRunLocation(store, 7, id)).toEqual(place);
});

test("a batch's users who hold the same messages share their records; those who do not get their own", async () => {
  const topic: MessageLocation = [1, "topic"];
  const other: MessageLocation = [1, "other"];
  const ids = Array.from({ length: 70 }, (_, i) => 100 + i);
  const batch: DeferredUnreadBatch = {
    start: 100,
    target: ids[ids.length - 1],
    version: recipientsVersion(store),
    // Users 1, 2 and 3 receive every message but 150, which only users 1 and 2 receive.
    lists: new Map(ids.map((id) => [id, id === 150 ? [1, 2] : [1, 2, 3]])),
    locations: new Map(ids.map((id) => [id, id % 2 === 0 ? topic : other])),
    runs: new Map(),
  };
  const idsByUser = new Map([1, 2, 3].map((userId) => [userId, ids]));
  await store.commit(() => writeDeferredUnreadRows(store, batch, idsByUser, true));
  const placesOf = (list: number[]) => list.map((id) => (id % 2 === 0 ? topic : other));
  const first = ids.slice(0, 64);
  const rest = ids.slice(64);
  for (const userId of [1, 2]) {
    expect(runsOf(userId).map(({ start, ids, placeOf }) => ({ start, ids, placeOf }))).toEqual([
      { start: 100, ids: first, placeOf: placesOf(first) },
      { start: 164, ids: rest, placeOf: placesOf(rest) },
    ]);
  }
  // User 3's first 64 are another set (without 150), so the runs split elsewhere.
  const mine = ids.filter((id) => id !== 150);
  expect(runsOf(3).map(({ start, ids, placeOf }) => ({ start, ids, placeOf }))).toEqual([
    { start: 100, ids: mine.slice(0, 64), placeOf: placesOf(mine.slice(0, 64)) },
    { start: mine[64], ids: mine.slice(64), placeOf: placesOf(mine.slice(64)) },
  ]);
});
