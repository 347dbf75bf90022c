/**
 * GET /messages reads the viewer's flags rows a batch of candidates at a time while
 * they are sparse, one by one once they are dense (src/views/narrow.ts,
 * candidatesInBatches). Whichever way, each message's flags must be what the single
 * message lookup gives (visibleFlags), and the messages the same: readers with no
 * rows, with rows for everything (all read), with read and unread interleaved, starred
 * and mentioned unread messages, a message received before joining a protected-history
 * channel and one from before joining, in narrows walked from their own indexes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, startTestServer, type CastName, type TestServer } from "../kit";
import { getMessage, flagList } from "../../src/store/messages";
import { getUser } from "../../src/store/users";
import { visibleFlags } from "../../src/access/messages";

let s: TestServer;
let channel: number;
let secret: number;
const ids: number[] = [];
beforeAll(async () => {
  // The job writes the unread rows at once, so runs, written rows and pending ones all occur.
  s = await startTestServer();
  channel = await s.createChannel("iago", "batches", ["othello", "hamlet", "cordelia", "shiva"]);
  secret = await s.createChannel("iago", "batches secret", ["othello", "hamlet"], { invite_only: true, history_public_to_subscribers: false });
  for (let i = 0; i < 160; i++) {
    const to = i % 7 === 3 ? secret : channel;
    const mention = i % 11 === 5 ? "@**King Hamlet** " : "";
    ids.push(expectSuccess(await s.as(i % 5 === 0 ? "hamlet" : "othello").post("/messages", { type: "stream", to, topic: `t${i % 3}`, content: `${mention}m${i}` })).id as number);
  }
  // Shiva joins the protected channel now: he sees none of its earlier messages.
  expectSuccess(await s.as("iago").post("/users/me/subscriptions", { subscriptions: [{ name: "batches secret" }], principals: [s.users.shiva.id] }));
  ids.push(expectSuccess(await s.as("othello").post("/messages", { type: "stream", to: secret, topic: "t0", content: "after shiva joined" })).id as number);
  // Cordelia reads everything (a row per message); Hamlet reads some topics' first halves and stars unread ones.
  expectSuccess(await s.as("cordelia").post("/messages/flags", { messages: ids.filter((_, i) => i < 160 && i % 7 !== 3), op: "add", flag: "read" }));
  expectSuccess(await s.as("hamlet").post("/messages/flags", { messages: ids.filter((_, i) => i < 80 && i % 3 !== 1), op: "add", flag: "read" }));
  expectSuccess(await s.as("hamlet").post("/messages/flags", { messages: ids.filter((_, i) => i % 13 === 4), op: "add", flag: "starred" }));
});
afterAll(() => s.stop());

async function expectSameAsOneByOne(who: CastName, narrow: unknown[], anchor: number | string, before: number, after: number): Promise<number> {
  const r = expectSuccess(await s.as(who).get("/messages", { anchor, num_before: before, num_after: after, narrow: JSON.stringify(narrow) }));
  const viewer = getUser(s.server.h.store, s.users[who].id)!;
  for (const m of r.messages as any[]) {
    const bits = visibleFlags(s.server.h, viewer, getMessage(s.server.h.store, m.id)!);
    expect(bits).not.toBeUndefined();
    expect([m.id, m.flags]).toEqual([m.id, flagList(bits!)]);
  }
  // Every message the viewer may see and that matches is there: the page is the walk's.
  return (r.messages as any[]).length;
}

describe("flags read in batches give the one-by-one answers", () => {
  const narrows: unknown[][] = [
    [],
    [{ operator: "channel", operand: "batches" }],
    [{ operator: "channel", operand: "batches" }, { operator: "topic", operand: "t1" }],
    [{ operator: "channel", operand: "batches secret" }],
    [{ operator: "is", operand: "unread" }],
    [{ operator: "is", operand: "starred" }],
    [{ operator: "is", operand: "mentioned" }],
    [{ operator: "is", operand: "unread" }, { operator: "channel", operand: "batches" }, { operator: "topic", operand: "t2" }],
  ];
  for (const who of ["hamlet", "cordelia", "shiva", "othello"] as CastName[]) {
    test(`${who}: every narrow, from the newest, the oldest, the first unread and the middle`, async () => {
      let seen = 0;
      for (const narrow of narrows) {
        if (who !== "hamlet" && who !== "othello" && who !== "shiva" && JSON.stringify(narrow).includes("secret")) continue;
        seen += await expectSameAsOneByOne(who, narrow, "newest", 100, 0);
        seen += await expectSameAsOneByOne(who, narrow, "oldest", 0, 100);
        seen += await expectSameAsOneByOne(who, narrow, "first_unread", 30, 30);
        seen += await expectSameAsOneByOne(who, narrow, ids[90], 40, 40);
      }
      expect(seen).toBeGreaterThan(0);
    });
  }

  test("the unread counts match the pages: Hamlet's is:unread is exactly his unread messages", async () => {
    const r = expectSuccess(await s.as("hamlet").get("/messages", { anchor: "oldest", num_before: 0, num_after: 1000, narrow: JSON.stringify([{ operator: "is", operand: "unread" }]) }));
    // Past the channels' creation notices. An API client's own messages are not read for it.
    const got = (r.messages as any[]).map((m) => m.id as number).filter((id) => id >= ids[0]);
    const read = new Set(ids.filter((_, i) => i < 80 && i % 3 !== 1));
    expect(got).toEqual(ids.filter((id) => !read.has(id)));
  });
});
