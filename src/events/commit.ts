import type { Store } from "../store/db";
import type { ApiEvent, EventHub, PublishOptions } from "./hub";
import type { TypedEvent } from "../schemas/events";

/**
 * Commit, then notify — the one way a state change reaches clients (Zulip's
 * `send_event_on_commit`). An action writes inside `commit(h, (tx) => …)` and queues
 * its events with `tx.notify(event, userIds)`; they are published once the
 * transaction is visible to every reader of the store (Store's `onCommitted`, before
 * its fsync: see src/store/db.ts), in the order queued, and never for a transaction
 * that threw. The returned promise still resolves only once the write is durable, so
 * the caller's success answer waits for the disk.
 *
 * `tx.notify` called after that moment (from `tx.afterCommit`) publishes at once:
 * it is still after the commit. Nothing else in `src/` calls `EventHub.publish`
 * (test/architecture.test.ts), except `notifyWithoutCommit` for events that record
 * no state (typing notices).
 */
export type Recipients = Iterable<number> | ReadonlyMap<number, unknown>;

export interface Transaction {
  /** Queues `event` for `userIds`, published once the transaction is visible. */
  notify(event: TypedEvent, userIds: Recipients, options?: PublishOptions): void;
  /**
   * Runs `fn` once the transaction is visible, after the events queued so far: for
   * work that reads what was committed or builds a costly event outside the write
   * batch (a message's event, formatted once for all its recipients). Not run if the
   * transaction throws. A throw in `fn` is logged, not passed on.
   */
  afterCommit(fn: () => void): void;
}

/** What `commit` needs of the running server (the `Hearth` context has both). */
export interface CommitContext {
  store: Store;
  events: EventHub;
}

type Step = { event: ApiEvent; userIds: Recipients; options?: PublishOptions } | (() => void);

function transaction(h: CommitContext, steps: Step[], committed: { now: boolean }): Transaction {
  return {
    notify(typed, userIds, options) {
      // The queues carry events as plain records; the type was checked here.
      const event = typed as unknown as ApiEvent;
      if (committed.now) h.events.publish(event, userIds, options);
      else steps.push({ event, userIds, options });
    },
    afterCommit(fn) {
      if (committed.now) fn();
      else steps.push(fn);
    },
  };
}

function publishSteps(h: CommitContext, steps: Step[]): void {
  for (const step of steps) {
    try {
      if (typeof step === "function") step();
      else h.events.publish(step.event, step.userIds, step.options);
    } catch (error) {
      console.error("After a commit:", error);
    }
  }
}

/**
 * Runs `fn` in one write transaction (a throw undoes all of its writes and drops its
 * events) and resolves with its result once durable.
 */
export function commit<T>(h: CommitContext, fn: (tx: Transaction) => T): Promise<T> {
  return run(h, fn, false);
}

/**
 * Like `commit`, in the store's shared batch transaction: for a write phase that
 * cannot fail once its checks are done (see Store.commitInfallible).
 */
export function commitInfallible<T>(h: CommitContext, fn: (tx: Transaction) => T): Promise<T> {
  return run(h, fn, true);
}

/**
 * The transaction whose callback is running, if any. A commit called inside it runs
 * as a child of it (lmdb-js nests it), and an enclosing callback that then throws
 * rolls the child's writes back too: the child's events therefore wait for the
 * enclosing commit, instead of going out when the batch becomes visible.
 */
let enclosing: Transaction | null = null;

function run<T>(h: CommitContext, fn: (tx: Transaction) => T, infallible: boolean): Promise<T> {
  let steps: Step[] = [];
  const committed = { now: false };
  const outer = enclosing;
  const body = () => {
    // lmdb-js may run a callback again (a batch retried): start its steps afresh.
    steps = [];
    const tx = transaction(h, steps, committed);
    enclosing = tx;
    let result: T;
    try {
      result = fn(tx);
    } finally {
      enclosing = outer;
    }
    if (outer) {
      const own = steps;
      outer.afterCommit(() => {
        committed.now = true;
        publishSteps(h, own);
      });
    }
    return result;
  };
  const options = outer
    ? undefined
    : {
        onCommitted: () => {
          committed.now = true;
          publishSteps(h, steps);
        },
      };
  return infallible ? h.store.commitInfallible(body, options) : h.store.commit(body, options);
}

/**
 * Publishes an event that records no state, so there is no commit to wait for:
 * typing notices, which Zulip sends straight to Tornado too.
 */
export function notifyWithoutCommit(h: CommitContext, event: TypedEvent, userIds: Recipients, options?: PublishOptions): void {
  h.events.publish(event as unknown as ApiEvent, userIds, options);
}
