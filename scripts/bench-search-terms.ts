#!/usr/bin/env bun
/**
 * What writing search rows costs apart from the server (docs/benchmarks.md, "Search
 * terms off the send path"): on copies of bench-compare's 5,000-message folder (run
 * `bun scripts/bench-compare.ts . search` once to make it), the rows of the newest
 * 2,000 messages are removed and written again, as sends wrote them (each message's
 * rows in its own transaction callback, 10 per batched commit) and as the background
 * job writes them (writeSearchTermBatch). Prints the process's CPU per message.
 *
 *   bun scripts/bench-search-terms.ts [rounds]
 */
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../src/store/db";
import { searchWords, type MessageRecord } from "../src/store/messages";
import { SEARCH_WATERMARK, writeSearchTermBatch } from "../src/store/search_terms";

const source = join(tmpdir(), "hearth-bench-compare-messages");
if (!existsSync(source)) throw new Error(`${source} is missing: run bun scripts/bench-compare.ts . search once`);
const COUNT = 2000;
const rounds = Number(process.argv[2] ?? 2);
const words = (m: MessageRecord) => searchWords(`${m.content} ${m.topic}`);

for (let round = 0; round < rounds; round++) {
  for (const mode of ["as sends", "job"] as const) {
    const dir = mkdtempSync(join(tmpdir(), "hearth-bench-search-terms-"));
    cpSync(source, dir, { recursive: true });
    const store = new Store(dir);
    const last = store.lastId("message");
    const messages: MessageRecord[] = [];
    for (const { value } of store.dbs.messages.getRange({ start: last - COUNT + 1, end: last + 1 })) messages.push(value as MessageRecord);
    await store.commit(() => {
      for (const m of messages) for (const term of words(m)) store.dbs.searchTerms.remove([term, m.id]);
      store.dbs.meta.put(SEARCH_WATERMARK, last - COUNT);
    });
    const before = process.cpuUsage();
    if (mode === "job") {
      let done = 0;
      while (done < COUNT) done += await writeSearchTermBatch(store, 500, (fn) => store.commitOnThisThread(fn));
    } else {
      for (let i = 0; i < messages.length; i += 10) {
        await Promise.all(
          messages.slice(i, i + 10).map((m) => store.commitInfallible(() => {
            for (const term of words(m)) store.dbs.searchTerms.put([term, m.id], true);
          })),
        );
      }
    }
    const cpu = process.cpuUsage(before);
    console.log(JSON.stringify({ round, mode, cpuUsPerMessage: Math.round((cpu.user + cpu.system) / COUNT) }));
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
