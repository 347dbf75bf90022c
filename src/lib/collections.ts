/** Appends to the list under `key`, creating it: linear, where copying the list each time was quadratic. */
export function appendTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
