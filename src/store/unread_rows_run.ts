import type { RunCommit, Store } from "./db";
import { writeSearchTermBatch } from "./search_terms";
import { MESSAGES_PER_BATCH, writeDeferredUnreadBatch } from "./unread_batches";

export interface RunOptions {
  /** One batch of that many messages, the oldest waiting (the job is behind while the server is busy); else every batch pending. */
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
  // message or two under steady sends, each with its own commits and collection:
  // about twice the CPU of batches every tick (scripts/bench-events.ts).
  while (!options.stopping?.()) {
    const covered = await writeDeferredUnreadBatch(store, oldest, commit);
    // The search rows of as many messages, the oldest waiting (search_terms.ts).
    const indexed = await writeSearchTermBatch(store, oldest ?? MESSAGES_PER_BATCH, commit);
    if (covered === 0 && indexed === 0) break;
    options.afterBatch();
    if (oldest !== undefined || (covered < MESSAGES_PER_BATCH && indexed < MESSAGES_PER_BATCH)) break;
  }
}
