/** src/lib/collections.ts: boundedMemo, which the per-request caches of names, flags and patterns share. */
import { expect, test } from "bun:test";
import { boundedMemo } from "../../src/lib/collections";

test("boundedMemo computes a key once, keeps null results, and forgets everything at its limit", () => {
  const computed: string[] = [];
  const memo = boundedMemo(3, (key: string) => {
    computed.push(key);
    return key === "bad" ? null : key.toUpperCase();
  });
  expect(memo("a")).toBe("A");
  expect(memo("a")).toBe("A");
  expect(memo("bad")).toBeNull();
  expect(memo("bad")).toBeNull();
  expect(computed).toEqual(["a", "bad"]);
  memo("b");
  // Three held: the fourth key clears them before it is kept.
  memo("c");
  expect(memo("c")).toBe("C");
  memo("a");
  expect(computed).toEqual(["a", "bad", "b", "c", "a"]);
});
