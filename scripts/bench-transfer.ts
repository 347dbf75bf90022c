/**
 * Zulip-format transfer benchmark: loads N channel and direct messages through the
 * action layer (the path of POST /messages), with reactions on some, then
 * runs `hearth export --format zulip` and `hearth import --format zulip` as
 * subprocesses (as users run them) and prints each one's wall time, rate and peak
 * RSS. Run it at two sizes to see whether memory grows with the message count.
 *
 *   bun scripts/bench-transfer.ts [messages=100000] [--keep-archive FILE] [--phases]
 *   bun scripts/bench-transfer.ts N --import-only FILE   (imports an archive of N messages kept before)
 *   bun scripts/bench-transfer.ts N --synthetic          (1,000,000 without sending each one)
 *
 * `--synthetic`: loading N messages through the action layer takes longer than the
 * transfers it measures (docs/benchmarks.md), so it loads 200, exports
 * them, and writes N messages into that export as Zulip's files (messages-NNNNNN.json,
 * 1,000 a file, the same channels, topics and text; the sender has read each, and the
 * other recipients too except for the newest 10 %), then measures the import of that
 * archive and the export of the imported data folder.
 *
 * `--keep-archive` copies the export it made to FILE, so that import changes can be
 * measured again without loading and exporting (`--import-only`). `--phases` has the
 * import print how long each of its phases took (HEARTH_TRANSFER_PHASES=1).
 *
 * Bounded: temp folders, removed afterwards. Results: docs/benchmarks.md.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { startTestServer, expectSuccess } from "../test/kit";
import { checkSendMessage, resolveTarget } from "../src/actions/message_send";
import { getUser } from "../src/store/users";
import { rssMiB } from "./bench-lib";

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args.splice(i, 2)[1];
};
const phases = args.includes("--phases") ? (args.splice(args.indexOf("--phases"), 1), true) : false;
const keepArchive = flag("--keep-archive");
const importOnly = flag("--import-only");
const synthetic = args.includes("--synthetic") ? (args.splice(args.indexOf("--synthetic"), 1), true) : false;
const TOTAL = Number(args[0] ?? 100_000);
const CHANNELS = 20;
const CONCURRENCY = 512;
const MAIN = join(import.meta.dir, "../src/main.ts");

/**
 * Peak memory of the subprocess, sampled from /proc every 50 ms: all of it (VmRSS)
 * and the anonymous part (RssAnon: the heap, what would grow with the data held),
 * apart from the store's file pages LMDB maps in as they are read or written.
 */
async function run(label: string, argv: string[], count = TOTAL) {
  const t0 = performance.now();
  const env = { ...process.env, ...(phases ? { HEARTH_TRANSFER_PHASES: "1" } : {}) };
  const proc = Bun.spawn([process.execPath, MAIN, ...argv], { stdout: "pipe", stderr: "pipe", env });
  const peak = { rss: 0, anon: 0, file: 0 };
  const sample = setInterval(() => {
    try {
      const now = rssMiB(proc.pid);
      peak.rss = Math.max(peak.rss, now.total);
      peak.anon = Math.max(peak.anon, now.anon);
      peak.file = Math.max(peak.file, now.file);
    } catch {
      // exited
    }
  }, 50);
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearInterval(sample);
  if (code !== 0) throw new Error(`${label} failed: ${out}${err}`);
  if (phases) process.stderr.write(err);
  const seconds = (performance.now() - t0) / 1000;
  const mib = (m: number) => m.toFixed(0);
  console.log(`${label}: ${seconds.toFixed(1)} s, ${Math.round(count / seconds)} messages/s, peak RSS ${mib(peak.rss)} MiB (anonymous ${mib(peak.anon)} MiB, file ${mib(peak.file)} MiB); load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
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
  const LOAD = synthetic ? 200 : TOTAL;
  for (let sent = 0; sent < LOAD; ) {
    const batch: Promise<unknown>[] = [];
    for (let j = 0; j < CONCURRENCY && sent < LOAD; j++, sent++) {
      const sender = senders[sent % senders.length];
      const target =
        sent % 10 === 9
          ? resolveTarget(h, sender, "direct", [senders[(sent + 1) % senders.length].id], "")
          : resolveTarget(h, sender, "channel", channelIds[sent % CHANNELS], `topic ${sent % 50}`);
      batch.push(checkSendMessage(h, sender, { target, content: `Message ${sent}: the castle **ghost** walks at night`, client: "bench", readBySender: true }));
    }
    await Promise.all(batch);
  }
  console.error(`loaded ${LOAD} messages in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const some = expectSuccess(await s.as("hamlet").get("/messages", { anchor: "newest", num_before: 200, num_after: 0 })).messages as { id: number }[];
  for (const m of some.slice(0, 100)) expectSuccess(await s.as("hamlet").post(`/messages/${m.id}/reactions`, { emoji_name: "tada" }));
  // The server stops; its data folder stays for the export (the kit's stop() would remove it).
  await s.server.stop();

  const archive = join(work, "export.tar.gz");
  if (synthetic) {
    await run(`export ${LOAD}`, ["export", "--format", "zulip", "--data", s.dataDir, "--out", archive], LOAD);
    await writeSyntheticExport(archive, join(work, "synthetic"));
    console.log(`  synthetic archive ${(statSync(archive).size / 2 ** 20).toFixed(1)} MiB`);
    if (keepArchive) copyFileSync(archive, keepArchive);
    const imported = join(work, "imported");
    await run(`import ${TOTAL}`, ["import", "--format", "zulip", "--from", archive, "--data", imported]);
    await run(`export ${TOTAL} (of the imported folder)`, ["export", "--format", "zulip", "--data", imported, "--out", join(work, "again.tar.gz")]);
    console.log(`  data folder ${(statSync(join(imported, "db", "data.mdb")).size / 2 ** 20).toFixed(0)} MiB; archive ${(statSync(join(work, "again.tar.gz")).size / 2 ** 20).toFixed(1)} MiB`);
  } else {
    await run(`export ${TOTAL}`, ["export", "--format", "zulip", "--data", s.dataDir, "--out", archive]);
    console.log(`  archive ${(statSync(archive).size / 2 ** 20).toFixed(1)} MiB`);
    if (keepArchive) copyFileSync(archive, keepArchive);
    await run(`import ${TOTAL}`, ["import", "--format", "zulip", "--from", archive, "--data", join(work, "imported")]);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
  rmSync(s.dataDir, { recursive: true, force: true });
}

/** The export in `archive` with its messages replaced by TOTAL synthetic ones (see the top), packed again in place. */
async function writeSyntheticExport(archive: string, dir: string) {
  const t0 = performance.now();
  mkdirSync(dir);
  await Bun.$`tar -xzf ${archive} -C ${dir}`;
  const root = join(dir, readdirSync(dir)[0]);
  for (const name of readdirSync(root)) if (/^messages-\d+\.json$/.test(name)) rmSync(join(root, name));
  const realm = JSON.parse(readFileSync(join(root, "realm.json"), "utf8"));
  realm.zerver_reaction = [];
  writeFileSync(join(root, "realm.json"), JSON.stringify(realm));
  const humans = (realm.zerver_userprofile as any[]).filter((u) => !u.is_bot).map((u) => u.id as number);
  const streamRecipients = (realm.zerver_recipient as any[]).filter((r) => r.type === 2).map((r) => r.id as number);
  const personal = new Map((realm.zerver_recipient as any[]).filter((r) => r.type === 1).map((r) => [r.type_id as number, r.id as number]));
  const subscribers = new Map<number, number[]>();
  for (const sub of realm.zerver_subscription as any[]) {
    if (sub.active === false || !humans.includes(sub.user_profile)) continue;
    subscribers.set(sub.recipient, [...(subscribers.get(sub.recipient) ?? []), sub.user_profile]);
  }
  const channels = streamRecipients.filter((r) => (subscribers.get(r)?.length ?? 0) >= 2);
  const unreadFrom = Math.floor(TOTAL * 0.9);
  let userMessageId = 0;
  for (let file = 1, i = 0; i < TOTAL; file++) {
    const zerver_message: object[] = [];
    const zerver_usermessage: object[] = [];
    for (; i < TOTAL && zerver_message.length < 1000; i++) {
      const id = i + 1;
      const sender = humans[i % humans.length];
      const dm = i % 10 === 9;
      const other = humans[(i + 1) % humans.length];
      const recipient = dm ? personal.get(other)! : channels[i % channels.length];
      zerver_message.push({
        id, sender, recipient, realm: 1, sending_client: 1,
        subject: dm ? "" : `topic ${i % 50}`,
        content: `Message ${i}: the castle **ghost** walks at night`,
        rendered_content: `<p>Message ${i}: the castle <strong>ghost</strong> walks at night</p>`,
        rendered_content_version: 1, date_sent: 1_700_000_000 + i, last_edit_time: null, edit_history: null,
        has_attachment: false, has_image: false, has_link: false, is_channel_message: !dm, type: 1,
      });
      const holders = dm ? [...new Set([sender, other])] : subscribers.get(recipient)!;
      for (const user of holders) {
        const read = user === sender || i < unreadFrom;
        zerver_usermessage.push({ id: ++userMessageId, user_profile: user, message: id, flags_mask: (read ? 1 : 0) | (dm ? 2048 : 0) });
      }
    }
    writeFileSync(join(root, `messages-${String(file).padStart(6, "0")}.json`), JSON.stringify({ zerver_message, zerver_usermessage }));
  }
  rmSync(archive);
  await Bun.$`tar -czf ${archive} -C ${dir} ${basename(root)}`;
  rmSync(dir, { recursive: true, force: true });
  console.error(`wrote ${TOTAL} synthetic messages in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
