import { notifyWithoutCommit, type CommitContext, type Transaction } from "../events/commit";

/**
 * The transaction of a write that has already committed, for callers that still
 * notify after `await h.store.commit(…)` rather than inside `commit(h, tx => …)`:
 * `notify` publishes at once, as `tx.notify` does once a transaction is visible.
 * Goes away once every caller of a `notify*(tx, h, …)` helper passes its own `tx`.
 */
export function committedTransaction(h: CommitContext): Transaction {
  return {
    notify: (event, userIds, options) => notifyWithoutCommit(h, event, userIds, options),
    afterCommit: (fn) => fn(),
  };
}
