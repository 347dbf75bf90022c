/**
 * The bytes of an unread run (unread_runs.ts): pure encoding, no store.
 */

/**
 * A run as stored (store format 2, src/store/format.ts): its ID count, then each ID
 * as its distance from the one before (the first from the run's start), as unsigned
 * LEB128 varints, then for each ID the position of its location in the run's places,
 * one byte each (a run holds at most RUN_MAX_IDS IDs, unread_runs.ts, so at most that many places).
 * A run's IDs are mostly neighbours, so an entry takes about two bytes; format 1 took
 * sixteen (two float64), the largest part of the data file with 100-subscriber
 * channels (docs/benchmarks.md). Taking a message out rewrites this record alone; the
 * places, a batch's few conversations, stay as they are.
 */
export interface Run {
  start: number;
  ids: Float64Array;
  placeAt: Uint8Array;
}

export function encodeRun(start: number, ids: ArrayLike<number>, placeAt: ArrayLike<number>): Buffer {
  const bytes: number[] = [];
  const varint = (n: number) => {
    for (; n >= 0x80; n = Math.floor(n / 0x80)) bytes.push((n % 0x80) | 0x80);
    bytes.push(n);
  };
  varint(ids.length);
  let previous = start;
  for (let i = 0; i < ids.length; i++) {
    if (ids[i] < previous) throw new RangeError(`unread run IDs must ascend from the run's start (${ids[i]} after ${previous})`);
    varint(ids[i] - previous);
    previous = ids[i];
  }
  for (let i = 0; i < placeAt.length; i++) {
    if (placeAt[i] > 0xff) throw new RangeError("an unread run holds at most 256 places");
    bytes.push(placeAt[i]);
  }
  return Buffer.from(bytes);
}

export function decodeRun(start: number, value: unknown): Run {
  const bytes = value as Uint8Array;
  let at = 0;
  const varint = () => {
    let n = 0;
    for (let scale = 1; ; scale *= 0x80) {
      const byte = bytes[at++];
      n += (byte & 0x7f) * scale;
      if (byte < 0x80) return n;
    }
  };
  const count = varint();
  const ids = new Float64Array(count);
  let previous = start;
  for (let i = 0; i < count; i++) ids[i] = previous += varint();
  // Copied: lmdb-js reuses its read buffer.
  return { start, ids, placeAt: bytes.slice(at, at + count) };
}

/** Format 1's run record (two float64 per ID, machine byte order): read once, by the upgrade to format 2. */
export function decodeFormat1Run(start: number, value: unknown): Run {
  const bytes = value as Uint8Array;
  const values = new Float64Array(bytes.length / 8);
  new Uint8Array(values.buffer).set(bytes);
  const count = values.length / 2;
  return { start, ids: values.slice(0, count), placeAt: Uint8Array.from(values.subarray(count)) };
}
