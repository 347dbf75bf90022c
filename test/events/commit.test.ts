/**
 * commit: events go out once the transaction is visible, and never for writes that
 * were rolled back, including a commit nested in a callback that then throws.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../../src/store/db";
import { commit } from "../../src/events/commit";
import type { EventHub } from "../../src/events/hub";

function withContext(run: (h: { store: Store; events: EventHub }, published: string[]) => Promise<void>) {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-commit-"));
    const store = new Store(dir);
    const published: string[] = [];
    const events = { publish: (event: { type: string; op?: string }) => published.push(`${event.type}:${event.op}`) } as unknown as EventHub;
    try {
      await run({ store, events }, published);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

const draftEvent = (op: "add" | "remove") => ({ type: "drafts", op, draft_id: 1 }) as never;

test(
  "a commit nested in a callback that throws publishes nothing and keeps none of its writes",
  withContext(async (h, published) => {
    let inner: Promise<unknown> | undefined;
    const outer = commit(h, () => {
      inner = commit(h, (tx) => {
        h.store.dbs.drafts.put([1, 1], { text: "inner" });
        tx.notify(draftEvent("add"), [1]);
      });
      throw new Error("check failed");
    });
    await expect(outer).rejects.toThrow("check failed");
    await inner?.catch(() => undefined);
    await commit(h, (tx) => tx.notify(draftEvent("remove"), [1]));
    expect(h.store.dbs.drafts.get([1, 1])).toBeUndefined();
    expect(published).toEqual(["drafts:remove"]);
  }),
);

test(
  "a nested commit's events go out with the enclosing commit, where it queued them",
  withContext(async (h, published) => {
    await commit(h, (tx) => {
      tx.notify(draftEvent("add"), [1]);
      void commit(h, (inner) => {
        h.store.dbs.drafts.put([1, 1], { text: "inner" });
        inner.notify({ type: "drafts", op: "update", draft: {} } as never, [1]);
      });
      tx.notify(draftEvent("remove"), [1]);
    });
    expect(h.store.dbs.drafts.get([1, 1])).toEqual({ text: "inner" });
    expect(published).toEqual(["drafts:add", "drafts:update", "drafts:remove"]);
  }),
);
