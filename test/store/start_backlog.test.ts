/**
 * `hearth serve` ends its start with what the folder holds pending written at once
 * (src/server.ts `writeStartBacklog`, awaited by src/lib/startup_pages.ts `settleStart`),
 * a start being quiet, rather than after the job's quiet time; a job whose ticks are
 * held off (HEARTH_UNREAD_ROWS_INTERVAL_MS, for tests and benchmarks of pending rows)
 * keeps them pending.
 */
import { expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { expectSuccess, startTestServer, type TestServer } from "../kit";
import { searchWatermark } from "../../src/store/search_terms";
import { unreadWatermark } from "../../src/store/unread";

const unreadIds = async (s: TestServer, who: TestServer["users"]["hamlet"]): Promise<number[]> =>
  expectSuccess(await s.as(who).get("/messages", { anchor: "newest", num_before: 100, num_after: 0, narrow: [{ operator: "is", operand: "unread" }] })).messages.map((m: { id: number }) => m.id);

test("a start writes the folder's pending rows at once on the main thread, and a held-off job leaves them", async () => {
  const held = await startTestServer({ env: { HEARTH_UNREAD_ROWS_INTERVAL_MS: String(3600_000) } });
  const { hamlet, othello } = held.users;
  let newest = 0;
  let pendingUnread: number[][] = [];
  try {
    const channel = await held.createChannel("iago", "Backlog", ["hamlet", "othello"]);
    for (let i = 0; i < 3; i++) {
      newest = expectSuccess(await held.as("othello").post("/messages", { type: "stream", to: channel, topic: "t", content: `pending ${i}` })).id;
    }
    await held.server.writeStartBacklog();
    expect(unreadWatermark(held.server.h.store)).toBeLessThan(newest);
    expect(searchWatermark(held.server.h.store)).toBeLessThan(newest);
    // What the index of pending messages answers before the rows exist.
    pendingUnread = [await unreadIds(held, hamlet), await unreadIds(held, othello)];
    expect(pendingUnread[0]).toContain(newest);
  } finally {
    // The folder stays for the restart.
    await held.server.stop();
  }
  const restarted = await startTestServer({ dataDir: held.dataDir });
  try {
    await restarted.server.writeStartBacklog();
    const store = restarted.server.h.store;
    expect(unreadWatermark(store)).toBe(newest);
    expect(searchWatermark(store)).toBe(newest);
    // A small backlog: no worker thread started for it.
    expect(restarted.server.unreadRows.workerState()).toBe("none");
    // The rows written answer as the pending index did.
    expect([await unreadIds(restarted, hamlet), await unreadIds(restarted, othello)]).toEqual(pendingUnread);
  } finally {
    await restarted.stop();
    rmSync(held.dataDir, { recursive: true, force: true });
  }
});
