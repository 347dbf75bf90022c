import type { Hearth } from "../context";
import { appendTo } from "../lib/collections";
import type { Store } from "../store/db";
import { hasDeferredUnreadRows, loadPendingUnreadIndex, planDeferredUnreadRows, unreadWatermark, writeDeferredUnreadRows } from "../store/messages";

/**
 * The background job that writes the "unread" rows channel messages' recipients hold
 * implicitly (src/store/messages.ts explains why a send does not write them). A batch
 * takes the messages past the watermark, groups their recipients by user, and writes
 * each user's rows for the batch as one run record (UNREAD_RUN there), 250 users per
 * commit. The last commit of a batch moves the watermark. A crash midway loses
 * nothing: the rows are still implicit, and the next batch rewrites what it must.
 *
 * It runs on a worker thread (unread_rows_worker.ts) with its own handle on the same
 * LMDB environment: on the main thread its commits stalled every request
 * (scripts/bench-events.ts). At 50 messages/s to 1,000 users, a row per message and
 * user was 50,000 puts a second, ~3 µs each, 10–12 % of a core; one run per user and
 * batch is two puts, 4,000 a second, 6–9 % (a batch of 25 messages to 1,000 users:
 * ~25–50 ms of CPU against ~90–190). Each commit holds LMDB's writer lock, which a
 * send's commit (on lmdb-js's write thread, never the main thread: Store.run) then
 * waits for, so commits stay short (250 users: ~3 ms of work under the lock) and are
 * spread 30 ms apart. 250 users rather than 100: 4 alternating rounds of
 * scripts/bench-events.ts, Hearth's p99 51–70 ms against 62–97 (fewer commits, fewer
 * fsyncs to collide with sends); all 1,000 in one commit held the lock so long that
 * the sends it delayed waited 18–28 ms.
 */
const USERS_PER_COMMIT = 250;
const PAUSE_MS = 30;
/** Messages per batch: readers scan the lists past the watermark, so it must not trail far behind. */
export const MESSAGES_PER_BATCH = 500;

/**
 * Writes one batch with this thread's store; resolves with the number of messages it
 * was planned for (0: nothing was pending; MESSAGES_PER_BATCH: more may wait), counted
 * before the writes, which drop messages deleted meanwhile from the batch.
 */
export async function writeDeferredUnreadBatch(store: Store, limit = MESSAGES_PER_BATCH): Promise<number> {
  const batch = planDeferredUnreadRows(store, limit);
  if (!batch) return 0;
  const planned = batch.lists.size;
  const idsByUser = new Map<number, number[]>();
  for (const [id, recipients] of batch.lists) {
    if (batch.locations.get(id)) for (const userId of recipients) appendTo(idsByUser, userId, id);
  }
  let chunk = new Map<number, number[]>();
  for (const [userId, ids] of idsByUser) {
    chunk.set(userId, ids);
    if (chunk.size >= USERS_PER_COMMIT) {
      const full = chunk;
      store.commitOnThisThread(() => writeDeferredUnreadRows(store, batch, full, false));
      chunk = new Map();
      await Bun.sleep(PAUSE_MS);
    }
  }
  store.commitOnThisThread(() => writeDeferredUnreadRows(store, batch, chunk, true));
  return planned;
}

/** What the worker thread tells the job (see unread_rows_worker.ts). */
export type UnreadRowsWorkerReport = { type: "batch" } | { type: "idle" } | { type: "stopped" } | { type: "error"; message: string };
/** What the job tells the worker thread. */
export type UnreadRowsWorkerCommand = { type: "open"; dataDir: string } | { type: "run"; oldest?: number } | { type: "stop" };

/**
 * When the job waits instead of writing (see startUnreadRowsJob): rows can wait, the
 * requests of a busy server cannot. Under scripts/bench-events.ts (50 messages/s to
 * 1,000 users) the worker's batches took 6–8 % of a core from the two the clients
 * and the server share, and the server's delivery p99 rose with them: 3 rounds with
 * the job idle read 1.17–1.46× the p99 of a server that only authenticates and
 * commits (BENCH_FLOOR), 1.32–1.44× with it running (docs/events.md).
 */
export interface UnreadRowsDeferral {
  /** A batch waits until no message has been sent for this long… */
  quietMs: number;
  /** …while more than this many messages wait, those beyond it go a batch per tick (readers scan the lists past the watermark)… */
  backlogLimit: number;
  /** …or rows have waited this long with no run. */
  maxWaitMs: number;
}

export const DEFAULT_UNREAD_ROWS_DEFERRAL: UnreadRowsDeferral = { quietMs: 1000, backlogLimit: MESSAGES_PER_BATCH, maxWaitMs: 60_000 };

export interface UnreadRowsJob {
  /** Resolves once the batches pending now are written (tests, benchmarks). */
  drain(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Runs batches on the worker (`workerUrl`: unread_rows_worker.ts, see src/server.ts),
 * checking every `intervalMs` (500 ms by default) whether messages are pending and
 * the server quiet enough (`deferral`); `drain` runs one at once. (Before the
 * deferral, batches ran at every tick while messages were pending: every 500 ms gave
 * a lower delivery p99 under scripts/bench-events.ts than every 250 ms, 1 s, 2 s or
 * 5 s; a batch in quiet time competes with nothing.) A batch that fails is retried at the
 * next tick; a worker that dies is replaced at the next tick (until then the rows stay
 * implicit and reads stay right, but the in-memory index of pending messages grows).
 * After each batch the main thread prunes that index to the new watermark.
 */
export function startUnreadRowsJob(h: Hearth, intervalMs: number, workerUrl: string, deferral: UnreadRowsDeferral = DEFAULT_UNREAD_ROWS_DEFERRAL): UnreadRowsJob {
  let worker: Worker | null = null;
  // Activity is the newest message ID moving between ticks: no hook on the send path.
  let lastSeenId = h.store.lastId("message");
  let lastActivityAt = Date.now();
  /** Since when rows have waited with no batch run (null: none waited at the last tick). */
  let waitingSince: number | null = null;
  let running = false;
  let stopped = false;
  /** Waiting for the current run to end (drain). */
  let onIdle: (() => void)[] = [];
  let onStopped: (() => void) | null = null;
  const runEnded = () => {
    running = false;
    const waiting = onIdle;
    onIdle = [];
    for (const resolve of waiting) resolve();
  };
  const spawn = (): Worker => {
    const spawned = new Worker(workerUrl);
    spawned.onmessage = (event: MessageEvent<UnreadRowsWorkerReport>) => {
      const report = event.data;
      if (report.type === "batch") pruneIndex();
      else if (report.type === "error") console.error("Writing deferred unread rows failed; it will retry:", report.message);
      else if (report.type === "idle") runEnded();
      else if (report.type === "stopped") onStopped?.();
    };
    spawned.onerror = (event) => {
      console.error("The unread-rows worker failed; a new one starts at the next tick:", event.message);
      spawned.terminate();
      if (worker === spawned) worker = null;
      onStopped?.();
      runEnded();
    };
    spawned.postMessage({ type: "open", dataDir: h.store.dataDir } satisfies UnreadRowsWorkerCommand);
    // Bun has Worker.unref (the process may exit while it idles); the DOM typings lack it.
    (spawned as unknown as { unref(): void }).unref();
    return spawned;
  };
  /**
   * Tells the worker to write: one batch of `oldest` messages, the oldest waiting, or
   * else every batch pending. Whether rows are pending is checked by the callers, here
   * on the main thread: an idle server's worker stays asleep.
   */
  const start = (oldest?: number): void => {
    // Marked running once the worker has the command: a spawn that throws leaves the next tick free to try again.
    (worker ??= spawn()).postMessage({ type: "run", oldest } satisfies UnreadRowsWorkerCommand);
    running = true;
    // Any run restarts the longest wait: under steady load past the backlog limit the
    // runs of the oldest keep the wait short, so it never forces a catch-up on the
    // whole backlog (the burst those runs avoid).
    waitingSince = null;
  };
  /** After a batch: a failure leaves the index larger than needed, never wrong (the next batch prunes it). */
  const pruneIndex = (): void => {
    try {
      loadPendingUnreadIndex(h.store);
    } catch (error) {
      console.error("Pruning the index of pending unread rows failed; the next batch retries:", error);
    }
  };
  /** Starts a run of every pending batch unless none is pending or one is under way; false when it did not. */
  const run = (): boolean => {
    if (running || stopped || !hasDeferredUnreadRows(h.store)) return false;
    start();
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
  /** A run when rows are pending and the server is quiet, or they have waited too long. */
  const checkPending = (): void => {
    if (running || stopped) return;
    const now = Date.now();
    const newestId = h.store.lastId("message");
    if (newestId !== lastSeenId) {
      lastSeenId = newestId;
      lastActivityAt = now;
    }
    if (!hasDeferredUnreadRows(h.store)) {
      waitingSince = null;
      return;
    }
    waitingSince ??= now;
    if (now - lastActivityAt >= deferral.quietMs || now - waitingSince >= deferral.maxWaitMs) {
      start();
      return;
    }
    // Busy, with more waiting than the limit: only the messages beyond it, oldest first,
    // a tick's arrivals at a time under steady load. Catching up on the whole backlog
    // at once (a 500-message batch to 1,000 users every ~10 s at 50 messages/s) gave
    // 20 s runs of scripts/bench-events.ts a higher p99 than batches at every tick did.
    const excess = newestId - unreadWatermark(h.store) - deferral.backlogLimit;
    if (excess >= 0) start(Math.min(excess + 1, MESSAGES_PER_BATCH));
  };
  try {
    worker = spawn();
  } catch (error) {
    console.error("The unread-rows worker did not start; the next tick tries again:", error);
  }
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  const idle = () => new Promise<void>((resolve) => onIdle.push(resolve));
  return {
    async drain() {
      if (stopped) return;
      // A run in progress may have planned its batch before the caller's last write.
      if (running) await idle();
      const done = idle();
      if (run()) await done;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      const current = worker;
      if (current) {
        const acknowledged = new Promise<void>((resolve) => (onStopped = resolve));
        current.postMessage({ type: "stop" } satisfies UnreadRowsWorkerCommand);
        await acknowledged;
        current.terminate();
      }
      worker = null;
      runEnded();
    },
  };
}
