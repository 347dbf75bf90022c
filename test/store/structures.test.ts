/**
 * The store shares msgpack record layouts (lmdb-js `sharedStructuresKey`). A layout
 * first seen in a transaction that rolls back must not leave later records unreadable
 * after a restart: msgpackr counts a layout as saved once it wrote it into the
 * transaction, and the store makes it forget its layouts when that transaction rolls
 * back (Store.transactionBody).
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../../src/store/db";

test("records written beside rolled-back transactions read back after reopening", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hearth-structures-"));
  try {
    const store = new Store(dir);
    const writes = Array.from({ length: 60 }, (_, i) =>
      store
        .commit(() => {
          store.dbs.drafts.put([1, i], { ["field" + (i % 7)]: i, shape: i % 3, ["flag" + (i % 5)]: true });
          if (i % 4 === 0) throw new Error("rolled back");
        })
        .catch(() => undefined),
    );
    await Promise.all(writes);
    await store.close();
    const reopened = new Store(dir);
    for (let i = 0; i < 60; i++) {
      const value = reopened.dbs.drafts.get([1, i]);
      if (i % 4 === 0) expect(value).toBeUndefined();
      else expect(value).toEqual({ ["field" + (i % 7)]: i, shape: i % 3, ["flag" + (i % 5)]: true });
    }
    await reopened.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Writes a record of a new shape in a transaction that rolls back, then one of the same shape that commits. */
async function rollBackThenCommitSameShape(dir: string, commit: (store: Store, fn: () => void) => Promise<void>) {
  const store = new Store(dir);
  await commit(store, () => store.dbs.drafts.put([1, 1], { text: "first", at: 1 }));
  await expect(
    commit(store, () => {
      store.dbs.drafts.put([1, 2], { topic: "rolled back", to: [3], kind: "stream" });
      throw new Error("check failed");
    }),
  ).rejects.toThrow("check failed");
  await commit(store, () => store.dbs.drafts.put([1, 3], { topic: "kept", to: [4], kind: "stream" }));
  expect(store.dbs.drafts.get([1, 3])).toEqual({ topic: "kept", to: [4], kind: "stream" });
  await store.close();
}

async function expectReadableAfterReopening(dir: string) {
  const reopened = new Store(dir);
  expect(reopened.dbs.drafts.get([1, 2])).toBeUndefined();
  expect(reopened.dbs.drafts.get([1, 3])).toEqual({ topic: "kept", to: [4], kind: "stream" });
  // A further new shape makes the store merge its saved layouts with the remembered ones.
  await reopened.commit(() => reopened.dbs.drafts.put([1, 4], { another: "shape", n: 4 }));
  expect(reopened.dbs.drafts.get([1, 1])).toEqual({ text: "first", at: 1 });
  expect(reopened.dbs.drafts.get([1, 3])).toEqual({ topic: "kept", to: [4], kind: "stream" });
  expect(reopened.dbs.drafts.get([1, 4])).toEqual({ another: "shape", n: 4 });
  await reopened.close();
}

for (const [name, commit] of [
  ["Store.commit", (store: Store, fn: () => void) => store.commit(fn)],
  ["Store.commitOnThisThread", async (store: Store, fn: () => void) => store.commitOnThisThread(fn)],
] as const) {
  test(`${name}: a record shape first written in a rolled-back transaction, then committed, reads back after reopening`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-structures-"));
    try {
      await rollBackThenCommitSameShape(dir, commit);
      await expectReadableAfterReopening(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test("a shape first written in a rolled-back transaction does not spoil the rest of its batch", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hearth-structures-"));
  try {
    const store = new Store(dir);
    await Promise.all([
      store.commit(() => store.dbs.drafts.put([1, 5], { before: "the rollback", n: 5 })),
      store
        .commit(() => {
          store.dbs.drafts.put([1, 6], { rolled: "back", n: 6 });
          throw new Error("check failed");
        })
        .catch(() => undefined),
      store.commit(() => store.dbs.drafts.put([1, 7], { rolled: "back", n: 7 })),
      store.commit(() => store.dbs.drafts.put([1, 8], { before: "the rollback", n: 8 })),
    ]);
    await store.close();
    const reopened = new Store(dir);
    expect(reopened.dbs.drafts.get([1, 5])).toEqual({ before: "the rollback", n: 5 });
    expect(reopened.dbs.drafts.get([1, 6])).toBeUndefined();
    expect(reopened.dbs.drafts.get([1, 7])).toEqual({ rolled: "back", n: 7 });
    expect(reopened.dbs.drafts.get([1, 8])).toEqual({ before: "the rollback", n: 8 });
    await reopened.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
