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
 *   commits batch on lmdb-js's write thread, their fsync outside the writer lock and
 *   off the main thread (see `run`). `commit()` resolves only once the data is on
 *   disk, so a write that returned success survives `kill -9` and power loss.
 * - Each action runs in a child transaction: a check that throws halfway rolls back
 *   that action's writes alone, never leaving a half-written record, while lmdb-js
 *   still groups concurrent actions into one commit.
 * - The map is reserved at 16 GiB of address space up front on 64-bit systems (no
 *   memory or disk is taken until data is written). lmdb-js otherwise starts at
 *   128 KB and remaps as the file grows, keeping each outgrown mapping alive, so the
 *   same pages showed up resident several times over (docs/benchmarks.md). A store
 *   that outgrows it still grows (lmdb-js resizes on demand).
 * - msgpack record structures are shared per key space (stored once in the database)
 *   instead of written inline in every value: decoding a user record is several
 *   times faster, and an event fan-out to every user spends its time on that
 *   (docs/benchmarks.md). Values written before this setting stay readable.
 */
const is64Bit = arch().endsWith("64");
/** How every key space is opened (see the note on shared msgpack structures above). */
export const KEYSPACE_OPTIONS = { sharedStructuresKey: Symbol.for("structures") };
/** lmdb-js's transaction flags: abortable, synchronous commit; and LMDB's MDB_NOSYNC (see commitOnThisThread). */
const TXN_ABORTABLE = 1;
const TXN_SYNCHRONOUS_COMMIT = 2;
const MDB_NOSYNC = 0x10000;
/** lmdb-js's reports from its write thread (see Store.watchVisibility). */
const LMDB_RUN_CALLBACKS = 2;
const LMDB_VISIBLE = 1;
/** A transaction committed on its own thread (commitOnThisThread). */
const SYNC_COMMIT_FLAGS = TXN_ABORTABLE | TXN_SYNCHRONOUS_COMMIT | MDB_NOSYNC;
/**
 * Whether a string can be a key: LMDB keys are at most 1,978 bytes (lmdb-js's build),
 * and a lookup by a longer one throws instead of finding nothing. Lookups by names
 * and addresses from requests check this first; 1,000 bytes leaves room for the
 * encoding around the string.
 */
export function fitsKey(key: string): boolean {
  return key.length <= 1000 && Buffer.byteLength(key) <= 1000;
}

/**
 * Every value of a key space in key order, or with `ownerId` only those whose key
 * starts with it (`[ownerId, …]`, whatever follows): the "all of a key space" and
 * "all of one user's" reads of the record accessors.
 */
export function valuesOf<T>(db: Database<any, any>, ownerId?: number): T[] {
  const range = ownerId === undefined ? {} : { start: [ownerId], end: [ownerId + 1] };
  return [...db.getRange(range)].map((e) => e.value as T);
}

/**
 * How the unread-rows job commits (unread_rows_run.ts): on its worker thread a
 * transaction of its own (`Store.commitOnThisThread`), on the main thread `Store.commit`
 * (lmdb-js's write thread, so the event loop never waits for the writer lock or an
 * fsync). Either way a batch's rows and its watermark's move are one transaction.
 */
export type RunCommit = <T>(fn: () => T) => T | Promise<T>;

export interface CommitOptions<T> {
  /**
   * Runs once the transaction is visible to every reader of the store, before its
   * fsync is done (see `watchVisibility`): events published here tell clients nothing
   * a read could not. The commit still resolves only once the data is durable, so the
   * caller's success answer waits for the disk. A throw here is logged, not passed on:
   * the write is done, and a failed answer would invite the client to send it again.
   */
  onCommitted?: (result: T) => void;
}

/**
 * What a transaction callback returns, never a promise: lmdb-js holds the transaction
 * open until a returned promise settles, so a callback ending in `db.put(…)` (whose
 * result inside a transaction is an already-resolved promise) committed a turn later,
 * after its events had gone out. Back to back, such synchronous commits left LMDB's
 * writer lock held and the store's close hanging. Inside a transaction lmdb-js's
 * write results are marked `isSync` and carry their value; any other promise is a
 * callback doing asynchronous work inside a transaction, which is refused.
 */
function synchronousResult<T>(result: T): T {
  if (result === null || typeof result !== "object" || typeof (result as { then?: unknown }).then !== "function") return result;
  const settledWrite = result as { isSync?: boolean; result?: unknown };
  if (settledWrite.isSync) return settledWrite.result as T;
  throw new TypeError("A store transaction callback must be synchronous; it returned a promise");
}

function runCommitted<T>(options: CommitOptions<T> | undefined, result: T): void {
  try {
    options?.onCommitted?.(result);
  } catch (error) {
    console.error("After a commit:", error);
  }
}

/**
 * LMDB's limit on named databases, fixed when the environment opens: room above the key
 * spaces declared in keyspaces.ts (test/store/keyspaces.test.ts keeps it so). Raising
 * it later needs nothing on disk.
 */
export const MAX_KEY_SPACES = 128;

export class Store {
  readonly root: RootDatabase;
  readonly dbs: { [K in KeyspaceName]: Database<any, any> };
  /** StoreCache's values for this store, one entry per cache (src/store/cache.ts). */
  readonly cacheEntries: unknown[] = [];

  constructor(readonly dataDir: string) {
    const dir = join(dataDir, "db");
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    this.root = open({ path: dir, maxDbs: MAX_KEY_SPACES, ...(is64Bit ? { mapSize: 16 * 2 ** 30 } : {}) });
    // LMDB creates its files 0644 whatever the umask: they hold every message, API key
    // and password hash, and a copy of the folder (a backup) must stay private too.
    for (const file of ["data.mdb", "lock.mdb"]) chmodSync(join(dir, file), 0o600);
    const dbs = {} as { [K in KeyspaceName]: Database<any, any> };
    for (const [key, name] of Object.entries(KEYSPACES) as [KeyspaceName, string][]) {
      dbs[key] = this.root.openDB(name, KEYSPACE_OPTIONS);
    }
    this.dbs = dbs;
    this.watchVisibility();
  }

  /**
   * lmdb-js reports a write-thread batch to the main thread in up to three turns: run
   * the queued transaction callbacks (status 2), the transaction is visible to readers
   * (1: its meta page is written, the overlapping fsync about to start) and done (0:
   * after the fsync; its promises resolve then). Under load each turn waits for the
   * event loop, so publishing a message's events at "done" held them a turn and an
   * fsync longer than needed. Its `env.startWriting` is wrapped here to learn of
   * "visible" and run the `onCommitted` hooks of the callbacks that ran in that batch.
   *
   * Why publishing before the fsync keeps the guarantees: a process killed after
   * "visible" leaves the written pages in the OS's page cache, and LMDB's overlapping
   * sync trusts an unsynced meta page on the same boot, so a kill -9 keeps the
   * transaction (test/durability.test.ts kills the server as the event arrives). Only
   * a power loss in the fsync's window can drop a transaction whose events went out,
   * and its sender never got a success answer then. Zulip publishes after its
   * PostgreSQL commit; this is the same order with respect to readers.
   *
   * If a future lmdb-js has no such method the hooks run at "done", as before
   * (`publishedAtVisibility` stays 0; test/store/commits.test.ts checks it grows).
   */
  private watchVisibility(): void {
    const env = (this.root as unknown as { env?: { startWriting?: unknown } }).env;
    const startWriting = env?.startWriting;
    if (!env || typeof startWriting !== "function") return;
    Object.defineProperty(env, "startWriting", {
      configurable: true,
      value: (address: number, report: (status: number) => unknown) => {
        const batch = ++this.batchSerial;
        return startWriting.call(env, address, (status: number) => {
          if (status === LMDB_RUN_CALLBACKS) {
            this.runningBatch = batch;
            try {
              return report(status);
            } finally {
              this.runningBatch = 0;
            }
          }
          const result = report(status);
          const visible = this.awaitingVisibility.get(batch);
          this.awaitingVisibility.delete(batch);
          // "done" without "visible" is a failed batch: its promises reject instead.
          if (visible && status === LMDB_VISIBLE) {
            this.root.resetReadTxn();
            // Inside lmdb-js's native callback: a throw must not escape (nor skip the rest).
            for (const reportCommitted of visible) {
              try {
                reportCommitted();
              } catch (error) {
                console.error("After a commit became visible:", error);
              }
            }
          }
          return result;
        });
      },
    });
  }

  /** How many commits ran their `onCommitted` hook at "visible" (see `watchVisibility`). */
  publishedAtVisibility = 0;
  private batchSerial = 0;
  /** The batch whose transaction callbacks lmdb-js is running (0 outside them). */
  private runningBatch = 0;
  /** Per batch: the commits to report once it is visible. */
  private readonly awaitingVisibility = new Map<number, (() => void)[]>();

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
   * message insert: every check ran before). It runs in the shared batch transaction
   * instead of a nested one, so concurrent sends share their page writes. There a
   * throw after a write would commit that partial write, so `fn` must do its checks
   * before its first write.
   */
  async commitInfallible<T>(fn: () => T, options?: CommitOptions<T>): Promise<T> {
    return this.run(fn, "batch", options);
  }

  /**
   * A write transaction run and committed on the calling thread, for a worker thread
   * whose job may block (src/actions/unread_rows.ts); the main thread commits through
   * `commit`, on lmdb-js's write thread. The commit is MDB_NOSYNC, which under
   * lmdb-js's overlapping sync means the fsync runs after the writer lock is
   * released, on this thread, so other writers do not wait for it; it marks the
   * commit unsynced until then, and a power loss before that falls back to the
   * previous commit, never to a broken file.
   */
  commitOnThisThread<T>(fn: () => T): T {
    try {
      return this.root.transactionSync(this.transactionBody(fn) as () => any, SYNC_COMMIT_FLAGS) as T;
    } catch (error) {
      this.forgetRecordLayouts();
      throw error;
    }
  }

  /**
   * `fn`, forgetting the record layouts this thread knows when it throws, before the
   * transaction around it rolls back. msgpackr saves a layout new to a key space into
   * the key space itself, inside the transaction that writes the first record of that
   * shape, and then counts it as saved. When that transaction rolls back, the layout
   * is gone from the store but not from msgpackr's memory: the next record of that
   * shape is committed referring to a layout the store does not hold, and after a
   * restart (or once another writer's layouts are merged in) it reads back as garbage
   * or not at all ("Data read, but end of buffer not reached", "Unexpected end of
   * buffer reading string"; test/store/structures.test.ts). Forgotten, the layouts
   * are read back from the store at the next encode or decode that needs them.
   * Its result goes through synchronousResult.
   */
  private transactionBody<T>(fn: () => T): () => T {
    return () => {
      try {
        return synchronousResult(fn());
      } catch (error) {
        this.forgetRecordLayouts();
        throw error;
      }
    };
  }

  private forgetRecordLayouts(): void {
    for (const db of Object.values(this.dbs)) {
      const codec = (db as unknown as { encoder?: { structures?: unknown } }).encoder;
      if (!codec?.structures) continue;
      // msgpackr's own mark for layouts still to load (its getStructures option).
      codec.structures = Object.assign([], { uninitialized: true, sharedLength: 0 });
    }
  }

  /**
   * Every commit joins lmdb-js's batch on its write thread, which commits and then
   * fsyncs there, so the main thread never waits for the disk:
   * - "nested": a child transaction inside the batch (a throw undoes this action's writes only).
   * - "batch": straight in the batch transaction (see commitInfallible).
   * Lone commits used to run inline on the calling thread instead (transaction, commit
   * and fsync: a shorter path to publishing than a batched commit, which costs two
   * turns of the main thread under load). But the fsync held the main thread, and every
   * parked poll with it: batched only, Hearth's delivery p99 under
   * scripts/bench-events.ts was lower (docs/benchmarks.md).
   */
  private async run<T>(fn: () => T, mode: "nested" | "batch", options?: CommitOptions<T>): Promise<T> {
    this.writes++;
    this.inflightCommits++;
    const hooks: (() => void)[] = [];
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      this.inflightCommits--;
      this.writes++;
      for (const hook of hooks) hook();
    };
    let reported = false;
    // Caches learn of the commit before anything acts on it (onCommitted publishes
    // events, whose recipients read right away).
    const reportCommitted = (result: T) => {
      if (reported) return;
      reported = true;
      settle();
      runCommitted(options, result);
    };
    const inTransaction = () => {
      this.afterCommitHooks = hooks;
      let result: T;
      try {
        result = this.transactionBody(fn)();
      } finally {
        this.afterCommitHooks = null;
      }
      // Registered as the callback returns: a child transaction's merge into its batch
      // can still fail after that (only for lack of memory), which this would miss.
      const batch = this.runningBatch;
      if (batch !== 0) {
        let visible = this.awaitingVisibility.get(batch);
        if (!visible) this.awaitingVisibility.set(batch, (visible = []));
        visible.push(() => {
          this.publishedAtVisibility++;
          reportCommitted(result);
        });
      }
      return result;
    };
    try {
      const result = (await (mode === "nested" ? this.root.childTransaction(inTransaction as () => any) : this.root.transaction(inTransaction as () => any))) as T;
      reportCommitted(result);
      await this.root.flushed;
      return result;
    } catch (error) {
      // A failed commit rolled back every layout saved in its batch.
      this.forgetRecordLayouts();
      throw error;
    } finally {
      settle();
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
  private readonly memos = new Map<string, { writes: number; value: unknown }>();

  /**
   * A value derived from the store, recomputed after any write: for reads every
   * event fan-out repeats, like the active user IDs (Zulip caches those too). Kept
   * only when computed with no commit in flight (a commit counts from its call until
   * it is visible to readers), so it never holds data that a failed commit rolled
   * back. Treat the value as immutable.
   */
  memo<T>(key: string, compute: () => T): T {
    const cached = this.memos.get(key);
    if (cached && cached.writes === this.writes) return cached.value as T;
    const value = compute();
    if (this.inflightCommits === 0) this.memos.set(key, { writes: this.writes, value });
    return value;
  }

  /** The last ID a sequence gave out (0 before the first). */
  lastId(sequence: string): number {
    return (this.dbs.meta.get(["counter", sequence]) as number | undefined) ?? 0;
  }

  /** Allocates the next ID of a sequence; call only inside `commit`. */
  nextId(sequence: string): number {
    const next = this.lastId(sequence) + 1;
    this.dbs.meta.put(["counter", sequence], next);
    return next;
  }

  /**
   * The same from another process's store (a running server's), through a read-only
   * handle of this one's: LMDB allows one handle per store and process.
   */
  static async snapshotFolder(storeDir: string, dir: string): Promise<void> {
    const env = open({ path: storeDir, readOnly: true });
    try {
      await env.backup(dir, true);
    } finally {
      await env.close();
    }
  }

  /** A compacted copy of the store as of one commit into `dir/data.mdb` (LMDB's copy; writers go on). */
  snapshotTo(dir: string): Promise<void> {
    return this.root.backup(dir, true);
  }

  async close(): Promise<void> {
    await this.root.flushed;
    await this.root.close();
  }
}
