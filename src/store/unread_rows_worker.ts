/**
 * The worker thread of the unread-rows job (unread_rows.ts): it opens the data
 * folder's LMDB environment (shared with the main thread) and writes batches of
 * deferred unread rows and search rows (search_terms.ts) when told to, so their
 * commits never hold the main thread. Commands and reports are the types in
 * unread_rows.ts. scripts/build.ts compiles this file into the executable as a
 * second entry point.
 */
import { useNormalJitPolicy } from "../lib/jit_policy";
import { lowerThisThreadsPriority } from "../lib/thread_priority";
import { Store } from "./db";
import type { UnreadRowsWorkerCommand, UnreadRowsWorkerReport } from "./unread_rows";
import { writePendingBatches } from "./unread_rows_run";

declare const self: Worker;

// The worker starts when the server already runs: its batches are hot code from the first.
useNormalJitPolicy();

let store: Store | null = null;
let running: Promise<void> | null = null;
let stopping = false;
const report = (message: UnreadRowsWorkerReport) => self.postMessage(message);

/** `oldest`: that many messages, the oldest waiting; else every batch pending (unread_rows_run.ts). */
async function runBatches(oldest?: number): Promise<void> {
  try {
    if (store) {
      const opened = store;
      await writePendingBatches(opened, {
        oldest,
        commit: (fn) => opened.commitOnThisThread(fn),
        afterBatch() {
          report({ type: "batch" });
          // A batch decodes up to MESSAGES_PER_BATCH recipient lists, garbage once it is
          // written: a full collection here (on this thread, not the server's) keeps the
          // thread's heap at its code and structures between batches.
          Bun.gc(true);
        },
        stopping: () => stopping || store !== opened,
      });
    }
  } catch (error) {
    report({ type: "error", message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
  report({ type: "idle" });
}

/**
 * Closes this thread's handle on the store before the job terminates the thread (it
 * retires an idle worker and starts another later). lmdb-js keeps one native LMDB
 * environment per data file and process, counted per handle: the main thread's stays
 * open, and closing this handle only drops its count, after aborting the read
 * transaction this thread kept for its reads, which holds a slot of LMDB's reader
 * table (fixed in size, shared by the whole process; LMDB frees by itself only the
 * slots of dead processes). Without the close, lmdb-js's cleanup at the thread's end
 * gave back most slots but the process's memory grew with each retirement
 * (test/store/worker_retire.test.ts counts slots, descriptors and memory over many).
 */
async function closeStore(): Promise<void> {
  const closing = store;
  store = null;
  try {
    await closing?.close();
  } catch (error) {
    report({ type: "error", message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
}

self.onmessage = (event: MessageEvent<UnreadRowsWorkerCommand>) => {
  const command = event.data;
  if (command.type === "open") {
    // The rows can wait; requests cannot. At nice 19 the OS gives this thread the CPU
    // time the server's own thread and everything else on the machine leave idle: on a
    // 2-core box under scripts/bench-events.ts load it took as much CPU either way, and
    // the server's delivery p99 was lower.
    lowerThisThreadsPriority();
    store = new Store(command.dataDir);
  } else if (command.type === "run") {
    running ??= runBatches(command.oldest).finally(() => (running = null));
  } else if (command.type === "stop") {
    stopping = true;
    void (running ?? Promise.resolve()).then(closeStore).then(() => report({ type: "stopped" }));
  }
};
