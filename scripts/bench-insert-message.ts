#!/usr/bin/env bun
/**
 * The store's write of a channel message alone (insertMessage: the message, its
 * indexes, its recipient list), for before/after comparisons of two checkouts run back
 * to back:
 *
 *   bun scripts/bench-insert-message.ts CHECKOUT [subscribers=100]
 *
 * Sends to one channel whose subscriber list is the same array each time (as the
 * channel's cached list is), 50 concurrent commits at a time as the server's group
 * commit gathers them. Times only the synchronous insertMessage call inside each
 * transaction; prints per-round averages (50 messages a round, 200 rounds after 10 to
 * warm up): the minimum, first quartile and median, in µs per message. On a busy
 * machine the minimum and quartile move least.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const [checkout, subscribersArg = "100"] = process.argv.slice(2);
if (!checkout) throw new Error("usage: bun scripts/bench-insert-message.ts CHECKOUT [subscribers]");
const root = resolve(checkout);
const { Store } = await import(join(root, "src/store/db.ts"));
const { insertMessage } = await import(join(root, "src/store/user_messages.ts"));
const { RecipientFlags } = await import(join(root, "src/store/recipient_flags.ts"));
const { loadPendingUnreadIndex } = await import(join(root, "src/store/unread.ts"));

const dir = mkdtempSync(join(tmpdir(), "hearth-bench-insert-"));
const store = new Store(dir);
// As the server does at start: the pending unread index built from committed data.
loadPendingUnreadIndex(store);
const list = Array.from({ length: Number(subscribersArg) }, (_, i) => i + 1);
const WARMUP = 10;
const ROUNDS = 200;
const PER_ROUND = 50;
const message = (id: number) => ({
  id, sender_id: 1, type: "stream", channel_id: 5, topic: `t${id % 20}`, dm_user_ids: null, recipient_id: 9,
  content: `m ${id}`, rendered_content: `<p>m ${id}</p>`, timestamp: 1, reactions: [], edit_history: [],
  last_edit_timestamp: null, sending_client: "bench", has_attachment: false, has_image: false, has_link: false, is_me_message: false,
});
let id = 0;
const rounds: number[] = [];
for (let round = 0; round < WARMUP + ROUNDS; round++) {
  let spent = 0;
  const commits: Promise<unknown>[] = [];
  for (let k = 0; k < PER_ROUND; k++) {
    const m = message(++id);
    commits.push(
      store.commit(() => {
        // The sender's own message is read; everyone else's flags are 0.
        const flags = new RecipientFlags(list, 0);
        flags.set(1, 1);
        const t = performance.now();
        insertMessage(store, m, flags);
        spent += performance.now() - t;
      }),
    );
  }
  await Promise.all(commits);
  if (round >= WARMUP) rounds.push((spent * 1000) / PER_ROUND);
}
rounds.sort((a, b) => a - b);
const at = (q: number) => +rounds[Math.floor(rounds.length * q)].toFixed(1);
console.log(JSON.stringify({ checkout: root, subscribers: list.length, insertMessageUs: { min: at(0), p25: at(0.25), median: at(0.5) } }));
await store.close();
rmSync(dir, { recursive: true, force: true });
