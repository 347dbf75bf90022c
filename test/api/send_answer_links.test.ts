/**
 * POST /messages answers its links from text kept per channel, topic and sender's
 * access (src/views/messages.ts, sentMessageLinksJson): each answer must still be
 * its own message's, follow a rename of the channel, and differ between a sender who
 * may see the channel's name and one who may not, sending in turn to the same topic.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { expectSchema, expectSuccess, startTestServer, type TestServer } from "../kit";
import { SendMessageResponse } from "../../src/schemas/messages";

let s: TestServer;
let realmUrl: string;

beforeAll(async () => {
  s = await startTestServer();
  realmUrl = s.server.h.realmUrl();
});
afterAll(() => s.stop());

const send = async (who: Parameters<TestServer["as"]>[0], to: number, topic: string) => {
  const body = expectSuccess(await s.as(who).post("/messages", { type: "channel", to, topic, content: "hi" }));
  expectSchema(SendMessageResponse, body);
  return body as { id: number; message_url: string; message_link: string; automatic_new_visibility_policy?: number };
};

test("sends to one topic each answer their own ID; a rename changes the links", async () => {
  const id = await s.createChannel("iago", "Elsinore", ["iago", "hamlet"]);
  const first = await send("hamlet", id, "ramparts");
  // The topic's first message: the sender now follows it (FL 214), and says so.
  expect(first.automatic_new_visibility_policy).toBe(3);
  const bodies = [first, await send("hamlet", id, "ramparts"), await send("iago", id, "ramparts"), await send("hamlet", id, "ramparts")];
  expect(new Set(bodies.map((b) => b.id)).size).toBe(4);
  expect(bodies.slice(1).every((b) => b.automatic_new_visibility_policy === undefined)).toBe(true);
  for (const body of bodies) {
    const url = `${realmUrl}/#narrow/channel/${id}-Elsinore/topic/ramparts/near/${body.id}`;
    expect(body.message_url).toBe(url);
    expect(body.message_link).toBe(`[#Elsinore > ramparts @ 💬](${url})`);
  }
  expectSuccess(await s.as("iago").patch(`/streams/${id}`, { new_name: "Castle [old]" }));
  const renamed = await send("hamlet", id, "ramparts");
  const url = `${realmUrl}/#narrow/channel/${id}-Castle-.5Bold.5D/topic/ramparts/near/${renamed.id}`;
  expect(renamed.message_url).toBe(url);
  expect(renamed.message_link).toBe(`[#Castle &#91;old&#93; > ramparts @ 💬](${url})`);
});

test("a topic holding digits like an ID, and a topic that needs escaping, answer their own links", async () => {
  const id = await s.createChannel("iago", "Digits", ["iago", "hamlet"]);
  for (const topic of ["987654321012345", "call 987654321012345 now", "a.b > c*d"]) {
    for (let i = 0; i < 2; i++) {
      const body = await send("hamlet", id, topic);
      const encoded = encodeURIComponent(topic).replace(/\./g, "%2E").replace(/%/g, ".");
      const url = `${realmUrl}/#narrow/channel/${id}-Digits/topic/${encoded}/near/${body.id}`;
      expect(body.message_url).toBe(url);
      expect(body.message_link).toBe(`[#Digits > ${topic.replace(">", "&gt;").replace("*", "&#42;")} @ 💬](${url})`);
    }
  }
});

test("the owner and a bot without the channel's metadata, in turn on one topic: each gets the links it may see", async () => {
  const id = await s.createChannel("iago", "Private study", ["iago", "othello"], { invite_only: true });
  const bot = await s.createBot("othello", { full_name: "Clerk", short_name: "clerk" });
  for (let round = 0; round < 2; round++) {
    const owner = await send("othello", id, "notes");
    const ownerUrl = `${realmUrl}/#narrow/channel/${id}-Private-study/topic/notes/near/${owner.id}`;
    expect(owner.message_url).toBe(ownerUrl);
    expect(owner.message_link).toBe(`[#Private study > notes @ 💬](${ownerUrl})`);
    const byBot = await send(bot, id, "notes");
    const botUrl = `${realmUrl}/#narrow/channel/${id}/topic/notes/near/${byBot.id}`;
    expect(byBot.message_url).toBe(botUrl);
    expect(byBot.message_link).toBe(botUrl);
  }
});
