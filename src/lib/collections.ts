/** Appends to the list under `key`, creating it: linear, where copying the list each time was quadratic. */
export function appendTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Whether `order` names each of `ids` exactly once (the reorder endpoints' check). */
export function isPermutationOf(order: readonly number[], ids: ReadonlySet<number>): boolean {
  return order.length === ids.size && new Set(order).size === order.length && order.every((id) => ids.has(id));
}

/** A short key for a sorted list of IDs: its length, ends and sum (one pass, no string of every ID). Keys may collide: compare with sameList. */
export function listKey(list: readonly number[]): string {
  let sum = 0;
  for (let i = 0; i < list.length; i++) sum += list[i];
  return `${list.length}:${list[0]}:${list[list.length - 1]}:${sum}`;
}

/** Whether two lists hold the same values in the same order. */
export function sameList(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * `compute` remembered per key, every value forgotten once `limit` keys are held: for
 * values derived from the few distinct inputs requests keep repeating (client names,
 * flag sets, timestamps), where a flood of distinct inputs must not grow memory.
 * `compute` never returns undefined.
 */
export function boundedMemo<K, V>(limit: number, compute: (key: K) => V): (key: K) => V {
  const values = new Map<K, V>();
  return (key) => {
    let value = values.get(key);
    if (value === undefined) {
      value = compute(key);
      if (values.size >= limit) values.clear();
      values.set(key, value);
    }
    return value;
  };
}
