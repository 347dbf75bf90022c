import type { Hearth } from "../context";
import { appendTo } from "../lib/collections";
import { loadPendingUnreadIndex, planDeferredUnreadRows, writeDeferredUnreadRows } from "../store/messages";

/**
 * The background job that writes the "unread" rows channel messages' recipients hold
 * implicitly (src/store/messages.ts explains why a send does not write them). A batch
 * takes the messages past the watermark, groups their recipients by user, and writes
 * each user's rows together, a few users per commit: each commit stays short (it runs
 * on the main thread, between requests), and each user's index page is written once
 * per batch instead of once per message. The last commit of a batch moves the
 * watermark. A crash midway loses nothing: the rows are still implicit, and the next
 * batch rewrites what it must.
 */
const ROWS_PER_COMMIT = 5000;
/** Between commits the event loop serves requests: a batch must not hold it for its whole length. */
const PAUSE_MS = 5;
/** Messages per batch: readers scan the lists past the watermark, so it must not trail far behind. */
const MESSAGES_PER_BATCH = 500;

/** Writes one batch; resolves with the number of messages it covered (0: nothing was pending). */
export async function doWriteDeferredUnreadRows(h: Hearth): Promise<number> {
  const batch = planDeferredUnreadRows(h.store, MESSAGES_PER_BATCH);
  if (!batch) return 0;
  const idsByUser = new Map<number, number[]>();
  for (const [id, recipients] of batch.lists) {
    if (batch.locations.get(id)) for (const userId of recipients) appendTo(idsByUser, userId, id);
  }
  let chunk = new Map<number, number[]>();
  let rows = 0;
  for (const [userId, ids] of idsByUser) {
    chunk.set(userId, ids);
    rows += ids.length;
    if (rows >= ROWS_PER_COMMIT) {
      const full = chunk;
      await h.store.commitInfallible(() => writeDeferredUnreadRows(h.store, batch, full, false));
      chunk = new Map();
      rows = 0;
      await Bun.sleep(PAUSE_MS);
    }
  }
  await h.store.commitInfallible(() => writeDeferredUnreadRows(h.store, batch, chunk, true));
  loadPendingUnreadIndex(h.store);
  return batch.lists.size;
}

export interface UnreadRowsJob {
  /** Resolves once the batches pending now are written (tests, benchmarks). */
  drain(): Promise<void>;
  stop(): Promise<void>;
}

/** Runs batches every `intervalMs` while messages are pending. A failed batch is retried at the next tick. */
export function startUnreadRowsJob(h: Hearth, intervalMs = 2000): UnreadRowsJob {
  let running: Promise<void> | null = null;
  let stopped = false;
  const run = (): Promise<void> => {
    running ??= (async () => {
      try {
        while (!stopped && (await doWriteDeferredUnreadRows(h)) > 0);
      } catch (e) {
        console.error("Writing deferred unread rows failed; it will retry:", e);
      } finally {
        running = null;
      }
    })();
    return running;
  };
  const timer = setInterval(() => void run(), intervalMs);
  timer.unref();
  return {
    async drain() {
      await running;
      await run();
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
