import { expect, test } from "bun:test";
import { KEYSPACES } from "../../src/store/keyspaces";
import { MAX_KEY_SPACES } from "../../src/store/db";

test("LMDB's named-database limit leaves room above the declared key spaces", () => {
  const names = Object.values(KEYSPACES);
  expect(new Set(names).size).toBe(names.length);
  expect(names.length + 8).toBeLessThanOrEqual(MAX_KEY_SPACES);
});
