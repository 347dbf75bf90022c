/**
 * Where topics are required (the channel's `topics_policy` disable_empty_topic, or the
 * organization's `mandatory_topics`), sends, scheduled messages and edits refuse "",
 * "(no topic)" and the organization's `realm_empty_topic_display_name` alike — the
 * spec's rule — with Zulip's BAD_REQUEST and words.
 */
import { afterAll, beforeAll, describe, test } from "bun:test";
import { expectError, expectSuccess, startTestServer, type TestServer } from "../kit";

let s: TestServer;
let strict: number;
let open: number;
const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;
const CHANNEL_RULE = "Sending messages to the general chat is not allowed in this channel.";

beforeAll(async () => {
  s = await startTestServer();
  strict = await s.createChannel("iago", "Strict", ["iago", "hamlet"], { topics_policy: "disable_empty_topic" });
  open = await s.createChannel("iago", "Open", ["iago", "hamlet"], { topics_policy: "allow_empty_topic" });
});
afterAll(() => s.stop());

const send = (to: number, topic: string) => s.as("hamlet").post("/messages", { type: "channel", to, topic, content: "hello" });
const schedule = (to: number, topic: string) =>
  s.as("hamlet").post("/scheduled_messages", { type: "channel", to, topic, content: "later", scheduled_delivery_timestamp: inAnHour() });

describe("a channel whose topics are required (topics_policy disable_empty_topic)", () => {
  test("POST /scheduled_messages refuses the empty topic's display name, as it refuses \"\" and \"(no topic)\"", async () => {
    for (const topic of ["", "(no topic)", "general chat", "  general chat  "]) expectError(await schedule(strict, topic), 400, "BAD_REQUEST", CHANNEL_RULE);
    expectSuccess(await schedule(strict, "General chat, but a real topic"));
  });

  test("PATCH /scheduled_messages/{id} refuses it too", async () => {
    const id = expectSuccess(await schedule(strict, "plans")).scheduled_message_id;
    for (const topic of ["", "(no topic)", "general chat"]) {
      expectError(await s.as("hamlet").patch(`/scheduled_messages/${id}`, { topic }), 400, "BAD_REQUEST", CHANNEL_RULE);
    }
    // Moving it into the strict channel from an open one with the display name as topic.
    const other = expectSuccess(await schedule(open, "general chat")).scheduled_message_id;
    expectError(await s.as("hamlet").patch(`/scheduled_messages/${other}`, { to: strict }), 400, "BAD_REQUEST", CHANNEL_RULE);
  });

  test("POST /messages and topic edits apply the same rule", async () => {
    for (const topic of ["", "(no topic)", "general chat"]) expectError(await send(strict, topic), 400, "BAD_REQUEST", CHANNEL_RULE);
    const id = expectSuccess(await send(strict, "a topic")).id;
    for (const topic of ["", "(no topic)", "general chat"]) {
      expectError(await s.as("hamlet").patch(`/messages/${id}`, { topic }), 400, "BAD_REQUEST", CHANNEL_RULE);
    }
  });

  test("where topics are not required, the display name is an ordinary topic", async () => {
    expectSuccess(await send(open, "general chat"));
    expectSuccess(await schedule(open, "general chat"));
  });

  test("the organization's own display name is the one refused", async () => {
    expectSuccess(await s.as("iago").patch("/realm", { empty_topic_display_name: "chit-chat" }));
    try {
      expectError(await schedule(strict, "chit-chat"), 400, "BAD_REQUEST", CHANNEL_RULE);
      expectError(await send(strict, "chit-chat"), 400, "BAD_REQUEST", CHANNEL_RULE);
      expectSuccess(await send(strict, "general chat"));
    } finally {
      expectSuccess(await s.as("iago").patch("/realm", { empty_topic_display_name: "general chat" }));
    }
  });
});

describe("an organization that requires topics (mandatory_topics)", () => {
  test("sends, scheduled messages and edits refuse \"\", \"(no topic)\" and the display name, in Zulip's words", async () => {
    const id = expectSuccess(await send(open, "before the rule")).id;
    expectSuccess(await s.as("iago").patch("/realm", { mandatory_topics: true }));
    try {
      for (const topic of ["", "(no topic)", "general chat"]) {
        // Zulip's send path has no period; its edit path has one.
        expectError(await send(open, topic), 400, "BAD_REQUEST", "Topics are required in this organization");
        expectError(await schedule(open, topic), 400, "BAD_REQUEST", "Topics are required in this organization");
        expectError(await s.as("hamlet").patch(`/messages/${id}`, { topic }), 400, "BAD_REQUEST", "Topics are required in this organization.");
      }
      expectSuccess(await send(open, "a real topic"));
    } finally {
      expectSuccess(await s.as("iago").patch("/realm", { mandatory_topics: false }));
    }
  });
});
