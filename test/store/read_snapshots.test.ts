/**
 * Range scans that stop early (a page of messages, the newest ID for register's
 * max_message_id) must end their lmdb-js iterators: one left open keeps its read
 * transaction, so the reader table fills (MDB_READERS_FULL stops every read) and
 * LMDB cannot reuse the pages freed after that snapshot (the data file grows with
 * every write instead of staying near the data it holds).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expectSuccess, startTestServer, type TestServer } from "../kit";

let s: TestServer;
let channel: number;

beforeAll(async () => {
  // The unread-rows job waits: its worker's own read transaction is not what is measured.
  s = await startTestServer({ env: { HEARTH_UNREAD_ROWS_INTERVAL_MS: String(3600_000) } });
  channel = await s.createChannel("iago", "Snapshots", ["hamlet", "othello"]);
});
afterAll(() => s.stop());

/** Read transactions open now in this environment (readerList lists every slot; idle ones show txnid "-"). */
function activeReaders(): number {
  const list = (s.server.h.store.root as unknown as { readerList(): string }).readerList();
  return list.split("\n").filter((line) => /^\s*\d+\s+\S+\s+\d+\s*$/.test(line)).length;
}

const dataFileSize = () => statSync(join(s.dataDir, "db", "data.mdb")).size;

/** The size of a compacted copy: the pages the data needs. */
async function liveDataSize(): Promise<number> {
  const copy = mkdtempSync(join(tmpdir(), "hearth-compact-"));
  try {
    await (s.server.h.store.root as unknown as { backup(path: string, compact: boolean): Promise<void> }).backup(copy, true);
    return statSync(join(copy, "data.mdb")).size;
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

test("thousands of mixed requests leave no read transaction open and the data file near its live size", async () => {
  const hamlet = s.as("hamlet");
  const othello = s.as("othello");
  let maxReaders = 0;
  let previous: number[] = [];
  for (let i = 0; i < 600; i++) {
    const id = expectSuccess(await hamlet.post("/messages", { type: "stream", to: channel, topic: `t${i % 7}`, content: `message ${i} ${"words ".repeat(40)}` })).id as number;
    previous.push(id);
    // Reads that stop early: a page of the combined feed, of a channel, of a search, of unread messages.
    expectSuccess(await othello.get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow: "[]" }));
    expectSuccess(await othello.get("/messages", { anchor: "newest", num_before: 3, num_after: 0, narrow: JSON.stringify([{ operator: "is", operand: "unread" }]) }));
    if (i % 3 === 0) expectSuccess(await othello.get("/messages", { anchor: "newest", num_before: 2, num_after: 0, narrow: JSON.stringify([{ operator: "search", operand: "word" }]) }));
    // max_message_id: the newest of the user's messages.
    if (i % 5 === 0) expectSuccess(await othello.post("/register", { event_types: JSON.stringify(["message"]) }));
    // Writes that free pages: flags changing back and forth, messages deleted.
    if (i % 4 === 0) expectSuccess(await othello.post("/messages/flags", { messages: JSON.stringify(previous), op: "add", flag: "read" }));
    if (i % 4 === 2) expectSuccess(await othello.post("/messages/flags", { messages: JSON.stringify(previous), op: "remove", flag: "read" }));
    if (previous.length >= 8) {
      expectSuccess(await s.as("iago").delete(`/messages/${previous.shift()}`));
      previous = previous.slice(-8);
    }
    maxReaders = Math.max(maxReaders, activeReaders());
  }
  const live = await liveDataSize();
  const size = dataFileSize();
  console.log(`data file ${size} bytes, live data ${live} bytes, readers at most ${maxReaders}`);
  // The main thread's shared read transaction, and a write batch's.
  expect(maxReaders).toBeLessThanOrEqual(3);
  expect(size).toBeLessThan(live * 4);
}, 300_000);
