import { expect, test } from "bun:test";
import { RecipientFlags } from "../../src/store/recipient_flags";

/** RecipientFlags reads as the Map of user → flags it stands for, whatever order users come and change in. */
test("RecipientFlags answers as the equivalent Map after random sets", () => {
  let seed = 11;
  const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
  for (let round = 0; round < 200; round++) {
    const common = random(3) === 0 ? 8 : 0;
    const ids = Array.from({ length: random(40) }, () => 1 + random(60));
    const flags = new RecipientFlags(ids, common);
    const map = new Map<number, number>();
    for (const id of [...new Set(ids)].sort((a, b) => a - b)) map.set(id, common);
    for (let n = random(12); n > 0; n--) {
      const id = 1 + random(70);
      const bits = [0, 1, 2, 8, 9][random(5)];
      flags.set(id, bits);
      map.set(id, bits);
    }
    const sorted = [...map].sort((a, b) => a[0] - b[0]);
    expect([...flags]).toEqual(sorted);
    expect(flags.ids).toEqual(sorted.map(([id]) => id));
    expect([...flags.keys()]).toEqual(sorted.map(([id]) => id));
    expect([...flags.values()]).toEqual(sorted.map(([, bits]) => bits));
    expect(flags.size).toBe(map.size);
    expect(flags.distinctValues()).toEqual(new Set(map.values()));
    for (const bit of [1, 8]) expect(flags.usersWith(bit)).toEqual(sorted.filter(([, bits]) => bits & bit).map(([id]) => id));
    for (let id = 0; id <= 71; id++) {
      expect(flags.get(id)).toBe(map.get(id));
      expect(flags.has(id)).toBe(map.has(id));
    }
    for (const [id, bits] of flags.exceptions) expect(bits === common || map.get(id) !== bits).toBe(false);
  }
});

test("RecipientFlags is read as a Map by what takes one: its users without copies, delete and clear as a Map's", () => {
  const flags = new RecipientFlags([3, 1, 2, 2], 0).set(9, 1);
  expect(flags instanceof Map).toBe(true);
  expect(Array.from(flags.keys())).toEqual([1, 2, 3, 9]);
  expect(new Map(flags)).toEqual(new Map([[1, 0], [2, 0], [3, 0], [9, 1]]));
  const seen: [number, number][] = [];
  flags.forEach((bits, id) => seen.push([id, bits]));
  expect(seen).toEqual([[1, 0], [2, 0], [3, 0], [9, 1]]);
  expect(flags.delete(9)).toBe(true);
  expect(flags.delete(9)).toBe(false);
  expect([...flags]).toEqual([[1, 0], [2, 0], [3, 0]]);
  expect(flags.exceptions.size).toBe(0);
  flags.clear();
  expect(flags.size).toBe(0);
  expect(flags.get(1)).toBeUndefined();
});

test("RecipientFlags never changes the ascending list it was given (shared: a channel's subscribers)", () => {
  const shared = Object.freeze([1, 4, 7]) as readonly number[];
  const flags = new RecipientFlags(shared, 0);
  expect(flags.ids).toBe(shared);
  flags.set(4, 1);
  expect(flags.ids).toBe(shared);
  flags.set(5, 0);
  flags.delete(1);
  expect(flags.ids).toEqual([4, 5, 7]);
  expect(shared).toEqual([1, 4, 7]);
  const other = new RecipientFlags(shared, 0);
  other.clear();
  other.set(2, 0);
  expect(shared).toEqual([1, 4, 7]);
});
