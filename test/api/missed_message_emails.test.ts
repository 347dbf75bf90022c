import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { expectSuccess, startTestServer, type TestServer } from "../kit";
import { captureEvents, register } from "../kit/events";
import { startSmtpServer, type SmtpTestServer } from "../kit/smtp";
import { pendingMissedMessageCount } from "../../src/store/account_emails";
import { sendDueMissedMessageEmails } from "../../src/actions/missed_message_emails";

/**
 * Missed-message emails end to end: a real SMTP server on loopback receives what the
 * outbox worker sends. A user with no event queue is offline (as Zulip's Tornado
 * decides); the batching period is the user's own setting, 1 second here (Zulip
 * accepts any positive number of seconds). Where a test needs "the period passed"
 * without waiting, it runs the job's step with a later clock.
 */

let s: TestServer;
let smtp: SmtpTestServer;

beforeAll(async () => {
  smtp = await startSmtpServer();
  s = await startTestServer({ env: { HEARTH_SMTP_URL: smtp.url } });
});
afterAll(async () => {
  await s.stop();
  await smtp.close();
});

const HOUR = 3600_000;
const pending = () => pendingMissedMessageCount(s.server.h.store);
const linksIn = (text: string) => [...text.matchAll(/https?:\/\/\S+/g)].map((m) => m[0].replace(/[).,]+$/, ""));

describe("missed-message emails", () => {
  test("a DM to an offline user sends one email, once, with links and an unsubscribe link that works without login", async () => {
    const hamlet = s.users.hamlet;
    expectSuccess(await s.as("hamlet").patch("/settings", { email_notifications_batching_period_seconds: 3600 }));
    const first = expectSuccess(await s.as("othello").post("/messages", { type: "direct", to: [hamlet.id], content: "Are you there, <b>my lord</b>?" })).id;
    const second = expectSuccess(await s.as("othello").post("/messages", { type: "direct", to: [hamlet.id], content: "Second thought." })).id;
    expect(pending()).toBe(2);
    // Not due yet: nothing goes.
    expect(await sendDueMissedMessageEmails(s.server.h)).toBe(0);
    // Once the period passed: one email for the conversation.
    expect(await sendDueMissedMessageEmails(s.server.h, Date.now() + 2 * HOUR)).toBe(1);
    const [mail] = await smtp.mailTo(hamlet.email, 1);
    expect(mail.parsed.subject).toBe("DMs with Othello, the Moor of Venice");
    expect(mail.header("auto-submitted")).toBe("auto-generated");
    const text = mail.parsed.text!;
    expect(text).toContain("> Are you there, <b>my lord</b>?");
    expect(text).toContain("> Second thought.");
    // The HTML is built from escaped text: what the sender typed is not markup.
    expect(mail.parsed.html).toContain("&lt;b&gt;my lord&lt;/b&gt;");
    expect(mail.parsed.html).not.toContain("<b>my lord</b>");
    const links = linksIn(text);
    expect(links).toContain(`${s.url}/#narrow/dm/${[s.users.othello.id, hamlet.id].sort((a, b) => a - b).join(",")}/near/${first}`);
    expect(links.some((l) => l.endsWith(`/near/${second}`))).toBe(true);
    expect(pending()).toBe(0);

    // Once: a later DM makes a second email holding only itself, sent by the
    // background job when the user's 1-second period passed.
    expectSuccess(await s.as("hamlet").patch("/settings", { email_notifications_batching_period_seconds: 1 }));
    const third = expectSuccess(await s.as("othello").post("/messages", { type: "direct", to: [hamlet.id], content: "Third." })).id;
    const mails = await smtp.mailTo(hamlet.email, 2);
    expect(mails[1].parsed.text).toContain("> Third.");
    expect(mails[1].parsed.text).not.toContain("Second thought.");
    expect(linksIn(mails[1].parsed.text!).some((l) => l.endsWith(`/near/${third}`))).toBe(true);

    // The unsubscribe link: its page asks, its button turns the setting off, with the settings event.
    const unsubscribe = links.find((l) => l.includes("/accounts/unsubscribe/missed_messages/"))!;
    expect(mail.raw.replace(/\r?\n[ \t]+/g, " ")).toContain(`List-Unsubscribe: <${unsubscribe}>`);
    const shown = await fetch(unsubscribe);
    expect(shown.status).toBe(200);
    expect(shown.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(await shown.text()).toContain("<form method=\"post\">");
    const events = await captureEvents(s, ["hamlet", "othello"], { event_types: ["user_settings"] });
    const done = await fetch(unsubscribe, { method: "POST" });
    expect(done.status).toBe(200);
    const got = await events.collect();
    expect(got.hamlet.map((e) => [e.type, e.op, e.property, e.value])).toEqual([["user_settings", "update", "enable_offline_email_notifications", false]]);
    expect(got.othello).toEqual([]);
    const state = await register(s.as("hamlet"), { event_types: ["user_settings"] });
    expect(state.user_settings.enable_offline_email_notifications).toBe(false);

    // Setting off: no row at all, so nothing can be sent later.
    expectSuccess(await s.as("othello").post("/messages", { type: "direct", to: [hamlet.id], content: "Anyone?" }));
    expect(pending()).toBe(0);
    expect(await sendDueMissedMessageEmails(s.server.h, Date.now() + 2 * HOUR)).toBe(0);
    // A forged or altered link is refused.
    expect((await fetch(unsubscribe.slice(0, -3) + "AAA", { method: "POST" })).status).toBe(404);
    expectSuccess(await s.as("hamlet").patch("/settings", { enable_offline_email_notifications: true }));
  });

  test("a DM read within the batching period sends nothing", async () => {
    const cordelia = s.users.cordelia;
    expectSuccess(await s.as("cordelia").patch("/settings", { email_notifications_batching_period_seconds: 3600 }));
    const id = expectSuccess(await s.as("othello").post("/messages", { type: "direct", to: [cordelia.id], content: "Read me soon" })).id;
    expect(pending()).toBe(1);
    expectSuccess(await s.as("cordelia").post("/messages/flags", { messages: [id], op: "add", flag: "read" }));
    // The period passes: the batch is taken and, every message in it being read, sends nothing.
    expect(await sendDueMissedMessageEmails(s.server.h, Date.now() + 2 * HOUR)).toBe(0);
    expect(pending()).toBe(0);
    expect(smtp.mailsTo(cordelia.email)).toEqual([]);
  });

  test("online users (an event queue and active presence) get no row; mentions and followed topics do, plain messages do not", async () => {
    const shiva = s.users.shiva;
    await s.createChannel("iago", "castle", ["shiva", "hamlet", "othello"]);
    // Notification Bot's DMs about the new subscriptions wait for their batch too: sent first, out of the way.
    await sendDueMissedMessageEmails(s.server.h, Date.now() + 2 * HOUR);
    expect(pending()).toBe(0);
    // Shiva online: a queue receiving messages and a client reporting activity.
    const state = await register(s.as("shiva"), { event_types: ["message"] });
    expectSuccess(await s.as("shiva").post("/users/me/presence", { status: "active" }));
    expectSuccess(await s.as("othello").post("/messages", { type: "direct", to: [shiva.id], content: "hi" }));
    expect(pending()).toBe(0);
    expectSuccess(await s.as("shiva").delete("/events", { queue_id: state.queue_id }));

    expectSuccess(await s.as("othello").post("/messages", { type: "stream", to: "castle", topic: "walls", content: "Just chatting" }));
    expect(pending()).toBe(0);
    expectSuccess(await s.as("othello").post("/messages", { type: "stream", to: "castle", topic: "walls", content: "@**Shiva** look" }));
    expect(pending()).toBe(1);
    expectSuccess(await s.as("hamlet").post("/user_topics", { stream_id: (await s.as("hamlet").get("/get_stream_id", { stream: "castle" })).body.stream_id, topic: "walls", visibility_policy: 3 }));
    expectSuccess(await s.as("hamlet").patch("/settings", { email_notifications_batching_period_seconds: 3600 }));
    expectSuccess(await s.as("othello").post("/messages", { type: "stream", to: "castle", topic: "walls", content: "For the followers" }));
    // Hamlet follows the topic; so does Shiva now, as Zulip's automatically_follow_topics_where_mentioned made it.
    expect(pending()).toBe(3);
    expect(await sendDueMissedMessageEmails(s.server.h, Date.now() + 2 * HOUR)).toBe(2);
    const toShiva = await smtp.mailWith(shiva.email, (m) => m.parsed.subject === "#castle > walls");
    expect(toShiva.parsed.text).toContain("> @**Shiva** look");
    expect(toShiva.parsed.text).toContain("> For the followers");
    const toHamlet = await smtp.mailWith(s.users.hamlet.email, (m) => m.parsed.subject === "#castle > walls");
    expect(toHamlet.parsed.text).toContain("> For the followers");
    expect(toHamlet.parsed.text).not.toContain("@**Shiva** look");
  });

  test("a queue that expires unpolled: the messages it held make their rows then (Zulip's missedmessage_hook)", async () => {
    const iago = s.users.iago;
    const state = await register(s.as("iago"), { event_types: ["message"] });
    expectSuccess(await s.as("iago").post("/users/me/presence", { status: "active" }));
    const id = expectSuccess(await s.as("othello").post("/messages", { type: "direct", to: [iago.id], content: "While you were here" })).id;
    // Online when it arrived: no row.
    expect(pending()).toBe(0);
    // The client goes away; its queue is collected once idle (an hour on, as far as the collector knows).
    expect(s.server.h.queues.collectIdle(Date.now() + 2 * HOUR)).toBeGreaterThan(0);
    for (let i = 0; i < 100 && pending() === 0; i++) await Bun.sleep(20);
    expect(pending()).toBe(1);
    expect(await sendDueMissedMessageEmails(s.server.h, Date.now() + 2 * HOUR)).toBe(1);
    const [mail] = await smtp.mailTo(iago.email, 1);
    expect(mail.parsed.text).toContain(`/near/${id}`);
    expect((await s.as("iago").get("/events", { queue_id: state.queue_id, last_event_id: -1, dont_block: true })).body.code).toBe("BAD_EVENT_QUEUE_ID");
  });

  test("the organization's message_content_allowed_in_email_notifications keeps content out", async () => {
    const polonius = s.users.polonius;
    expectSuccess(await s.as("desdemona").patch("/realm", { message_content_allowed_in_email_notifications: false }));
    expectSuccess(await s.as("othello").post("/messages", { type: "direct", to: [polonius.id], content: "Secret plans" }));
    expect(await sendDueMissedMessageEmails(s.server.h, Date.now() + 2 * HOUR)).toBe(1);
    const [mail] = await smtp.mailTo(polonius.email, 1);
    expect(mail.parsed.text).not.toContain("Secret plans");
    expect(mail.parsed.text).toContain("You have 1 new message from Othello, the Moor of Venice");
    expectSuccess(await s.as("desdemona").patch("/realm", { message_content_allowed_in_email_notifications: true }));
  });

  test("the batching period follows Zulip's bounds", async () => {
    for (const value of [0, -1, 7 * 24 * 3600 + 1]) {
      const res = await s.as("hamlet").patch("/settings", { email_notifications_batching_period_seconds: value });
      expect(res.status).toBe(400);
      expect(res.body.msg).toBe(`Invalid email batching period: ${value} seconds`);
    }
  });
});

describe("pending missed-message emails are durable", () => {
  test("a batch recorded before a restart is sent after it", async () => {
    const polonius = s.users.polonius;
    expectSuccess(await s.as("polonius").patch("/settings", { email_notifications_batching_period_seconds: 3600 }));
    expectSuccess(await s.as("othello").post("/messages", { type: "direct", to: [polonius.id], content: "Before the restart" }));
    expect(pending()).toBe(1);
    const dataDir = s.dataDir;
    // Stopped without removing the data folder, then started again on it.
    await s.server.stop();
    const restarted = await startTestServer({ dataDir, env: { HEARTH_SMTP_URL: smtp.url } });
    const before = smtp.mailsTo(polonius.email).length;
    try {
      expect(pendingMissedMessageCount(restarted.server.h.store)).toBe(1);
      expect(await sendDueMissedMessageEmails(restarted.server.h, Date.now() + 2 * HOUR)).toBe(1);
      const mails = await smtp.mailTo(polonius.email, before + 1);
      expect(mails.at(-1)!.parsed.text).toContain("> Before the restart");
    } finally {
      await restarted.stop();
      rmSync(dataDir, { recursive: true, force: true });
      // afterAll stops `s` again: its stop is idempotent.
    }
  });
});
