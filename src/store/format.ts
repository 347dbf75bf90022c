import type { Store } from "./db";
import { endRunsUpgrade, upgradeRunsToFormat2 } from "./unread_runs";

/**
 * The layout version of the store's key spaces and records. A Hearth reads stores of
 * its own version and older ones; it refuses a newer one rather than misread it (a
 * downgrade after an upgrade, or a backup restored into an older Hearth). Raise it
 * with any change an older Hearth would misread, and add the upgrade of older stores.
 * Stores written before the version was recorded are version 1.
 */
export const STORE_FORMAT_VERSION = 4;

/**
 * Each version's upgrade from the one before, run in order at start; each commits as
 * it goes and resumes where a crash left it (the version is recorded only after all).
 * 2: unread runs encode their IDs as varint distances, not float64 (src/store/unread_runs.ts).
 * 3: messages past a watermark have no search rows yet (src/store/search_terms.ts); an
 *    older Hearth would not find them. Nothing to rewrite: a store without the
 *    watermark has every message's rows.
 * 4: nor sender rows past that watermark (search_terms.ts), which an older Hearth
 *    would leave out of sender narrows; and a message's recipient list may be the ID
 *    of a shared list (src/store/shared_recipient_lists.ts), which an older Hearth
 *    would take for the list. Nothing to rewrite: a store of format 3 has every
 *    message's sender row, and inline lists read as before.
 */
const UPGRADES: Record<number, { run: (store: Store) => Promise<unknown>; end: (store: Store) => void }> = {
  2: { run: upgradeRunsToFormat2, end: endRunsUpgrade },
  3: { run: async () => {}, end: () => {} },
  4: { run: async () => {}, end: () => {} },
};

const FORMAT_KEY = "store_format_version";

export class StoreFormatError extends Error {}

/** The version the store was written with (1 for a store that predates the record). */
export function storeFormatVersion(store: Store): number {
  const value = store.dbs.meta.get(FORMAT_KEY);
  return typeof value === "number" ? value : 1;
}

/** Throws a StoreFormatError for a store newer than this Hearth reads. */
export function assertReadableFormat(version: number, where: string): void {
  if (version > STORE_FORMAT_VERSION) {
    throw new StoreFormatError(
      `${where} was written by a newer Hearth (store format ${version}); this Hearth reads format ${STORE_FORMAT_VERSION} and older. ` +
        "Run the newer Hearth, or restore a backup made by this version.",
    );
  }
}

/**
 * At start: refuses a newer store, upgrades an older one (a store with no version
 * recorded is version 1; a new, empty one has nothing to upgrade) and records the
 * version once every upgrade is done.
 */
export async function openStoreFormat(store: Store): Promise<void> {
  const recorded = store.dbs.meta.get(FORMAT_KEY);
  const version = typeof recorded === "number" ? recorded : 1;
  assertReadableFormat(version, `The data folder ${store.dataDir}`);
  if (recorded === STORE_FORMAT_VERSION) return;
  for (let next = version + 1; next <= STORE_FORMAT_VERSION; next++) await UPGRADES[next]?.run(store);
  await store.commit(() => {
    for (let next = version + 1; next <= STORE_FORMAT_VERSION; next++) UPGRADES[next]?.end(store);
    store.dbs.meta.put(FORMAT_KEY, STORE_FORMAT_VERSION);
  });
}

/**
 * Inside the commit that creates an organization: its store is in this Hearth's format
 * from the first record, whether or not a start ran openStoreFormat before (so nothing
 * takes it for an older store to back up and upgrade).
 */
export function recordCurrentFormat(store: Store): void {
  store.dbs.meta.put(FORMAT_KEY, STORE_FORMAT_VERSION);
}

/** Inside a commit: every key space emptied but `meta` (the realm record, the counters, this format). */
export function clearAllButMeta(store: Store): void {
  for (const [name, db] of Object.entries(store.dbs)) if (name !== "meta") db.clearSync();
}

/** How many records each key space holds: a backup's manifest, checked again at restore. */
export function recordCounts(store: Store): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const [name, db] of Object.entries(store.dbs)) counts[name] = (db.getStats() as { entryCount: number }).entryCount;
  return counts;
}
