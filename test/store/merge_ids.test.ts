import { describe, expect, test } from "bun:test";
import { mergeIds } from "../../src/store/message_indexes";

/** mergeIds: the union of ordered ID streams, in order, without repeats; stopping early ends every stream. */
function tracked(ids: number[]) {
  const state = { ended: false };
  function* gen() {
    try {
      yield* ids;
    } finally {
      state.ended = true;
    }
  }
  return { stream: gen(), state };
}

describe("mergeIds", () => {
  test("newer and older, overlapping streams, one stream left alone, empty streams", () => {
    const a = [1, 4, 5, 9, 12, 13, 20];
    const b = [2, 4, 9, 10];
    const c: number[] = [];
    const d = [3];
    const union = [...new Set([...a, ...b, ...c, ...d])].sort((x, y) => x - y);
    expect([...mergeIds([a, b, c, d].map((x) => x[Symbol.iterator]()), "newer")]).toEqual(union);
    const down = (x: number[]) => [...x].reverse()[Symbol.iterator]();
    expect([...mergeIds([down(a), down(b), down(c), down(d)], "older")]).toEqual([...union].reverse());
    expect([...mergeIds([], "newer")]).toEqual([]);
    expect([...mergeIds([[7, 8][Symbol.iterator]()], "newer")]).toEqual([7, 8]);
    // Repeats within the stream left last are dropped too.
    expect([...mergeIds([[1, 2][Symbol.iterator](), [1, 3, 3, 4][Symbol.iterator]()], "newer")]).toEqual([1, 2, 3, 4]);
  });

  test("a caller that stops early ends every stream, the one left alone included", () => {
    const x = tracked([1, 2, 3, 4, 5]);
    const y = tracked([2]);
    for (const id of mergeIds([x.stream, y.stream], "newer")) if (id >= 3) break;
    expect(x.state.ended).toBe(true);
    expect(y.state.ended).toBe(true);
    const z = tracked([10, 11, 12]);
    const w = tracked([]);
    for (const id of mergeIds([z.stream, w.stream], "newer")) if (id === 10) break;
    expect(z.state.ended).toBe(true);
  });
});
