import type { Hearth } from "../context";
import { appendTo } from "../lib/collections";
import type { Store } from "../store/db";
import { loadPendingUnreadIndex, planDeferredUnreadRows, writeDeferredUnreadRows } from "../store/messages";

/**
 * The background job that writes the "unread" rows channel messages' recipients hold
 * implicitly (src/store/messages.ts explains why a send does not write them). A batch
 * takes the messages past the watermark, groups their recipients by user, and writes
 * each user's rows together, a few users per commit: each user's index page is
 * written once per batch instead of once per message. The last commit of a batch
 * moves the watermark. A crash midway loses nothing: the rows are still implicit, and
 * the next batch rewrites what it must.
 *
 * It runs on a worker thread (unread_rows_worker.ts) with its own handle on the same
 * LMDB environment. At 50 messages/s to 1,000 users it writes 50,000 rows/s, ~3 µs
 * each; on the main thread that was ~15 % of its time, in 15–25 ms commits that
 * stalled every request (scripts/bench-events.ts). Each commit holds LMDB's writer
 * lock, so commits stay small and the thread pauses between them: the main thread's
 * writes wait at most one commit.
 */
const ROWS_PER_COMMIT = 1000;
const PAUSE_MS = 1;
/** Messages per batch: readers scan the lists past the watermark, so it must not trail far behind. */
const MESSAGES_PER_BATCH = 500;

/** Writes one batch with this thread's store; resolves with the number of messages it covered (0: nothing was pending). */
export async function writeDeferredUnreadBatch(store: Store): Promise<number> {
  const batch = planDeferredUnreadRows(store, MESSAGES_PER_BATCH);
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
      store.commitOnThisThread(() => writeDeferredUnreadRows(store, batch, full, false));
      chunk = new Map();
      rows = 0;
      await Bun.sleep(PAUSE_MS);
    }
  }
  store.commitOnThisThread(() => writeDeferredUnreadRows(store, batch, chunk, true));
  return batch.lists.size;
}

/** What the worker thread tells the job (see unread_rows_worker.ts). */
export type UnreadRowsWorkerReport = { type: "batch" } | { type: "idle" } | { type: "stopped" } | { type: "error"; message: string };
/** What the job tells the worker thread. */
export type UnreadRowsWorkerCommand = { type: "open"; dataDir: string } | { type: "run" } | { type: "stop" };

export interface UnreadRowsJob {
  /** Resolves once the batches pending now are written (tests, benchmarks). */
  drain(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Runs batches on the worker (`workerUrl`: unread_rows_worker.ts, see src/server.ts)
 * every `intervalMs` while messages are pending. A failed
 * batch is retried at the next tick. After each batch the main thread prunes its
 * in-memory index of pending messages to the new watermark.
 */
export function startUnreadRowsJob(h: Hearth, intervalMs: number, workerUrl: string): UnreadRowsJob {
  const worker = new Worker(workerUrl);
  const send = (command: UnreadRowsWorkerCommand) => worker.postMessage(command);
  let running = false;
  let stopped = false;
  /** Waiting for the current run to end (drain). */
  let onIdle: (() => void)[] = [];
  let onStopped: (() => void) | null = null;
  const run = () => {
    if (running || stopped) return;
    running = true;
    send({ type: "run" });
  };
  worker.onmessage = (event: MessageEvent<UnreadRowsWorkerReport>) => {
    const report = event.data;
    if (report.type === "batch") loadPendingUnreadIndex(h.store);
    else if (report.type === "error") console.error("Writing deferred unread rows failed; it will retry:", report.message);
    else if (report.type === "idle") {
      running = false;
      const waiting = onIdle;
      onIdle = [];
      for (const resolve of waiting) resolve();
    } else if (report.type === "stopped") onStopped?.();
  };
  worker.onerror = (event) => {
    // The rows stay implicit (readers merge them), so the server keeps working; reads
    // of unread state just pay for a growing backlog.
    console.error("The unread-rows worker failed:", event.message);
    stopped = true;
    clearInterval(timer);
    onStopped?.();
    for (const resolve of onIdle) resolve();
    onIdle = [];
  };
  const timer = setInterval(run, intervalMs);
  send({ type: "open", dataDir: h.store.dataDir });
  timer.unref();
  // Bun has Worker.unref (the process may exit while it idles); the DOM typings lack it.
  (worker as unknown as { unref(): void }).unref();
  const idle = () => new Promise<void>((resolve) => onIdle.push(resolve));
  return {
    async drain() {
      if (stopped) return;
      // A run in progress may have planned its batch before the caller's last write.
      if (running) await idle();
      const done = idle();
      run();
      await done;
    },
    async stop() {
      if (stopped) return worker.terminate();
      stopped = true;
      clearInterval(timer);
      const acknowledged = new Promise<void>((resolve) => (onStopped = resolve));
      send({ type: "stop" });
      await acknowledged;
      worker.terminate();
      for (const resolve of onIdle) resolve();
      onIdle = [];
    },
  };
}
