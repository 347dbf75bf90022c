import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../../src/store/db";

const dir = mkdtempSync(join(tmpdir(), "hearth-memo-"));
const store = new Store(dir);
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

test("Store.memo: recomputed after every commit, never cached mid-commit or from a rolled-back write", async () => {
  let computed = 0;
  const count = () => store.memo("count", () => (computed++, (store.dbs.meta.get("n") as number | undefined) ?? 0));
  expect(count()).toBe(0);
  expect(count()).toBe(0);
  expect(computed).toBe(1);
  await store.commit(() => {
    store.dbs.meta.put("n", 1);
    // Read inside the transaction: sees the new value but must not be cached.
    expect(count()).toBe(1);
  });
  expect(count()).toBe(1);
  expect(count()).toBe(1);
  const before = computed;
  await expect(
    store.commit(() => {
      store.dbs.meta.put("n", 99);
      count();
      throw new Error("rolled back");
    }),
  ).rejects.toThrow("rolled back");
  expect(count()).toBe(1);
  expect(computed).toBe(before + 2);
});
