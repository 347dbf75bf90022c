#!/usr/bin/env bun
/**
 * The pending unread index (src/store/unread.ts) of a checkout, in one process on a temp
 * store, for before/after comparisons of two checkouts run back to back:
 *
 *   bun scripts/bench-pending-unread.ts CHECKOUT [lists]
 *
 * Eight rounds of 400 channel messages to 100-user recipient lists (`lists` of them,
 * taken in turn; 2 by default), each message's sender with a flags row, then each
 * user's 50 newest unread IDs and newest message ID while all of them are still
 * pending (no background job runs). Prints the process's CPU per message inserted
 * (LMDB's commits included) and per user read.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const [rootArg, listsArg = "2"] = process.argv.slice(2);
if (!rootArg) throw new Error("usage: bun scripts/bench-pending-unread.ts CHECKOUT [lists]");
const root = resolve(rootArg);
const lists = Number(listsArg);
const { Store } = await import(join(root, "src/store/db.ts"));
const { insertMessage, newestMessageIdOf } = await import(join(root, "src/store/user_messages.ts"));
const { loadPendingUnreadIndex, unreadMessageIds } = await import(join(root, "src/store/unread.ts"));
const { messageRecord } = await import(join(root, "test/kit/records.ts"));
const { RecipientFlags } = await import(join(root, "src/store/recipient_flags.ts"));

const dir = mkdtempSync(join(tmpdir(), "hearth-bench-pending-unread-"));
const store = new Store(dir);
// As the server does at start: the index is built from committed data, then kept.
loadPendingUnreadIndex(store);
const users = Array.from({ length: 100 + lists }, (_, i) => i + 1);
// List k leaves out user k (of the first `lists`): all lists differ, each has 100 users.
const recipientLists = Array.from({ length: lists }, (_, k) => users.filter((u) => u !== k + 1).slice(0, 100));
const cpuMicros = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
let id = 0;
let insertUs = 0;
let readUs = 0;
let reads = 0;
for (let round = 0; round < 8; round++) {
  const commits: Promise<unknown>[] = [];
  const t0 = cpuMicros();
  for (let i = 0; i < 400; i++) {
    const list = recipientLists[id % lists];
    const m = messageRecord({ id: ++id, sender_id: list[id % list.length], type: "stream", channel_id: 1 + (id % lists), topic: "t", dm_user_ids: null, recipient_id: 1, content: "x", rendered_content: "<p>x</p>", timestamp: 1 });
    const flags = new RecipientFlags(list, 0).set(m.sender_id, 1);
    commits.push(store.commitInfallible(() => insertMessage(store, m, flags)));
  }
  await Promise.all(commits);
  insertUs += cpuMicros() - t0;
  const t1 = cpuMicros();
  for (const u of users) {
    let n = 0;
    for (const _ of unreadMessageIds(store, u, Number.MAX_SAFE_INTEGER, "older")) if (++n >= 50) break;
    newestMessageIdOf(store, u);
    reads++;
  }
  readUs += cpuMicros() - t1;
}
console.log(JSON.stringify({ root, lists, pending: id, insertUsPerMessage: Math.round(insertUs / id), readUsPerUserRead: Math.round(readUs / reads) }));
await store.close();
rmSync(dir, { recursive: true, force: true });
