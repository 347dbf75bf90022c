/** StoreCache keeps each store's values apart (it remembers the last store read) and drops them on a write, committed or rolled back. */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../../src/store/db";
import { StoreCache } from "../../src/store/cache";

const dirs = [mkdtempSync(join(tmpdir(), "hearth-store-cache-a-")), mkdtempSync(join(tmpdir(), "hearth-store-cache-b-"))];
const [a, b] = dirs.map((dir) => new Store(dir));
afterAll(async () => {
  await a.close();
  await b.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

test("two stores read in turn each get their own values, and a write to one is seen", async () => {
  const cache = new StoreCache<string, string>();
  const values = new Map<Store, string>([[a, "a1"], [b, "b1"]]);
  let loads = 0;
  const read = (store: Store) => cache.get(store, "k", () => (loads++, values.get(store)!));
  for (let round = 0; round < 3; round++) {
    expect(read(a)).toBe("a1");
    expect(read(b)).toBe("b1");
  }
  expect(loads).toBe(2);
  await a.commit(() => {
    values.set(a, "a2");
    cache.invalidate(a);
    // Inside the transaction the cache is bypassed.
    expect(read(a)).toBe("a2");
  });
  expect(read(b)).toBe("b1");
  expect(read(a)).toBe("a2");
  expect(read(a)).toBe("a2");
  // A rolled-back write drops the values too: they are loaded again.
  const before = loads;
  await expect(
    b.commit(() => {
      cache.invalidate(b);
      throw new Error("rolled back");
    }),
  ).rejects.toThrow("rolled back");
  expect(read(b)).toBe("b1");
  expect(read(a)).toBe("a2");
  expect(loads).toBe(before + 2);
});
