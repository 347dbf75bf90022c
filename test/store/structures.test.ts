/**
 * The store shares msgpack record layouts (lmdb-js `sharedStructuresKey`). A layout
 * first seen in a transaction that rolls back must not leave later records unreadable
 * after a restart.
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
