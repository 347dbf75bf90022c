import type { Store } from "./db";
import { MESSAGES_PER_BATCH } from "./unread_batches";
import { hasUnindexedMessages, searchWatermark } from "./search_terms";
import { hasDeferredUnreadRows, loadPendingUnreadIndex, unreadWatermark } from "./unread";
import { writePendingBatches } from "./unread_rows_run";
import { decodeRecipientList } from "./shared_recipient_lists";

/**
 * The background job that writes the "unread" rows channel messages' recipients hold
 * implicitly (the top of unread.ts explains why a send does not write them), a batch
 * at a time (unread_batches.ts), and the search rows of the same messages
 * (search_terms.ts), on the same schedule. It writes only the store.
 *
 * It runs on a worker thread (unread_rows_worker.ts) with its own handle on the same
 * LMDB environment: on the main thread its commits stalled every request
 * (scripts/bench-events.ts). One run per user and batch instead of a row per message
 * and user cut the job's CPU (docs/benchmarks.md, "Per-recipient rows").
 *
 * A small backlog on a quiet server is written on the main thread instead
 * (`MainThreadBacklog`): a worker is a second JavaScript heap, and the few messages an
 * idle server receives (a new organization's first, a conversation's) are not worth one.
 */

/** What the worker thread tells the job (see unread_rows_worker.ts). */
export type UnreadRowsWorkerReport = { type: "batch" } | { type: "idle" } | { type: "stopped" } | { type: "error"; message: string };
/** What the job tells the worker thread. */
export type UnreadRowsWorkerCommand = { type: "open"; dataDir: string } | { type: "run"; oldest?: number } | { type: "stop" };

/**
 * When the job waits instead of writing (see startUnreadRowsJob): rows can wait, the
 * requests of a busy server cannot. Under scripts/bench-events.ts the worker's
 * batches took CPU from the cores the clients and the server share, and the server's
 * delivery p99 rose with them (docs/events.md).
 */
export interface UnreadRowsDeferral {
  /** A batch waits until no message has been sent for this long… */
  quietMs: number;
  /** …while more than this many messages wait, those beyond it go a batch per tick (readers scan the lists past the watermark)… */
  backlogLimit: number;
  /** …or rows have waited this long with no run. */
  maxWaitMs: number;
  /** What is written on the main thread, with no worker (absent: DEFAULT_MAIN_THREAD_BACKLOG). */
  mainThread?: MainThreadBacklog;
}

/**
 * The backlog a run writes on the main thread, when no worker is alive and the run is
 * not one of a busy server's: at most this many messages past either watermark, with
 * at most this many recipients in all (each a row or a run to write for the unread
 * rows). Larger backlogs, and any run while messages keep coming, go to the worker, so
 * the server's own thread never holds a long batch. `messages: 0`: always the worker.
 */
export interface MainThreadBacklog {
  messages: number;
  recipients: number;
}

/**
 * Covers a new organization's welcome messages and channel notices and a quiet team's
 * messages since the last run; a run of this size holds the event loop only briefly and
 * costs less CPU in all than starting the worker (scripts/bench-inline-rows.ts,
 * docs/benchmarks.md).
 */
export const DEFAULT_MAIN_THREAD_BACKLOG: MainThreadBacklog = { messages: 200, recipients: 10_000 };

export const DEFAULT_UNREAD_ROWS_DEFERRAL: UnreadRowsDeferral = { quietMs: 1000, backlogLimit: MESSAGES_PER_BATCH, maxWaitMs: 60_000 };

/** Whether unread rows or search rows wait to be written. */
function hasDeferredWork(store: Store): boolean {
  return hasDeferredUnreadRows(store) || hasUnindexedMessages(store);
}

/**
 * How long the worker stays alive with nothing to write before it is retired. Its
 * thread is a second JavaScript heap, most of the server's anonymous memory at idle,
 * and a small team's server is idle most of the day; a new worker costs a thread start
 * and a module load, which a gap of this length between runs amortises (under load runs
 * come every tick or so, so a busy server keeps its worker). It is longer than the
 * deferral's quiet time, so a conversation's pauses do not spawn a worker each.
 */
export const DEFAULT_WORKER_RETIRE_MS = 30_000;

/** Where the worker is (tests, benchmarks): none, alive, or told to stop and not yet gone. */
export type UnreadRowsWorkerState = "none" | "alive" | "retiring";

export interface UnreadRowsJob {
  /** Resolves once the batches pending now are written (tests, benchmarks). */
  drain(): Promise<void>;
  stop(): Promise<void>;
  workerState(): UnreadRowsWorkerState;
}

/** A worker thread and the promise that it has stopped (its "stopped" report, or its death). */
interface WorkerHandle {
  thread: Worker;
  gone: Promise<void>;
}

/**
 * Runs batches on the worker (`workerUrl`: unread_rows_worker.ts, see src/server.ts),
 * checking every `intervalMs` whether messages are pending and the server quiet
 * enough (`deferral`); `drain` runs one at once. (Before the deferral, batches ran at
 * every tick while messages were pending; the default interval gave the lowest
 * delivery p99 under scripts/bench-events.ts of those tried; a batch in quiet time
 * competes with nothing.) A batch that fails is retried at the
 * next tick; a worker that dies is replaced at the next tick (until then the rows stay
 * implicit and reads stay right, but the in-memory index of pending messages grows).
 * After each batch the main thread prunes that index to the new watermark.
 *
 * A quiet server's small backlog (`deferral.mainThread`) is written on the main thread
 * when no worker is alive, so a server that receives a message now and then never
 * starts one. Otherwise the worker starts with its first run and is retired once no
 * run has ended for `retireAfterMs` with nothing pending: told to stop (it closes its
 * handle on the store, see unread_rows_worker.ts), terminated once it says so, and the
 * next run starts a new one. Nothing is posted to a worker once it was told to stop: a run
 * wanted meanwhile waits for the retirement to end (`drain`) or for the next tick.
 */
export function startUnreadRowsJob(
  store: Store,
  intervalMs: number,
  workerUrl: string,
  deferral: UnreadRowsDeferral = DEFAULT_UNREAD_ROWS_DEFERRAL,
  retireAfterMs: number = DEFAULT_WORKER_RETIRE_MS,
): UnreadRowsJob {
  let worker: WorkerHandle | null = null;
  /** The retirement under way: it ends with `worker` null. */
  let retirement: Promise<void> | null = null;
  // Activity is the newest message ID moving between ticks: no hook on the send path.
  let lastSeenId = store.lastId("message");
  let lastActivityAt = Date.now();
  /** Since when rows have waited with no batch run (null: none waited at the last tick). */
  let waitingSince: number | null = null;
  /** When the worker last had something to do (its spawn or the end of a run). */
  let lastBusyAt = Date.now();
  let running = false;
  /** When a run on the main thread last ended with a full collection (runHere). */
  let lastCollectedAt = 0;
  /** A run on the main thread under way (runHere): a stop waits for it, before the store closes. */
  let runningHere: Promise<void> | null = null;
  let stopped = false;
  /** Waiting for the current run to end (drain). */
  let onIdle: (() => void)[] = [];
  const runEnded = () => {
    running = false;
    lastBusyAt = Date.now();
    const waiting = onIdle;
    onIdle = [];
    for (const resolve of waiting) resolve();
  };
  const spawn = (): WorkerHandle => {
    const thread = new Worker(workerUrl);
    let markGone!: () => void;
    const handle: WorkerHandle = { thread, gone: new Promise<void>((resolve) => (markGone = resolve)) };
    /** A worker that died: the next tick starts another; whoever waits for it to stop or to end its run goes on. */
    const died = (message: string) => {
      console.error("The unread-rows worker failed; a new one starts at the next tick:", message);
      thread.terminate();
      if (worker === handle) worker = null;
      markGone();
      if (running) runEnded();
    };
    thread.onmessage = (event: MessageEvent<UnreadRowsWorkerReport>) => {
      const report = event.data;
      if (report.type === "batch") pruneIndex();
      else if (report.type === "error") console.error("Writing deferred unread or search rows failed; it will retry:", report.message);
      else if (report.type === "idle") runEnded();
      else if (report.type === "stopped") markGone();
    };
    thread.onerror = (event) => died(event.message);
    // A thread that ends without an error event (an exit in it) is dead too; after a
    // terminate of ours this finds it already gone, or no longer current.
    thread.addEventListener("close", () => {
      if (worker === handle) died("its thread ended");
      else markGone();
    });
    thread.postMessage({ type: "open", dataDir: store.dataDir } satisfies UnreadRowsWorkerCommand);
    // Bun has Worker.unref (the process may exit while it idles); the DOM typings lack it.
    (thread as unknown as { unref(): void }).unref();
    lastBusyAt = Date.now();
    return handle;
  };
  /** Tells the worker to stop, waits for it to say so (or die), then ends its thread. */
  const stopWorker = async (handle: WorkerHandle): Promise<void> => {
    handle.thread.postMessage({ type: "stop" } satisfies UnreadRowsWorkerCommand);
    await handle.gone;
    handle.thread.terminate();
    if (worker === handle) worker = null;
  };
  const retire = (handle: WorkerHandle): void => {
    retirement = stopWorker(handle).finally(() => (retirement = null));
  };
  /**
   * Tells the worker to write: the `oldest` messages waiting (a batch at a time), or
   * else every batch pending. Whether rows are pending is checked by the callers, here
   * on the main thread: an idle server's worker stays asleep. Never during a
   * retirement (the callers check): the retiring worker would not run it.
   */
  const start = (oldest?: number): void => {
    // Marked running once the worker has the command: a spawn that throws leaves the next tick free to try again.
    (worker ??= spawn()).thread.postMessage({ type: "run", oldest } satisfies UnreadRowsWorkerCommand);
    running = true;
    // Any run restarts the longest wait: under steady load past the backlog limit the
    // runs of the oldest keep the wait short, so it never forces a catch-up on the
    // whole backlog (the burst those runs avoid).
    waitingSince = null;
  };
  const mainThread = deferral.mainThread ?? DEFAULT_MAIN_THREAD_BACKLOG;
  /** Whether what waits is small enough for the main thread (MainThreadBacklog). A few key reads. */
  const smallBacklog = (): boolean => {
    if (mainThread.messages <= 0) return false;
    const newest = store.lastId("message");
    const unreadFrom = unreadWatermark(store);
    if (newest - unreadFrom > mainThread.messages || newest - searchWatermark(store) > mainThread.messages) return false;
    let recipients = 0;
    for (const { value } of store.dbs.messageRecipientLists.getRange({ start: unreadFrom + 1, end: Number.MAX_SAFE_INTEGER })) {
      recipients += decodeRecipientList(store, value)!.length;
      // Over the limit: no need to count the rest (leaving the loop ends the scan).
      if (recipients > mainThread.recipients) return false;
    }
    return true;
  };
  /** A run on this thread, through `Store.commit` (unread_rows_run.ts): the same batches and transactions as the worker's. */
  const runHere = (): void => {
    running = true;
    waitingSince = null;
    let wrote = false;
    const afterBatch = () => {
      wrote = true;
      pruneIndex();
    };
    runningHere = writePendingBatches(store, { commit: (fn) => store.commit(fn), afterBatch, stopping: () => stopped })
      .catch((error) => console.error("Writing deferred unread or search rows failed; it will retry:", error))
      .finally(() => {
        runningHere = null;
        // The batch's decoded lists and messages are garbage now, on a quiet server (as
        // the worker collects after its batches): collected at once, the heap does not
        // keep the run's growth until some later collection. A full collection holds the
        // event loop for as long as the heap takes to mark, so at most one per retirement
        // delay: a conversation's quiet gaps do not each cost one.
        const now = Date.now();
        if (wrote && now - lastCollectedAt >= retireAfterMs) {
          lastCollectedAt = now;
          Bun.gc(true);
        }
        runEnded();
      });
  };
  /**
   * A run of every pending batch: here for a small backlog when no worker is alive
   * (`quiet`: not while messages keep coming), else on the worker.
   */
  const runAll = (quiet: boolean): void => {
    if (quiet && !worker && smallBacklog()) runHere();
    else start();
  };
  /** After a batch: a failure leaves the index larger than needed, never wrong (the next batch prunes it). */
  const pruneIndex = (): void => {
    try {
      loadPendingUnreadIndex(store);
    } catch (error) {
      console.error("Pruning the index of pending unread rows failed; the next batch retries:", error);
    }
  };
  /** Starts a run of every pending batch unless none is pending or one is under way; false when it did not. */
  const run = (): boolean => {
    if (running || stopped || retirement || !hasDeferredWork(store)) return false;
    runAll(true);
    return true;
  };
  /**
   * A timer callback that throws ends the process: a tick that fails (a store read
   * throwing, a worker that cannot start) is logged and the next tick tries again.
   */
  const tick = (): void => {
    try {
      checkPending();
    } catch (error) {
      console.error("The unread-rows job's tick failed; it retries at the next:", error);
    }
  };
  /** A run when rows are pending and the server is quiet, or they have waited too long; a retirement when nothing is. */
  const checkPending = (): void => {
    if (running || stopped || retirement) return;
    const now = Date.now();
    const newestId = store.lastId("message");
    if (newestId !== lastSeenId) {
      lastSeenId = newestId;
      lastActivityAt = now;
    }
    if (!hasDeferredWork(store)) {
      waitingSince = null;
      if (worker && now - lastBusyAt >= retireAfterMs) retire(worker);
      return;
    }
    waitingSince ??= now;
    const quiet = now - lastActivityAt >= deferral.quietMs;
    if (quiet || now - waitingSince >= deferral.maxWaitMs) {
      runAll(quiet);
      return;
    }
    // Busy, with more waiting than the limit: only the messages beyond it, oldest first,
    // a tick's arrivals at a time under steady load (more than a batch's when sends
    // outrun a batch per tick: unread_rows_run.ts). Catching up on the whole backlog
    // at once (a full batch to a large channel every few seconds) gave runs of
    // scripts/bench-events.ts a higher p99 than batches at every tick did.
    const excess = newestId - Math.min(unreadWatermark(store), searchWatermark(store)) - deferral.backlogLimit;
    if (excess >= 0) start(excess + 1);
  };
  // The worker (a second JavaScript heap) starts with the first run, not with the server.
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  const idle = () => new Promise<void>((resolve) => onIdle.push(resolve));
  return {
    async drain() {
      // A run in progress may have planned its batch before the caller's last write, and
      // a retiring worker takes no run: wait for both to end, then run. (Each await ends
      // in a microtask, before any tick could start another run or retirement.)
      while (!stopped && (running || retirement)) await (retirement ?? idle());
      if (stopped) return;
      const done = idle();
      if (run()) await done;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      if (runningHere) await runningHere;
      if (retirement) await retirement;
      if (worker) await stopWorker(worker);
      worker = null;
      runEnded();
    },
    workerState: () => (retirement ? "retiring" : worker ? "alive" : "none"),
  };
}
