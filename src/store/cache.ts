import type { Store } from "./db";

const anyValue = () => true;

/**
 * Decoded records kept in memory, per store, while nothing of their kind is written.
 * Writers call `invalidate` inside their transaction; the version moves then and
 * again when that transaction ends (committed or rolled back), so nothing a reader
 * saw in between outlives the write. Reads inside a transaction bypass the cache:
 * they may see writes that roll back. Cached values are shared: treat them as
 * immutable. Only found values are kept.
 */
export class StoreCache<K, V> {
  private static readonly all: StoreCache<unknown, unknown>[] = [];

  /** For writes that bypass the usual writers (wiping the store): forget everything. */
  static invalidateAll(store: Store): void {
    for (const cache of StoreCache.all) cache.invalidate(store);
  }

  private writes = 0;
  /**
   * This cache's entry in each store's `cacheEntries`: the store holds the values it
   * caches (a closed store and its values go together), and each of a send's many
   * cached reads finds its entry by an array index (a WeakMap lookup, then a WeakRef's
   * deref, showed in its profile).
   */
  private readonly slot: number;

  constructor() {
    this.slot = StoreCache.all.length;
    StoreCache.all.push(this as StoreCache<unknown, unknown>);
  }

  private entryOf(store: Store): { version: number; values: Map<K, V> } | undefined {
    // `?.`: a stand-in for a Store (a read-only handle on a few key spaces, in tests) has no entries, and keeps nothing.
    return store.cacheEntries?.[this.slot] as { version: number; values: Map<K, V> } | undefined;
  }

  /** Changes whenever the cached kind of record is written (for caches derived from it). */
  get version(): number {
    return this.writes;
  }

  invalidate(store: Store): void {
    this.writes++;
    this.unsettled++;
    store.afterCommit(() => {
      this.writes++;
      this.unsettled--;
    });
  }

  /** Writes whose transaction has not yet committed or rolled back (see getSettled). */
  private unsettled = 0;

  /**
   * Like `get`, and inside a transaction too while every write of this kind has
   * committed or rolled back: no transaction of the running batch (this one
   * included) has changed such a record, so the committed value the cache holds is
   * the one the transaction would read. Otherwise read from the transaction, not
   * kept. For reads that happen in every transaction of a kind (a send's channel row).
   */
  getSettled(store: Store, key: K, load: () => V): V {
    if (!store.inTransaction) return this.get(store, key, load);
    if (this.unsettled !== 0) return load();
    const cache = this.entryOf(store);
    const cached = cache && cache.version === this.writes ? cache.values.get(key) : undefined;
    return cached !== undefined ? cached : load();
  }

  /** Drops the cached values whose key fails `keep` (for caches whose keys age out). */
  prune(store: Store, keep: (key: K) => boolean): void {
    const cache = this.entryOf(store);
    if (!cache) return;
    for (const key of cache.values.keys()) if (!keep(key)) cache.values.delete(key);
  }

  get(store: Store, key: K, load: () => V): V {
    return this.getFitting(store, key, anyValue, load);
  }

  /** Like `get`, for a key whose one cached value serves some reads only: one that does not `fit` is loaded again and replaced. */
  getFitting(store: Store, key: K, fits: (value: V) => boolean, load: () => V): V {
    if (store.inTransaction) return load();
    let cache = this.entryOf(store);
    if (!cache || cache.version !== this.writes) {
      if (!store.cacheEntries) return load();
      store.cacheEntries[this.slot] = cache = { version: this.writes, values: new Map() };
    }
    const cached = cache.values.get(key);
    if (cached !== undefined && fits(cached)) return cached;
    const value = load();
    // Misses are not kept: requests for IDs that do not exist must not grow memory.
    if (value !== undefined) cache.values.set(key, value);
    return value;
  }
}
