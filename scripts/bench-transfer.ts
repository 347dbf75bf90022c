/**
 * Zulip-format transfer benchmark: loads N channel and direct messages through the
 * action layer (the path of POST /messages), with reactions on some, then
 * runs `hearth export --format zulip` and `hearth import --format zulip` as
 * subprocesses (as users run them) and prints each one's wall time, rate and peak
 * RSS. Run it at two sizes to see whether memory grows with the message count.
 *
 *   bun scripts/bench-transfer.ts [messages=100000] [--keep-archive FILE] [--phases]
 *   bun scripts/bench-transfer.ts N --import-only FILE   (imports an archive of N messages kept before)
 *
 * `--keep-archive` copies the export it made to FILE, so that import changes can be
 * measured again without loading and exporting (`--import-only`). `--phases` has the
 * import print how long each of its phases took (HEARTH_TRANSFER_PHASES=1).
 *
 * Bounded: temp folders, removed afterwards. Results: docs/benchmarks.md.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { startTestServer, expectSuccess } from "../test/kit";
import { checkSendMessage, resolveTarget } from "../src/actions/message_send";
import { getUser } from "../src/store/users";

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args.splice(i, 2)[1];
};
const phases = args.includes("--phases") ? (args.splice(args.indexOf("--phases"), 1), true) : false;
const keepArchive = flag("--keep-archive");
const importOnly = flag("--import-only");
const TOTAL = Number(args[0] ?? 100_000);
const CHANNELS = 20;
const CONCURRENCY = 512;
const MAIN = join(import.meta.dir, "../src/main.ts");

/**
 * Peak memory of the subprocess, sampled from /proc every 50 ms: all of it (VmRSS)
 * and the anonymous part (RssAnon: the heap, what would grow with the data held),
 * apart from the store's file pages LMDB maps in as they are read or written.
 */
async function run(label: string, argv: string[]) {
  const t0 = performance.now();
  const env = { ...process.env, ...(phases ? { HEARTH_TRANSFER_PHASES: "1" } : {}) };
  const proc = Bun.spawn([process.execPath, MAIN, ...argv], { stdout: "pipe", stderr: "pipe", env });
  const peak = { rss: 0, anon: 0, file: 0 };
  const sample = setInterval(() => {
    try {
      const status = readFileSync(`/proc/${proc.pid}/status`, "utf8");
      const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0);
      peak.rss = Math.max(peak.rss, kib("VmRSS"));
      peak.anon = Math.max(peak.anon, kib("RssAnon"));
      peak.file = Math.max(peak.file, kib("RssFile"));
    } catch {
      // exited
    }
  }, 50);
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearInterval(sample);
  if (code !== 0) throw new Error(`${label} failed: ${out}${err}`);
  if (phases) process.stderr.write(err);
  const seconds = (performance.now() - t0) / 1000;
  const mib = (k: number) => (k / 1024).toFixed(0);
  console.log(`${label}: ${seconds.toFixed(1)} s, ${Math.round(TOTAL / seconds)} messages/s, peak RSS ${mib(peak.rss)} MiB (anonymous ${mib(peak.anon)} MiB, file ${mib(peak.file)} MiB); load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
}

if (importOnly) {
  const work = mkdtempSync(join(tmpdir(), "hearth-bench-transfer-"));
  try {
    await run(`import ${TOTAL}`, ["import", "--format", "zulip", "--from", importOnly, "--data", join(work, "imported")]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  process.exit(0);
}

const s = await startTestServer();
const h = s.server.h;
const work = mkdtempSync(join(tmpdir(), "hearth-bench-transfer-"));
try {
  const admin = s.as("iago");
  const members = Object.values(s.users).map((u) => u.id);
  const names = Array.from({ length: CHANNELS }, (_, i) => `bench-${i}`);
  expectSuccess(await admin.post("/users/me/subscriptions", { subscriptions: names.map((name) => ({ name })), principals: members }));
  const channelIds: number[] = [];
  for (const name of names) channelIds.push(expectSuccess(await admin.get("/get_stream_id", { stream: name })).stream_id);
  const senders = Object.values(s.users).map((u) => getUser(h.store, u.id)!);
  const started = performance.now();
  for (let sent = 0; sent < TOTAL; ) {
    const batch: Promise<unknown>[] = [];
    for (let j = 0; j < CONCURRENCY && sent < TOTAL; j++, sent++) {
      const sender = senders[sent % senders.length];
      const target =
        sent % 10 === 9
          ? resolveTarget(h, sender, "direct", [senders[(sent + 1) % senders.length].id], "")
          : resolveTarget(h, sender, "channel", channelIds[sent % CHANNELS], `topic ${sent % 50}`);
      batch.push(checkSendMessage(h, sender, { target, content: `Message ${sent}: the castle **ghost** walks at night`, client: "bench", readBySender: true }));
    }
    await Promise.all(batch);
  }
  console.error(`loaded ${TOTAL} messages in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const some = expectSuccess(await s.as("hamlet").get("/messages", { anchor: "newest", num_before: 200, num_after: 0 })).messages as { id: number }[];
  for (const m of some.slice(0, 100)) expectSuccess(await s.as("hamlet").post(`/messages/${m.id}/reactions`, { emoji_name: "tada" }));
  // The server stops; its data folder stays for the export (the kit's stop() would remove it).
  await s.server.stop();

  const archive = join(work, "export.tar.gz");
  await run(`export ${TOTAL}`, ["export", "--format", "zulip", "--data", s.dataDir, "--out", archive]);
  console.log(`  archive ${(statSync(archive).size / 2 ** 20).toFixed(1)} MiB`);
  if (keepArchive) copyFileSync(archive, keepArchive);
  await run(`import ${TOTAL}`, ["import", "--format", "zulip", "--from", archive, "--data", join(work, "imported")]);
} finally {
  rmSync(work, { recursive: true, force: true });
  rmSync(s.dataDir, { recursive: true, force: true });
}
