/**
 * Store.commit: concurrent commits share lmdb-js's batch and each resolves once
 * durable; a throw undoes that action's writes alone.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../../src/store/db";

function withStore(run: (store: Store, dir: string) => Promise<void>) {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-commits-"));
    try {
      await run(new Store(dir), dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

test(
  "commits in quick succession all survive reopening",
  withStore(async (store, dir) => {
    await Promise.all([1, 2, 3].map((i) => store.commit(() => store.dbs.drafts.put([1, i], { text: `draft ${i}` }))));
    await store.close();
    const reopened = new Store(dir);
    for (const i of [1, 2, 3]) expect(reopened.dbs.drafts.get([1, i])).toEqual({ text: `draft ${i}` });
    await reopened.close();
  }),
);

test(
  "a commit that throws after writing leaves nothing behind, beside one that succeeds",
  withStore(async (store) => {
    const failed = store.commit(() => {
      store.dbs.drafts.put([2, 1], { text: "first half" });
      throw new Error("check failed");
    });
    const kept = store.commit(() => store.dbs.drafts.put([2, 2], { text: "kept" }));
    await expect(failed).rejects.toThrow("check failed");
    await kept;
    expect(store.dbs.drafts.get([2, 1])).toBeUndefined();
    expect(store.dbs.drafts.get([2, 2])).toEqual({ text: "kept" });
    await store.close();
  }),
);
