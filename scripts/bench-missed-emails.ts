/**
 * What missed-message emails add to a send: the time of the decision the send path
 * makes for each message (src/actions/missed_message_emails.ts, missedMessageTriggers),
 * with a mail server configured, for a channel of many subscribers (all offline: the
 * worst case), per kind of message; then send throughput through the action layer
 * with and without a mail server.
 *
 *   bun scripts/bench-missed-emails.ts [subscribers=500] [sends=3000]
 *
 * Results: docs/benchmarks.md.
 */
import { rmSync } from "node:fs";
import { startTestServer, expectSuccess, type TestServer } from "../test/kit";
import { startSmtpServer } from "../test/kit/smtp";
import { checkSendMessage, resolveTarget } from "../src/actions/message_send";
import { missedMessageTriggers } from "../src/actions/missed_message_emails";
import { renderMessageContent } from "../src/actions/message_content";
import { mentionedGroupMembers } from "../src/actions/message_mentions";
import { MessageFlag } from "../src/store/messages";
import { getUser } from "../src/store/users";

const SUBSCRIBERS = Number(process.argv[2] ?? 500);
const SENDS = Number(process.argv[3] ?? 3000);

async function setUp(s: TestServer): Promise<number> {
  const ids = Object.values(s.users).map((u) => u.id);
  for (let i = 0; i < SUBSCRIBERS - ids.length; i++) ids.push((await s.createUser(`bench${i}`)).id);
  expectSuccess(await s.as("iago").post("/users/me/subscriptions", { subscriptions: [{ name: "big" }], principals: ids }));
  return expectSuccess(await s.as("iago").get("/get_stream_id", { stream: "big" })).stream_id;
}

async function sendThroughput(s: TestServer, channelId: number): Promise<number> {
  const h = s.server.h;
  const sender = getUser(h.store, s.users.othello.id)!;
  const started = performance.now();
  for (let i = 0; i < SENDS; i += 100) {
    const batch: Promise<unknown>[] = [];
    for (let j = 0; j < 100; j++) {
      const target = resolveTarget(h, sender, "channel", channelId, `topic ${(i + j) % 20}`);
      batch.push(checkSendMessage(h, sender, { target, content: `Message ${i + j}`, client: "bench", readBySender: true }));
    }
    await Promise.all(batch);
  }
  return SENDS / ((performance.now() - started) / 1000);
}

const smtp = await startSmtpServer();
const withMail = await startTestServer({ env: { HEARTH_SMTP_URL: smtp.url } });
const withoutMail = await startTestServer();
try {
  const channelId = await setUp(withMail);
  const plainChannel = await setUp(withoutMail);
  const h = withMail.server.h;
  const sender = getUser(h.store, withMail.users.othello.id)!;
  const cases: [string, string, "channel" | "dm"][] = [
    ["channel message, no mention", "Just chatting", "channel"],
    ["channel message, one mention", "@**King Hamlet** look", "channel"],
    ["channel message, @all", "@**all** meeting now", "channel"],
    ["direct message", "hello", "dm"],
  ];
  console.log(`missedMessageTriggers, ${SUBSCRIBERS} subscribers, all offline, mail server configured:`);
  for (const [label, content, kind] of cases) {
    const target = kind === "dm" ? resolveTarget(h, sender, "direct", [withMail.users.hamlet.id], undefined) : resolveTarget(h, sender, "channel", channelId, "walls");
    const rendered = renderMessageContent(h, sender, content);
    const groups = mentionedGroupMembers(h, rendered);
    const recipients = kind === "dm" ? (target as { userIds: number[] }).userIds : [...Array(SUBSCRIBERS).keys()].map((i) => i + 1);
    const flags = new Map<number, number>();
    for (const id of recipients) flags.set(id, rendered.mentionedUserIds.has(id) ? MessageFlag.mentioned : rendered.channelWildcard ? MessageFlag.stream_wildcard_mentioned : 0);
    let rows = 0;
    const runs = kind === "channel" && rendered.channelWildcard ? 200 : 5000;
    const t0 = performance.now();
    for (let r = 0; r < runs; r++) rows = missedMessageTriggers(h, sender, target, flags, rendered, groups, new Set()).size;
    const micro = ((performance.now() - t0) / runs) * 1000;
    console.log(`  ${label.padEnd(30)} ${micro.toFixed(1)} µs per send   (${rows} rows)`);
  }
  for (const [label, s, id] of [["without a mail server", withoutMail, plainChannel], ["with a mail server", withMail, channelId]] as const) {
    console.log(`send throughput, ${SUBSCRIBERS}-subscriber channel, no mentions, ${label}: ${Math.round(await sendThroughput(s, id))} messages/s`);
  }
} finally {
  await withMail.stop();
  await withoutMail.stop();
  await smtp.close();
  rmSync(withMail.dataDir, { recursive: true, force: true });
}
