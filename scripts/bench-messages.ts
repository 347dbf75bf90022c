/**
 * Messages benchmark: loads messages across 100 channels through the action layer
 * (the same code path as POST /messages, durable commits), then measures
 * GET /messages over HTTP for three narrows — newest 50 in a topic, `is:unread`,
 * and a `search` word — and prints p50/p99 latencies and the send throughput.
 *
 *   bun scripts/bench-messages.ts [messages=200000] [queries=300]
 *
 * Bounded: a temp data folder, removed afterwards; loading stops at the count given.
 *
 * Results, with their dates and the code they measured: docs/benchmarks.md.
 */
import { rmSync } from "node:fs";
import { startTestServer, expectSuccess } from "../test/kit";
import { checkSendMessage, resolveTarget } from "../src/actions/message_send";
import { getUser } from "../src/store/users";
import { unreadWatermark } from "../src/store/unread";

const TOTAL = Number(process.argv[2] ?? 200_000);
const QUERIES = Number(process.argv[3] ?? 300);
const CHANNELS = 100;
const TOPICS_PER_CHANNEL = 20;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 1024);

const WORDS = "castle ghost king queen poison sword crown denmark player skull madness revenge night watch letter duel".split(" ");

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const s = await startTestServer();
const h = s.server.h;
try {
  const admin = s.as("iago");
  const members = Object.values(s.users).map((u) => u.id);
  const names = Array.from({ length: CHANNELS }, (_, i) => `bench-${i}`);
  for (let i = 0; i < names.length; i += 25) {
    expectSuccess(await admin.post("/users/me/subscriptions", { subscriptions: names.slice(i, i + 25).map((name) => ({ name })), principals: members }));
  }
  const channelIds: number[] = [];
  for (const name of names) channelIds.push(expectSuccess(await admin.get("/get_stream_id", { stream: name })).stream_id);
  const senders = Object.values(s.users).map((u) => getUser(h.store, u.id)!);

  // A rare word appears in about 1 message of 1000, so search returns a full page only deep in history.
  const RARE = "yorick";
  let sent = 0;
  const started = performance.now();
  let lastReport = started;
  while (sent < TOTAL) {
    const batch: Promise<unknown>[] = [];
    for (let j = 0; j < CONCURRENCY && sent < TOTAL; j++, sent++) {
      const sender = senders[sent % senders.length];
      const channelIndex = sent % CHANNELS;
      const topic = `topic ${Math.floor(sent / CHANNELS) % TOPICS_PER_CHANNEL}`;
      const words = [WORDS[sent % WORDS.length], WORDS[(sent * 7) % WORDS.length], WORDS[(sent * 13) % WORDS.length]];
      if (sent % 1000 === 0) words.push(RARE);
      const target = resolveTarget(h, sender, "channel", channelIds[channelIndex], topic);
      batch.push(checkSendMessage(h, sender, { target, content: `Message ${sent}: the ${words.join(" ")} **now**`, client: "bench", readBySender: true }));
    }
    await Promise.all(batch);
    if (performance.now() - lastReport > 10_000) {
      lastReport = performance.now();
      console.error(`  loaded ${sent} messages (${Math.round(sent / ((lastReport - started) / 1000))}/s)`);
    }
  }
  const loadSeconds = (performance.now() - started) / 1000;
  // Sends leave their recipients' "unread" rows to a background job (src/actions/unread_rows.ts);
  // the queries below run once it has caught up, and the time it took is reported.
  const backlog = h.store.dbs.messageRecipientLists.getKeysCount({ start: unreadWatermark(h.store) + 1 });
  const pendingTimes: number[] = [];
  for (let q = 0; q < 20; q++) {
    const t0 = performance.now();
    expectSuccess(await s.as("othello").get("/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow: [{ operator: "is", operand: "unread" }] }));
    pendingTimes.push(performance.now() - t0);
  }
  pendingTimes.sort((a, b) => a - b);
  const drainStarted = performance.now();
  await s.server.unreadRows.drain();
  const drainSeconds = (performance.now() - drainStarted) / 1000;

  const reader = s.as("othello");
  const narrows: [string, unknown][] = [
    ["newest 50 in a topic", [{ operator: "channel", operand: channelIds[42] }, { operator: "topic", operand: "topic 7" }]],
    ["is:unread (newest 50)", [{ operator: "is", operand: "unread" }]],
    ["search a word (newest 50)", [{ operator: "search", operand: RARE }]],
    ["search a common word (newest 50)", [{ operator: "search", operand: "ghost" }]],
  ];
  const results: string[] = [];
  for (const [label, narrow] of narrows) {
    const times: number[] = [];
    let count = 0;
    for (let q = 0; q < QUERIES; q++) {
      const t0 = performance.now();
      const body = expectSuccess(await reader.get("/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow }));
      times.push(performance.now() - t0);
      count = body.messages.length;
    }
    times.sort((a, b) => a - b);
    results.push(`${label.padEnd(34)} p50 ${percentile(times, 50).toFixed(2)} ms   p99 ${percentile(times, 99).toFixed(2)} ms   (${count} messages)`);
  }
  // Register with unread state: Zulip sends at most 50,000 unread message IDs.
  const registerTimes: number[] = [];
  for (let q = 0; q < 5; q++) {
    const t0 = performance.now();
    const state = expectSuccess(await reader.post("/register", { fetch_event_types: JSON.stringify(["message", "update_message_flags"]) }));
    registerTimes.push(performance.now() - t0);
    expectSuccess(await reader.delete("/events", { queue_id: state.queue_id }));
  }
  registerTimes.sort((a, b) => a - b);
  results.push(`${"POST /register (unread_msgs)".padEnd(34)} p50 ${percentile(registerTimes, 50).toFixed(2)} ms   (5 registers)`);
  console.log(`messages loaded: ${TOTAL} across ${CHANNELS} channels, ${members.length} subscribers each`);
  console.log(`send throughput (action layer, durable commits, ${CONCURRENCY} concurrent): ${Math.round(TOTAL / loadSeconds)} messages/s (${loadSeconds.toFixed(1)} s)`);
  console.log(`deferred unread rows: ${backlog} messages pending when the load ended (is:unread then: p50 ${percentile(pendingTimes, 50).toFixed(2)} ms); written in ${drainSeconds.toFixed(1)} s`);
  console.log(`GET /messages over HTTP, ${QUERIES} queries each:`);
  for (const line of results) console.log("  " + line);
} finally {
  await s.stop();
  rmSync(s.dataDir, { recursive: true, force: true });
}
