import { open, type Database, type RootDatabase } from "lmdb";
import { chmodSync, mkdirSync } from "node:fs";
import { arch } from "node:os";
import { join } from "node:path";
import { KEYSPACES, type KeyspaceName } from "./keyspaces";

/**
 * The embedded store: one LMDB environment in `<data>/db`.
 *
 * Settings and why:
 * - Default sync behaviour (never `noSync`), with lmdb-js's `overlappingSync` left on:
 *   the fsync runs outside the writer lock so concurrent writes keep batching, and
 *   `commit()` waits for `flushed` before it resolves, so a write that returned
 *   success survives `kill -9` and power loss. A "sync" commit (see `run`) is
 *   `transactionSync` without flags: its transaction is not MDB_NOSYNC, so LMDB
 *   fsyncs the data pages before it writes the meta page, inside the call.
 * - Each action runs in a child transaction: a check that throws halfway rolls back
 *   that action's writes alone, never leaving a half-written record, while lmdb-js
 *   still groups concurrent actions into one commit.
 * - The map is reserved at 16 GiB of address space up front on 64-bit systems (no
 *   memory or disk is taken until data is written). lmdb-js otherwise starts at
 *   128 KB and remaps as the file grows, keeping each outgrown mapping alive, so the
 *   same pages showed up resident several times: 7 mappings and ~90 MiB of RSS for a
 *   35 MB file in scripts/bench-events.ts. A store that outgrows it still grows
 *   (lmdb-js resizes on demand).
 * - msgpack record structures are shared per key space (stored once in the database)
 *   instead of written inline in every value: decoding a user record drops from
 *   ~4 µs to ~1 µs, which is what an event fan-out to every user spends its time on
 *   (scripts/bench-events.ts). Values written before this setting stay readable.
 */
const is64Bit = arch().endsWith("64");
/** See commitInfallible: at most one sync commit per this many ms; writes closer together batch. */
const MIN_SYNC_COMMIT_GAP_MS = 2;

export interface CommitOptions<T> {
  /**
   * Runs once the transaction is committed: every reader of the store already sees the
   * change then, so events published here tell clients nothing a read could not. The
   * commit still resolves only once the data is durable, so the caller's success answer
   * waits for the disk. (On the sync path the commit is already on disk; on the async
   * path lmdb-js 3.5 reports a commit after its overlapping fsync, so this saves little
   * there.) A throw here is logged, not passed on: the write is done, and a failed
   * answer would invite the client to send it again.
   */
  onCommitted?: (result: T) => void;
}

function runCommitted<T>(options: CommitOptions<T> | undefined, result: T): void {
  try {
    options?.onCommitted?.(result);
  } catch (error) {
    console.error("After a commit:", error);
  }
}

export class Store {
  readonly root: RootDatabase;
  readonly dbs: { [K in KeyspaceName]: Database<any, any> };

  constructor(readonly dataDir: string) {
    const dir = join(dataDir, "db");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    this.root = open({ path: dir, maxDbs: 64, ...(is64Bit ? { mapSize: 16 * 2 ** 30 } : {}) });
    const dbs = {} as { [K in KeyspaceName]: Database<any, any> };
    for (const [key, name] of Object.entries(KEYSPACES) as [KeyspaceName, string][]) {
      dbs[key] = this.root.openDB(name, { sharedStructuresKey: Symbol.for("structures") });
    }
    this.dbs = dbs;
  }

  /**
   * Runs `fn` atomically in one write transaction and resolves with its result once
   * the data is durable. If `fn` throws, none of its writes happen and the error
   * propagates.
   */
  async commit<T>(fn: () => T, options?: CommitOptions<T>): Promise<T> {
    return this.run(fn, "nested", options);
  }

  /**
   * Like `commit`, for a write phase that cannot fail once its checks are done (a
   * message insert: every check ran before). Alone, it commits synchronously (see
   * `run`); alongside other commits, it runs in the shared batch transaction instead
   * of a nested one, so concurrent sends share their page writes. There a throw after
   * a write would commit that partial write, so `fn` must do its checks before its
   * first write.
   */
  async commitInfallible<T>(fn: () => T, options?: CommitOptions<T>): Promise<T> {
    // Sync commits one after another would each pay an fsync; a burst batches instead.
    const alone = this.uncommittedTransactions === 0 && performance.now() - this.lastSyncCommitAt >= MIN_SYNC_COMMIT_GAP_MS;
    return this.run(fn, alone ? "sync" : "batch", options);
  }

  /**
   * - "nested": a child transaction inside lmdb-js's batch (a throw undoes this action's writes only).
   * - "batch": straight in the batch transaction (see commitInfallible).
   * - "sync": an LMDB transaction of its own, committed and fsynced before this returns,
   *   on the main thread. A write that finds no other commit in flight takes it: the
   *   async path costs two wake-ups of the main thread (to run the callback, then to
   *   learn of the commit), and under a long-poll flood each waits behind every queued
   *   request (~15 ms each at 1,000 clients), while a sync commit of a message (a few
   *   pages, see src/store/messages.ts) blocks ~3 ms. Writes that overlap an
   *   uncommitted one, or come right after a sync commit, still batch: a burst of
   *   sends (scripts/bench-messages.ts) would otherwise pay one fsync each. An earlier
   *   commit's pending flush does not count: the sync commit's fsync covers it too.
   */
  private async run<T>(fn: () => T, mode: "nested" | "batch" | "sync", options?: CommitOptions<T>): Promise<T> {
    this.writes++;
    this.inflightCommits++;
    const hooks: (() => void)[] = [];
    const inTransaction = () => {
      this.afterCommitHooks = hooks;
      try {
        return fn();
      } finally {
        this.afterCommitHooks = null;
      }
    };
    try {
      if (mode === "sync") {
        const result = this.root.transactionSync(inTransaction as () => any) as T;
        this.lastSyncCommitAt = performance.now();
        runCommitted(options, result);
        return result;
      }
      this.uncommittedTransactions++;
      let result: T;
      try {
        result = (await (mode === "nested" ? this.root.childTransaction(inTransaction as () => any) : this.root.transaction(inTransaction as () => any))) as T;
      } finally {
        this.uncommittedTransactions--;
      }
      runCommitted(options, result);
      await this.root.flushed;
      return result;
    } finally {
      this.inflightCommits--;
      this.writes++;
      for (const hook of hooks) hook();
    }
  }

  /** Set while a transaction callback runs: reads then see uncommitted writes. */
  private afterCommitHooks: (() => void)[] | null = null;

  get inTransaction(): boolean {
    return this.afterCommitHooks !== null;
  }

  /**
   * Runs `fn` once the current transaction has committed or rolled back (at once
   * outside one): for invalidating caches of what the transaction wrote, after the
   * moment a concurrent reader could still have read the old value.
   */
  afterCommit(fn: () => void): void {
    if (this.afterCommitHooks) this.afterCommitHooks.push(fn);
    else fn();
  }

  private writes = 0;
  private inflightCommits = 0;
  /** Async transactions queued or running, not yet committed (their flush may still be pending). */
  private uncommittedTransactions = 0;
  private lastSyncCommitAt = -Infinity;
  private readonly memos = new Map<string, { writes: number; value: unknown }>();

  /**
   * A value derived from the store, recomputed after any write: for reads every
   * event fan-out repeats, like the active user IDs (Zulip caches those too). Kept
   * only when computed with no commit in flight, so it never holds data that is not
   * yet durable or that a failed commit rolled back. Treat the value as immutable.
   */
  memo<T>(key: string, compute: () => T): T {
    const cached = this.memos.get(key);
    if (cached && cached.writes === this.writes) return cached.value as T;
    const value = compute();
    if (this.inflightCommits === 0) this.memos.set(key, { writes: this.writes, value });
    return value;
  }

  /** Allocates the next ID of a sequence; call only inside `commit`. */
  nextId(sequence: string): number {
    const key = ["counter", sequence];
    const next = ((this.dbs.meta.get(key) as number | undefined) ?? 0) + 1;
    this.dbs.meta.put(key, next);
    return next;
  }

  async close(): Promise<void> {
    await this.root.flushed;
    await this.root.close();
  }
}
