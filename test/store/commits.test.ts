/**
 * Store.commit: a lone commit runs inline, commits that follow closely share
 * lmdb-js's batch; each resolves once durable, and a throw undoes that action's
 * writes alone either way.
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

test(
  "a lone commit is done inline; one right after it joins the batch; both survive reopening",
  withStore(async (store, dir) => {
    const lone = store.commit(() => store.dbs.drafts.put([1, 1], { text: "lone" }));
    expect(store.inlineCommits).toBe(1);
    // Within the spacing of the inline one: it goes to lmdb-js's write thread.
    const next = store.commit(() => store.dbs.drafts.put([1, 2], { text: "batched" }));
    expect(store.inlineCommits).toBe(1);
    await Promise.all([lone, next]);
    expect(store.dbs.drafts.get([1, 2])).toEqual({ text: "batched" });
    // Alone again once the spacing has passed.
    await Bun.sleep(20);
    await store.commit(() => store.dbs.drafts.put([1, 3], { text: "lone again" }));
    expect(store.inlineCommits).toBe(2);
    await store.close();
    const reopened = new Store(dir);
    expect(reopened.dbs.drafts.get([1, 1])).toEqual({ text: "lone" });
    expect(reopened.dbs.drafts.get([1, 2])).toEqual({ text: "batched" });
    expect(reopened.dbs.drafts.get([1, 3])).toEqual({ text: "lone again" });
    await reopened.close();
  }),
);

test(
  "a lone commit that throws after writing leaves nothing behind, and the next commit works",
  withStore(async (store) => {
    const failed = store.commit(() => {
      store.dbs.drafts.put([2, 1], { text: "first half" });
      throw new Error("check failed");
    });
    expect(store.inlineCommits).toBe(1);
    await expect(failed).rejects.toThrow("check failed");
    expect(store.dbs.drafts.get([2, 1])).toBeUndefined();
    await Bun.sleep(20);
    await store.commit(() => store.dbs.drafts.put([2, 2], { text: "kept" }));
    expect(store.inlineCommits).toBe(2);
    expect(store.dbs.drafts.get([2, 2])).toEqual({ text: "kept" });
    expect(store.dbs.drafts.get([2, 1])).toBeUndefined();
    await store.close();
  }),
);
