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
