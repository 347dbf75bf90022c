/**
 * Search rows written by the background job (src/store/search_terms.ts): a search is
 * exact whether a message's rows are written yet or not, and edits, moves and
 * deletion leave the rows right on either side of the watermark.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, startTestServer, type TestServer } from "../kit";
import { Store } from "../../src/store/db";
import { STORE_FORMAT_VERSION } from "../../src/store/format";
import { planSearchTerms, SEARCH_WATERMARK, searchWatermark, writeSearchTerms } from "../../src/store/search_terms";
import { auth, freePort, hearth, startServe, tempDir } from "../kit/process";

// The job waits for the test to run it.
const JOB_WAITS = { HEARTH_UNREAD_ROWS_INTERVAL_MS: String(3600_000) };
let s: TestServer;
let channel: number;

beforeAll(async () => {
  s = await startTestServer({ env: JOB_WAITS });
  channel = await s.createChannel("iago", "search deferred", ["othello", "hamlet"]);
});
afterAll(() => s.stop());

const drain = () => s.server.unreadRows.drain();
const store = () => s.server.h.store;

async function send(content: string, topic = "plain"): Promise<number> {
  return expectSuccess(await s.as("othello").post("/messages", { type: "stream", to: channel, topic, content })).id;
}

/** The IDs a search narrow gives hamlet, newest first. */
async function search(words: string, extra: object[] = []): Promise<number[]> {
  const narrow = JSON.stringify([{ operator: "search", operand: words }, ...extra]);
  const got = expectSuccess(await s.as("hamlet").get("/messages", { anchor: "newest", num_before: 100, num_after: 0, narrow }));
  return got.messages.map((m: { id: number }) => m.id);
}

/** The message IDs the index holds for one word. */
function rowsOf(word: string): number[] {
  const ids: number[] = [];
  for (const key of store().dbs.searchTerms.getKeys({ start: [word, 0], end: [word, Number.MAX_SAFE_INTEGER] })) ids.push((key as [string, number])[1]);
  return ids;
}

type When = "before indexing" | "after indexing";
const WHEN: When[] = ["before indexing", "after indexing"];

describe("search with its rows written later", () => {
  test("a message is found right after its send and again once its rows are written", async () => {
    await drain();
    const id = await send("a zanzibarian quokka appears");
    expect(searchWatermark(store())).toBeLessThan(id);
    expect(rowsOf("zanzibarian")).toEqual([]);
    expect(await search("zanzibarian")).toEqual([id]);
    expect(await search("zanzib")).toEqual([id]);
    expect(await search("quokka", [{ operator: "channel", operand: channel }])).toEqual([id]);
    await drain();
    expect(searchWatermark(store())).toBeGreaterThanOrEqual(id);
    expect(rowsOf("zanzibarian")).toEqual([id]);
    expect(await search("zanzibarian")).toEqual([id]);
    // Indexed and not yet indexed messages together, in ID order.
    const later = await send("zanzibarian again");
    expect(await search("zanzibarian")).toEqual([id, later]);
  });

  for (const when of WHEN) {
    test(`an edit ${when}: the old words no longer match, the new ones do`, async () => {
      await drain();
      const id = await send(`marmalade${when[0]} walrus`);
      const word = `marmalade${when[0]}`;
      if (when === "after indexing") await drain();
      expectSuccess(await s.as("othello").patch(`/messages/${id}`, { content: "tangerine walrus" }));
      expect(await search(word)).toEqual([]);
      expect((await search("tangerine")).includes(id)).toBe(true);
      await drain();
      expect(rowsOf(word)).toEqual([]);
      expect(rowsOf("tangerine")).toContain(id);
      expect(await search(word)).toEqual([]);
      expect((await search("tangerine")).includes(id)).toBe(true);
    });

    test(`a move to another topic ${when}: its topic words follow`, async () => {
      await drain();
      const from = `gondola${when[0]}`;
      const to = `funicular${when[0]}`;
      const id = await send("cable car", from);
      if (when === "after indexing") await drain();
      expectSuccess(await s.as("iago").patch(`/messages/${id}`, { topic: to, propagate_mode: "change_one", send_notification_to_old_thread: false, send_notification_to_new_thread: false }));
      expect(await search(from)).toEqual([]);
      expect(await search(to)).toEqual([id]);
      await drain();
      expect(rowsOf(from)).toEqual([]);
      expect(rowsOf(to)).toEqual([id]);
      expect(await search(to)).toEqual([id]);
    });

    test(`a deletion ${when}: no row is left and nothing matches`, async () => {
      await drain();
      const word = `pomegranate${when[0]}`;
      const kept = await send(`${word} stays`);
      const id = await send(`${word} goes`);
      if (when === "after indexing") await drain();
      expectSuccess(await s.as("iago").delete(`/messages/${id}`));
      expect(await search(word)).toEqual([kept]);
      await drain();
      expect(rowsOf(word)).toEqual([kept]);
      expect(await search(word)).toEqual([kept]);
    });
  }
});

describe("the job's commits", () => {
  test("messages edited, moved or deleted between the job's reading them and its commit get the rows they have then", async () => {
    await drain();
    const edited = await send("quince before");
    const moved = await send("medlar stays", "orchard");
    const deleted = await send("loquat goes");
    const plan = planSearchTerms(store(), 50)!;
    expect([...plan.messages.keys()]).toEqual([edited, moved, deleted]);
    expectSuccess(await s.as("othello").patch(`/messages/${edited}`, { content: "quince after" }));
    expectSuccess(await s.as("iago").patch(`/messages/${moved}`, { topic: "vineyard", propagate_mode: "change_one", send_notification_to_old_thread: false, send_notification_to_new_thread: false }));
    expectSuccess(await s.as("iago").delete(`/messages/${deleted}`));
    // Sent after the plan: past the rows this commit writes, left for the next.
    const later = await send("quince later");
    await store().commit(() => writeSearchTerms(store(), plan));
    expect(searchWatermark(store())).toBe(deleted);
    expect({ before: rowsOf("before"), after: rowsOf("after"), orchard: rowsOf("orchard"), vineyard: rowsOf("vineyard"), loquat: rowsOf("loquat"), quince: rowsOf("quince") }).toEqual({
      before: [],
      after: [edited],
      orchard: [],
      vineyard: [moved],
      loquat: [],
      quince: [edited],
    });
    expect(await search("quince")).toEqual([edited, later]);
    // A plan made before another commit moved the watermark writes nothing.
    const stale = planSearchTerms(store(), 50)!;
    await drain();
    await store().commit(() => expect(writeSearchTerms(store(), stale)).toBe(0));
    expect(rowsOf("quince")).toEqual([edited, later]);
  });
});

describe("across restarts", () => {
  test("a data folder from before the watermark (format 2) opens and searches, old and new messages", async () => {
    const first = await startTestServer({ env: JOB_WAITS });
    let second: TestServer | null = null;
    try {
      const ch = await first.createChannel("iago", "old folder", ["othello", "hamlet"]);
      const old = expectSuccess(await first.as("othello").post("/messages", { type: "stream", to: ch, topic: "t", content: "heirloom tomato" })).id;
      await first.server.unreadRows.drain();
      await first.server.stop();
      // What the previous format leaves: every message's rows written, no watermark.
      const folder = new Store(first.dataDir);
      await folder.commit(() => {
        folder.dbs.meta.remove(SEARCH_WATERMARK);
        folder.dbs.meta.put("store_format_version", 2);
      });
      expect([...folder.dbs.searchTerms.getKeys({ start: ["heirloom", 0], end: ["heirloom", Number.MAX_SAFE_INTEGER] })]).toEqual([["heirloom", old]]);
      await folder.close();
      second = await startTestServer({ dataDir: first.dataDir, env: JOB_WAITS });
      const srv = second;
      const found = async (word: string) =>
        expectSuccess(await srv.as(first.users.hamlet).get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow: JSON.stringify([{ operator: "search", operand: word }]) })).messages.map((m: { id: number }) => m.id);
      expect(srv.server.h.store.dbs.meta.get("store_format_version")).toBe(STORE_FORMAT_VERSION);
      expect(await found("heirloom")).toEqual([old]);
      const fresh = expectSuccess(await srv.as(first.users.othello).post("/messages", { type: "stream", to: ch, topic: "t", content: "heirloom carrot" })).id;
      expect(searchWatermark(srv.server.h.store)).toBe(fresh - 1);
      expect(await found("heirloom")).toEqual([old, fresh]);
      expect(await found("carrot")).toEqual([fresh]);
      await srv.server.unreadRows.drain();
      expect(searchWatermark(srv.server.h.store)).toBe(fresh);
      expect(await found("heirloom")).toEqual([old, fresh]);
    } finally {
      if (second) await second.server.stop();
      else await first.server.stop().catch(() => {});
      await first.stop().catch(() => {});
    }
  }, 30_000);

  test("kill -9 between a send and its indexing: the restarted server finds it, and its job writes the rows", async () => {
    const data = tempDir();
    const init = await hearth(["init", "--data", data, "--realm-name", "S", "--owner-email", "o@s.test", "--owner-password", "secret1", "--json"]);
    const owner = JSON.parse(init.stdout) as { email: string; api_key: string };
    const searchIds = async (url: string, word: string) => {
      const narrow = encodeURIComponent(JSON.stringify([{ operator: "search", operand: word }]));
      const got = await (await fetch(`${url}/api/v1/messages?anchor=newest&num_before=50&num_after=0&narrow=${narrow}`, { headers: auth(owner.email, owner.api_key) })).json();
      return got.messages.map((m: { id: number }) => m.id) as number[];
    };
    const sent: number[] = [];
    const first = await startServe(["--data", data, "--port", String(freePort())], JOB_WAITS);
    try {
      for (let i = 0; i < 5; i++) {
        const body = new URLSearchParams({ type: "stream", to: "general", topic: "k", content: `xylophone ${i}` });
        const r = await (await fetch(`${first.url}/api/v1/messages`, { method: "POST", headers: { ...auth(owner.email, owner.api_key), "content-type": "application/x-www-form-urlencoded" }, body })).json();
        expect(r.result).toBe("success");
        sent.push(r.id);
      }
      expect(await searchIds(first.url, "xylophone")).toEqual(sent);
    } finally {
      first.proc.kill("SIGKILL");
      await first.proc.exited;
    }
    const rowsWritten = async () => {
      const folder = new Store(`${data}`);
      try {
        return { watermark: searchWatermark(folder), rows: [...folder.dbs.searchTerms.getKeys({ start: ["xylophone", 0], end: ["xylophone", Number.MAX_SAFE_INTEGER] })].length };
      } finally {
        await folder.close();
      }
    };
    expect((await rowsWritten()).rows).toBe(0);
    // The default schedule: the job runs once the server has been quiet for a moment.
    const second = await startServe(["--data", data, "--port", String(freePort())]);
    try {
      expect(await searchIds(second.url, "xylophone")).toEqual(sent);
      let state = await rowsWritten();
      for (let i = 0; i < 300 && state.rows < sent.length; i++) {
        await Bun.sleep(100);
        state = await rowsWritten();
      }
      expect(state).toEqual({ watermark: Math.max(...sent), rows: sent.length });
      expect(await searchIds(second.url, "xylophone")).toEqual(sent);
    } finally {
      second.proc.kill("SIGTERM");
      await second.proc.exited;
    }
  }, 60_000);
});
