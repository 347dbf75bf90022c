/**
 * StoreCache.getSettled serves a cached value inside a transaction only while every
 * write of its kind has committed or rolled back; getChannelInTransaction (a send's
 * channel row) is read through it. Each case checks that a transaction sees what it,
 * or an earlier transaction of its batch, wrote, and never a rolled-back value.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../../src/store/db";
import { StoreCache } from "../../src/store/cache";
import { getChannel, getChannelInTransaction, putChannel, type ChannelRecord } from "../../src/store/channels";

const dir = mkdtempSync(join(tmpdir(), "hearth-settled-cache-"));
const store = new Store(dir);
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const cache = new StoreCache<string, string>();
let loads = 0;
const write = (value: string) => {
  cache.invalidate(store);
  store.dbs.meta.put("settled-test", value);
};
const read = () => cache.getSettled(store, "k", () => (loads++, store.dbs.meta.get("settled-test") as string));

test("inside a transaction: the cached value while nothing is unsettled, the transaction's own write after it", async () => {
  await store.commit(() => write("v1"));
  expect(read()).toBe("v1");
  const before = loads;
  await store.commit(() => {
    // Nothing written since: the committed value, from memory.
    expect(read()).toBe("v1");
    expect(loads).toBe(before);
    write("v2");
    expect(read()).toBe("v2");
    expect(loads).toBe(before + 1);
  });
  expect(read()).toBe("v2");
});

test("a write earlier in the same batch is seen by the transactions after it", async () => {
  await store.commit(() => write("b1"));
  expect(read()).toBe("b1");
  const seen: string[] = [];
  // Started in one turn: lmdb-js runs them in one batch, in this order.
  await Promise.all([
    store.commitInfallible(() => seen.push(read())),
    store.commitInfallible(() => write("b2")),
    store.commitInfallible(() => seen.push(read())),
    store.commit(() => seen.push(read())),
  ]);
  expect(seen).toEqual(["b1", "b2", "b2"]);
  expect(read()).toBe("b2");
});

test("a rolled-back write is never served, inside or outside a transaction", async () => {
  await store.commit(() => write("r1"));
  expect(read()).toBe("r1");
  const failing = store.commit(() => {
    write("r2");
    throw new Error("rolled back");
  });
  // While it is unsettled, a transaction reads the store (its own view).
  const reading = store.commit(() => read());
  await expect(failing).rejects.toThrow("rolled back");
  expect(await reading).toBe("r1");
  expect(read()).toBe("r1");
  expect(await store.commit(() => read())).toBe("r1");
});

test("a value read outside while a write is unsettled is not served to a later transaction", async () => {
  await store.commit(() => write("u1"));
  expect(read()).toBe("u1");
  let later: Promise<string> | undefined;
  let outside: string | undefined;
  await store.commit(() => {
    write("u2");
    // Once the batch's callbacks are done, before it is reported committed: a read
    // outside the transaction sees "u1" (and keeps it), and the next transaction starts.
    queueMicrotask(() => {
      outside = read();
      later = store.commit(() => read());
    });
  });
  // Usually "u1" (the batch is not committed yet); "u2" if the commit was already readable, which is as right.
  expect(["u1", "u2"]).toContain(outside!);
  expect(await later!).toBe("u2");
  expect(read()).toBe("u2");
});

const channel = (id: number, extra: Partial<ChannelRecord> = {}) => ({ id, name: `settled ${id}`, invite_only: false, first_message_id: null, last_message_at: null, ...extra }) as unknown as ChannelRecord;

test("getChannelInTransaction follows putChannel: in its own transaction, later in the batch, and after a rollback", async () => {
  await store.commit(() => putChannel(store, channel(41)));
  expect(getChannel(store, 41)?.invite_only).toBe(false);
  // Cached outside, then the same record inside a transaction that wrote no channel.
  expect(await store.commit(() => getChannelInTransaction(store, 41))).toBe(getChannel(store, 41));
  const seen: (boolean | undefined)[] = [];
  await Promise.all([
    store.commitInfallible(() => seen.push(getChannelInTransaction(store, 41)?.invite_only)),
    store.commit(() => {
      putChannel(store, channel(41, { invite_only: true }));
      seen.push(getChannelInTransaction(store, 41)?.invite_only);
    }),
    store.commitInfallible(() => seen.push(getChannelInTransaction(store, 41)?.invite_only)),
  ]);
  expect(seen).toEqual([false, true, true]);
  expect(getChannel(store, 41)?.invite_only).toBe(true);
  await expect(
    store.commit(() => {
      putChannel(store, channel(41, { invite_only: false }));
      throw new Error("rolled back");
    }),
  ).rejects.toThrow("rolled back");
  expect(await store.commit(() => getChannelInTransaction(store, 41)?.invite_only)).toBe(true);
  expect(getChannel(store, 41)?.invite_only).toBe(true);
});
