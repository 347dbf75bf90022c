import { notifyWithoutCommit, type CommitContext, type Transaction } from "../events/commit";

/**
 * The Transaction of a commit already visible to readers, for a caller that still
 * notifies after its `await` rather than inside `commit`: its events go out at once,
 * as `tx.notify` does from `tx.afterCommit`. Transitional: once every caller notifies
 * inside its commit, this goes.
 */
export function committedTransaction(h: CommitContext): Transaction {
  return {
    notify: (event, userIds, options) => notifyWithoutCommit(h, event, userIds, options),
    afterCommit: (fn) => fn(),
  };
}
