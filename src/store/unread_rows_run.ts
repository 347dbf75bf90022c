import type { RunCommit, Store } from "./db";
import { writeSearchTermBatch } from "./search_terms";
import { MESSAGES_PER_BATCH, writeDeferredUnreadBatch } from "./unread_batches";

export interface RunOptions {
  /**
   * That many messages, the oldest waiting, in batches of at most MESSAGES_PER_BATCH (the
   * job is behind while the server is busy); else every batch pending.
   */
  oldest?: number;
  commit: RunCommit;
  /** After each batch that wrote something (the main thread prunes its index of pending messages). */
  afterBatch(): void;
  /** Whether to stop before the next batch (a worker told to stop). */
  stopping?(): boolean;
}

/**
 * One run of the unread-rows job (unread_rows.ts): the deferred unread rows and search
 * rows of the messages past the watermarks, a batch at a time, on whichever thread
 * calls it (the worker, or the main thread for a small backlog).
 */
export async function writePendingBatches(store: Store, options: RunOptions): Promise<void> {
  const { oldest, commit } = options;
  // Only a full batch (a backlog) runs the next at once; otherwise the next tick does,
  // with what arrived meanwhile. Looping until nothing was pending wrote a batch per
  // message or two under steady sends, each with its own commits and collection, at a
  // far higher CPU cost than batches every tick (docs/benchmarks.md, scripts/bench-events.ts).
  // Under sends faster than a batch per tick, one batch per run let the backlog grow
  // without bound (docs/benchmarks.md, "The background job's cost"): a run of the
  // oldest covers them all, a batch at a time.
  let left = oldest ?? Number.POSITIVE_INFINITY;
  let newestBefore: number | undefined;
  while (left > 0 && !options.stopping?.()) {
    const take = Math.min(left, MESSAGES_PER_BATCH);
    // Quiet: a run the job started on a quiet server, or nothing sent since the last batch.
    const newest = store.lastId("message");
    const quiet = oldest === undefined || newest === newestBefore;
    newestBefore = newest;
    const covered = await writeDeferredUnreadBatch(store, take, commit);
    // The search rows of as many messages, the oldest waiting (search_terms.ts). When
    // quiet, in one commit: a commit dirties a B-tree leaf per distinct word and per
    // sender, however few rows it adds there, so one commit per batch writes far less
    // to the disk and takes less CPU (docs/benchmarks.md, "The background job's page
    // writes"). While sends arrive, shorter commits keep the writer lock free for them.
    const indexed = await writeSearchTermBatch(store, take, commit, quiet ? take : undefined);
    if (covered === 0 && indexed === 0) break;
    options.afterBatch();
    left -= take;
    if (covered < take && indexed < take) break;
  }
}
