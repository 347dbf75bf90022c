/**
 * Store.commit: a lone commit runs inline, commits that follow closely share
 * lmdb-js's batch; each resolves once durable, and a throw undoes that action's
 * writes alone either way.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../../src/store/db";

function withStore(run: (store: Store, dir: string) => Promise<void>) {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-commits-"));
    try {
      await run(new Store(dir), dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

test(
  "commits in quick succession all survive reopening",
  withStore(async (store, dir) => {
    await Promise.all([1, 2, 3].map((i) => store.commit(() => store.dbs.drafts.put([1, i], { text: `draft ${i}` }))));
    await store.close();
    const reopened = new Store(dir);
    for (const i of [1, 2, 3]) expect(reopened.dbs.drafts.get([1, i])).toEqual({ text: `draft ${i}` });
    await reopened.close();
  }),
);

/** A commit that writes ([group, 1]) and then throws, as an action whose check fails halfway. */
const commitThatThrowsAfterWriting = (store: Store, group: number) =>
  store.commit(() => {
    store.dbs.drafts.put([group, 1], { text: "first half" });
    throw new Error("check failed");
  });

test(
  "a batched commit that throws after writing leaves nothing behind, beside one that succeeds",
  withStore(async (store) => {
    // The first runs inline; the second, right after it, in lmdb-js's batch (a child transaction).
    const kept = store.commit(() => store.dbs.drafts.put([2, 2], { text: "kept" }));
    const failed = commitThatThrowsAfterWriting(store, 2);
    expect(store.inlineCommits).toBe(1);
    await expect(failed).rejects.toThrow("check failed");
    await kept;
    expect(store.dbs.drafts.get([2, 1])).toBeUndefined();
    expect(store.dbs.drafts.get([2, 2])).toEqual({ text: "kept" });
    await store.close();
  }),
);

test(
  "a lone commit is done inline; one right after it joins the batch; both survive reopening",
  withStore(async (store, dir) => {
    const lone = store.commit(() => store.dbs.drafts.put([1, 1], { text: "lone" }));
    expect(store.inlineCommits).toBe(1);
    // Within the spacing of the inline one: it goes to lmdb-js's write thread.
    const next = store.commit(() => store.dbs.drafts.put([1, 2], { text: "batched" }));
    expect(store.inlineCommits).toBe(1);
    await Promise.all([lone, next]);
    expect(store.dbs.drafts.get([1, 2])).toEqual({ text: "batched" });
    // Alone again once the spacing has passed.
    await Bun.sleep(20);
    await store.commit(() => store.dbs.drafts.put([1, 3], { text: "lone again" }));
    expect(store.inlineCommits).toBe(2);
    await store.close();
    const reopened = new Store(dir);
    expect(reopened.dbs.drafts.get([1, 1])).toEqual({ text: "lone" });
    expect(reopened.dbs.drafts.get([1, 2])).toEqual({ text: "batched" });
    expect(reopened.dbs.drafts.get([1, 3])).toEqual({ text: "lone again" });
    await reopened.close();
  }),
);

test(
  "a lone commit that throws after writing leaves nothing behind, and the next commit works",
  withStore(async (store) => {
    const failed = commitThatThrowsAfterWriting(store, 2);
    expect(store.inlineCommits).toBe(1);
    await expect(failed).rejects.toThrow("check failed");
    expect(store.dbs.drafts.get([2, 1])).toBeUndefined();
    await Bun.sleep(20);
    await store.commit(() => store.dbs.drafts.put([2, 2], { text: "kept" }));
    expect(store.inlineCommits).toBe(2);
    expect(store.dbs.drafts.get([2, 2])).toEqual({ text: "kept" });
    expect(store.dbs.drafts.get([2, 1])).toBeUndefined();
    await store.close();
  }),
);

test(
  "a callback ending in a write commits at once, inline or batched, and its hook sees the write's value, not a promise",
  withStore(async (store) => {
    const seen: unknown[] = [];
    const onCommitted = (result: unknown) => seen.push(result);
    // The first is lone (inline), the second follows at once (batched).
    await Promise.all([
      store.commit(() => store.dbs.drafts.put([3, 1], { text: "inline" }), { onCommitted }),
      store.commit(() => store.dbs.drafts.put([3, 2], { text: "batched" }), { onCommitted }),
    ]);
    expect(store.inlineCommits).toBe(1);
    expect(seen).toEqual([true, true]);
    await store.close();
  }),
);

test(
  "a callback that returns a pending promise is refused, and nothing it wrote stays",
  withStore(async (store) => {
    await expect(
      store.commit(() => {
        store.dbs.drafts.put([4, 1], { text: "half" });
        return new Promise((resolve) => setTimeout(resolve, 1));
      }),
    ).rejects.toThrow("must be synchronous");
    expect(store.dbs.drafts.get([4, 1])).toBeUndefined();
    await Bun.sleep(20);
    await store.commit(() => store.dbs.drafts.put([4, 2], { text: "kept" }));
    expect(store.dbs.drafts.get([4, 2])).toEqual({ text: "kept" });
    await store.close();
  }),
);

test("commits on the calling thread back to back, each ending in a write, leave the store closable", async () => {
  // In a child process: a store that fails this blocks its thread in LMDB for good.
  const dir = mkdtempSync(join(tmpdir(), "hearth-commits-"));
  try {
    const script = join(dir, "back-to-back.ts");
    const storeModule = JSON.stringify(join(import.meta.dir, "../../src/store/db.ts"));
    writeFileSync(
      script,
      `import { Store } from ${storeModule};
const store = new Store(${JSON.stringify(join(dir, "data"))});
for (let i = 0; i < 20; i++) store.commitOnThisThread(() => store.dbs.drafts.put([5, i], { n: i }));
await store.close();
console.log("closed");`,
    );
    const child = Bun.spawn([process.execPath, script], { stdout: "pipe", stderr: "pipe" });
    const timer = setTimeout(() => child.kill(9), 10_000);
    const [out, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
    clearTimeout(timer);
    expect({ out: out.trim(), code }).toEqual({ out: "closed", code: 0 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 20_000);

/** A worker thread with its own Store on the folder, taking turns with `store` (see test/fixtures/writer-turns-worker.ts). */
function turnsWorker(store: Store, dir: string) {
  const worker = new Worker(new URL("../fixtures/writer-turns-worker.ts", import.meta.url).href);
  const progress = new Int32Array(new SharedArrayBuffer(4));
  const committed = () => new Promise<void>((resolve) => worker.addEventListener("message", () => resolve(), { once: true }));
  const commit = (holdMs: number, key: number) => {
    Atomics.store(progress, 0, 0);
    const done = committed();
    worker.postMessage({ dataDir: dir, turns: store.writerTurnsMemory, progress: progress.buffer, holdMs, key });
    return done;
  };
  return { worker, progress, commit };
}

test(
  "while the worker thread commits, a lone commit goes to lmdb-js's write thread instead of waiting inline for the lock",
  withStore(async (store, dir) => {
    const { worker, progress, commit } = turnsWorker(store, dir);
    try {
      const workerDone = commit(300, 1);
      while (Atomics.load(progress, 0) !== 1) await Bun.sleep(1);
      const started = performance.now();
      const mine = store.commit(() => store.dbs.drafts.put([8, 1], { text: "from the main thread" }));
      // The main thread went on at once: the commit was handed over, not run inline.
      expect(performance.now() - started).toBeLessThan(100);
      expect(store.inlineCommits).toBe(0);
      await Promise.all([mine, workerDone]);
      expect(store.dbs.drafts.get([8, 1])).toEqual({ text: "from the main thread" });
      expect(store.dbs.drafts.get([9, 1])).toEqual({ text: "from the worker" });
      // Once the worker is done, lone commits run inline again.
      await Bun.sleep(20);
      await store.commit(() => store.dbs.drafts.put([8, 2], { text: "inline" }));
      expect(store.inlineCommits).toBe(1);
    } finally {
      worker.terminate();
      await store.close();
    }
  }),
);

test(
  "the worker thread waits while the main thread has its turn",
  withStore(async (store, dir) => {
    const { worker, progress, commit } = turnsWorker(store, dir);
    const turns = new Int32Array(store.writerTurnsMemory);
    try {
      // Open the worker's store first, so that waiting below is for the turn alone.
      await commit(0, 1);
      // The main thread's slot, set as an inline commit sets it.
      Atomics.store(turns, 0, 1);
      const workerDone = commit(0, 2);
      await Bun.sleep(100);
      expect(Atomics.load(progress, 0)).toBe(0);
      Atomics.store(turns, 0, 0);
      Atomics.notify(turns, 0);
      await workerDone;
      expect(store.dbs.drafts.get([9, 2])).toEqual({ text: "from the worker" });
    } finally {
      worker.terminate();
      await store.close();
    }
  }),
);
