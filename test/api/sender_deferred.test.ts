/**
 * Sender rows written by the background job with the search rows (src/store/search_terms.ts):
 * a sender narrow is exact whether a message's row is written yet or not, in both
 * directions across the watermark, after a deletion, and for a message that an older
 * Hearth gave its row with the send.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, startTestServer, type CastName, type TestServer } from "../kit";
import { searchWatermark } from "../../src/store/search_terms";

// The job waits for the test to run it.
const JOB_WAITS = { HEARTH_UNREAD_ROWS_INTERVAL_MS: String(3600_000) };
let s: TestServer;
let channel: number;

beforeAll(async () => {
  s = await startTestServer({ env: JOB_WAITS });
  channel = await s.createChannel("iago", "sender deferred", ["othello", "hamlet", "cordelia"]);
});
afterAll(() => s.stop());

const drain = () => s.server.unreadRows.drain();
const store = () => s.server.h.store;

async function send(as: CastName, content: string): Promise<number> {
  return expectSuccess(await s.as(as).post("/messages", { type: "stream", to: channel, topic: "t", content })).id;
}

/** The IDs of `sender`'s messages hamlet sees around `anchor`, oldest first. */
async function fromSender(sender: CastName, anchor: number | "newest" = "newest", before = 100, after = 0): Promise<number[]> {
  const narrow = JSON.stringify([{ operator: "sender", operand: s.users[sender].email }]);
  const got = expectSuccess(await s.as("hamlet").get("/messages", { anchor, num_before: before, num_after: after, narrow }));
  return got.messages.map((m: { id: number }) => m.id);
}

/** The message IDs the sender index holds for a user. */
function rowsOf(sender: CastName): number[] {
  const id = s.users[sender].id;
  return [...store().dbs.senderMessages.getKeys({ start: [id, 0], end: [id, Number.MAX_SAFE_INTEGER] })].map((k) => (k as [number, number])[1]);
}

describe("sender narrows with their rows written later", () => {
  test("a message is found right after its send, and again once the job wrote its row", async () => {
    await drain();
    const before = rowsOf("cordelia");
    const a = await send("cordelia", "one");
    const other = await send("othello", "not cordelia's");
    const b = await send("cordelia", "two");
    expect(searchWatermark(store())).toBeLessThan(a);
    expect(rowsOf("cordelia")).toEqual(before);
    expect(await fromSender("cordelia")).toEqual([...before, a, b]);
    expect((await fromSender("othello")).includes(other)).toBe(true);
    await drain();
    expect(searchWatermark(store())).toBeGreaterThanOrEqual(b);
    expect(rowsOf("cordelia")).toEqual([...before, a, b]);
    expect(await fromSender("cordelia")).toEqual([...before, a, b]);
  });

  test("both directions across the watermark, from an anchor on either side", async () => {
    await drain();
    const indexed = [await send("cordelia", "i1"), await send("cordelia", "i2")];
    await drain();
    const pending = [await send("cordelia", "p1"), await send("othello", "x"), await send("cordelia", "p2")].filter((_, i) => i !== 1);
    const all = await fromSender("cordelia");
    expect(all.slice(-4)).toEqual([...indexed, ...pending]);
    // From an indexed anchor, newer: the rest of the indexed ones, then the pending ones.
    expect(await fromSender("cordelia", indexed[0], 0, 10)).toEqual([...indexed, ...pending]);
    // From a pending anchor, older: pending then indexed, oldest first in the answer.
    expect((await fromSender("cordelia", pending[1], 3, 0)).slice(-3)).toEqual([indexed[1], pending[0], pending[1]]);
    await drain();
    expect(await fromSender("cordelia", indexed[0], 0, 10)).toEqual([...indexed, ...pending]);
  });

  test("a message deleted before the job ran gets no row and is not found", async () => {
    await drain();
    const kept = await send("cordelia", "kept");
    const gone = await send("cordelia", "gone");
    expectSuccess(await s.as("iago").delete(`/messages/${gone}`));
    expect((await fromSender("cordelia")).slice(-1)).toEqual([kept]);
    await drain();
    expect(rowsOf("cordelia")).not.toContain(gone);
    expect(rowsOf("cordelia")).toContain(kept);
    expect((await fromSender("cordelia")).slice(-1)).toEqual([kept]);
  });

  test("a message past the watermark that already holds a row (an older Hearth's send) is listed once", async () => {
    await drain();
    const id = await send("cordelia", "with an old row");
    const uid = s.users.cordelia.id;
    await store().commit(() => store().dbs.senderMessages.put([uid, id], true));
    expect(searchWatermark(store())).toBeLessThan(id);
    expect((await fromSender("cordelia")).filter((x) => x === id)).toEqual([id]);
    await drain();
    expect((await fromSender("cordelia")).filter((x) => x === id)).toEqual([id]);
  });
});
