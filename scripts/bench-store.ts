/**
 * Where a store's bytes go: for each key space its entries and pages (branch, leaf and
 * overflow pages × the page size), per stored message; the data file's size against
 * its live data, and LMDB's free pages (pages freed by earlier transactions, reused
 * once no reader's snapshot still needs them). Read from a stopped store (or beside a
 * running one: it opens the environment read-only in this process).
 */
import { open } from "lmdb";
import { statSync } from "node:fs";
import { join } from "node:path";
import { KEYSPACES } from "../src/store/keyspaces";

type DbStats = { pageSize: number; treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number; entryCount: number };
type EnvStats = DbStats & { lastPageNumber: number; root: DbStats; free: DbStats };

export interface StoreBytes {
  messages: number;
  pageSize: number;
  fileBytes: number;
  liveBytes: number;
  freePages: number;
  keyspaces: { name: string; entries: number; pages: number; bytes: number }[];
}

export function keyspaceStats(dataDir: string): StoreBytes {
  const path = join(dataDir, "db");
  const root = open({ path, maxDbs: 64, readOnly: true });
  try {
    const env = root.getStats() as EnvStats;
    const pagesOf = (s: DbStats) => s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages;
    const keyspaces = Object.values(KEYSPACES).map((name) => {
      const s = root.openDB(name, {}).getStats() as DbStats;
      return { name, entries: s.entryCount, pages: pagesOf(s), bytes: pagesOf(s) * env.pageSize };
    });
    const livePages = keyspaces.reduce((n, k) => n + k.pages, 0) + pagesOf(env.root);
    // The file's pages: two meta pages, the live trees, the free list's own tree, and the free pages.
    const freePages = Math.max(0, env.lastPageNumber + 1 - 2 - livePages - pagesOf(env.free));
    return {
      messages: keyspaces.find((k) => k.name === KEYSPACES.messages)!.entries,
      pageSize: env.pageSize,
      fileBytes: statSync(join(path, "data.mdb")).size,
      liveBytes: livePages * env.pageSize,
      freePages,
      keyspaces: keyspaces.sort((a, b) => b.bytes - a.bytes),
    };
  } finally {
    root.close();
  }
}

export function printKeyspaceStats(s: StoreBytes): void {
  const perMessage = (bytes: number) => (s.messages ? (bytes / s.messages).toFixed(0) : "-");
  console.log(`${s.messages} messages; data file ${(s.fileBytes / 2 ** 20).toFixed(1)} MiB = ${perMessage(s.fileBytes)} B/message; live data ${(s.liveBytes / 2 ** 20).toFixed(1)} MiB = ${perMessage(s.liveBytes)} B/message; free pages ${s.freePages} (${((s.freePages * s.pageSize) / 2 ** 20).toFixed(1)} MiB)`);
  console.log("\n| key space | entries | entries/message | pages | bytes/message |\n|---|---|---|---|---|");
  for (const k of s.keyspaces) {
    if (k.pages === 0) continue;
    console.log(`| ${k.name} | ${k.entries} | ${s.messages ? (k.entries / s.messages).toFixed(2) : "-"} | ${k.pages} | ${perMessage(k.bytes)} |`);
  }
}
