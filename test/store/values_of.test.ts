/** valuesOf: a key space's values, or one owner's, whatever type the rest of the key has. */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store, valuesOf } from "../../src/store/db";

test("valuesOf reads every value, or exactly one owner's under numeric and string keys", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hearth-values-of-"));
  const store = new Store(dir);
  try {
    await store.commit(() => {
      store.dbs.navigationViews.put([1, "a"], "1a");
      store.dbs.navigationViews.put([1, "z"], "1z");
      store.dbs.navigationViews.put([1, 7], "1-7");
      store.dbs.navigationViews.put([0, "b"], "0b");
      store.dbs.navigationViews.put([2, "a"], "2a");
      store.dbs.navigationViews.put([2], "2");
    });
    expect(valuesOf<string>(store.dbs.navigationViews, 1)).toEqual(["1-7", "1a", "1z"]);
    expect(valuesOf<string>(store.dbs.navigationViews, 3)).toEqual([]);
    expect(valuesOf<string>(store.dbs.navigationViews)).toHaveLength(6);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
