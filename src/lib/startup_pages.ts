import { readFileSync } from "node:fs";
import { useNormalJitPolicy } from "./jit_policy";

/** The longest the start's reluctant JIT outlasts "listening" while its backlog is written. */
export const START_JIT_HOLD_MS = 1000;

/**
 * The end of `serve`'s start, once it listens: `backlog` is the unread-rows job's run of
 * what the folder holds pending (src/server.ts `writeStartBacklog`: a fresh folder's
 * welcome messages, messages sent just before a stop), started at once instead of after
 * the job's quiet time. A small backlog is written on the main thread and ends with a
 * full collection; so its decoded messages, the pages of the code that writes them and
 * the JIT's work on that run-once code do not stay in an idle server's memory:
 *
 * - the start's reluctant JIT (src/lib/jit_policy.ts) lasts until the backlog is written,
 *   at most START_JIT_HOLD_MS (a large backlog runs on the worker, which has its own
 *   policy, and the requests of a busy start must not wait longer for the JIT);
 * - the read-only pages are given back after it (`releaseStartupCodePages`) rather than
 *   before it, unless `keepPages`.
 *
 * Never fails: an error of the run is logged (the job's next tick retries). Resolves with
 * what `releaseStartupCodePages` gave back, in KiB.
 */
export async function settleStart(backlog: Promise<unknown>, keepPages: boolean): Promise<number> {
  const written = backlog.then(
    () => undefined,
    (error) => console.error("Writing the start's pending unread and search rows failed; the job retries:", error),
  );
  let hold: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([written, new Promise<void>((resolve) => (hold = setTimeout(resolve, START_JIT_HOLD_MS)))]);
  clearTimeout(hold);
  useNormalJitPolicy();
  await written;
  return keepPages ? 0 : releaseStartupCodePages();
}

/**
 * Gives back the executable's code and constant-data pages that only the start touched
 * (module loading, the bytecode loader, opening the store, building the app, writing the
 * folder's pending rows): `serve` calls this through `settleStart` once it listens. The
 * runtime's machine code and constant data are read-only mappings of the executable
 * file; every page the start used stays resident and counted in the process's RSS
 * although an idle server never runs it again. MADV_DONTNEED drops the process's
 * mappings of those pages; they stay in the page cache, and a page the server runs
 * again comes back with a minor fault (no disk read while the cache holds it): after
 * the first requests the resident code is what serving uses.
 *
 * Only mappings that are not writable and hold no private copy of a page (smaps
 * "Anonymous: 0 kB") are touched: dropping such a page can only ever be read back
 * from the file unchanged. Best effort: elsewhere than Linux with glibc it does
 * nothing. Returns the kibibytes of those mappings that were resident before.
 */
export function releaseStartupCodePages(): number {
  if (process.platform !== "linux") return 0;
  try {
    const mappings = readOnlyExecutableMappings();
    if (mappings.length === 0) return 0;
    const { dlopen, FFIType } = require("bun:ffi") as typeof import("bun:ffi");
    const libc = dlopen("libc.so.6", { madvise: { args: [FFIType.u64, FFIType.u64, FFIType.i32], returns: FFIType.i32 } });
    try {
      const MADV_DONTNEED = 4;
      let released = 0;
      for (const m of mappings) if (libc.symbols.madvise(m.start, m.end - m.start, MADV_DONTNEED) === 0) released += m.rssKib;
      return released;
    } finally {
      libc.close();
    }
  } catch {
    return 0;
  }
}

interface CodeMapping {
  start: bigint;
  end: bigint;
  rssKib: number;
}

/** The executable's read-only mappings (code, constant data) from /proc/self/smaps, each only if no page of it is a private copy. */
function readOnlyExecutableMappings(): CodeMapping[] {
  const found: CodeMapping[] = [];
  let current: (CodeMapping & { anonymousKib: number }) | null = null;
  const take = () => {
    if (current && current.anonymousKib === 0) found.push(current);
    current = null;
  };
  for (const line of readFileSync("/proc/self/smaps", "utf8").split("\n")) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (header) {
      take();
      if ((header[3] === "r-xp" || header[3] === "r--p") && header[4] === process.execPath) {
        current = { start: BigInt(`0x${header[1]}`), end: BigInt(`0x${header[2]}`), rssKib: 0, anonymousKib: -1 };
      }
      continue;
    }
    if (!current) continue;
    const field = /^(Rss|Anonymous):\s+(\d+) kB/.exec(line);
    if (field?.[1] === "Rss") current.rssKib = Number(field[2]);
    else if (field?.[1] === "Anonymous") current.anonymousKib = Number(field[2]);
  }
  take();
  return found;
}
