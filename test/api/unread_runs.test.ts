/**
 * Unread runs (src/store/unread_runs.ts): a run entry must
 * mean exactly what a written `[userId, "unread", messageId]` row means. Each scenario
 * runs three times on fresh channels, with the readers' "unread" rows of its messages
 * in each form when the actions start:
 * - "implicit": not yet written by the background job;
 * - "runs": written by the job, as runs;
 * - "rows": one written row per message (read, then marked unread again).
 * What clients read after the actions must be the same in the three forms, and the
 * same again once the job has run.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, startTestServer, type CastName, type TestServer } from "../kit";
import { register } from "../kit/events";
import { unreadWatermark, writtenUnreadLocation } from "../../src/store/unread";
import { planDeferredUnreadRows, writeDeferredUnreadRows } from "../../src/store/unread_batches";
import { getUserFlags } from "../../src/store/user_messages";
import { decodeRun } from "../../src/store/unread_run_encoding";
import { doExpireMessages } from "../../src/actions/retention";

let s: TestServer;

beforeAll(async () => {
  // The job waits for the test to run it.
  s = await startTestServer({ env: { HEARTH_UNREAD_ROWS_INTERVAL_MS: String(3600_000) } });
});
afterAll(() => s.stop());

type Mode = "implicit" | "runs" | "rows";
const MODES: Mode[] = ["implicit", "runs", "rows"];
type Reader = "hamlet" | "polonius" | "cordelia";
const READERS: Reader[] = ["hamlet", "polonius", "cordelia"];

/** A scenario's own channels: A public (every reader), B public (not cordelia), C public (no reader), P private (hamlet alone of the readers). */
interface Ctx {
  mode: Mode;
  ch: { A: number; B: number; C: number; P: number };
  ids: number[];
}

let channelCount = 0;
async function channels(): Promise<Ctx["ch"]> {
  const n = ++channelCount;
  return {
    A: await s.createChannel("iago", `audit A${n}`, ["othello", "hamlet", "polonius", "cordelia"]),
    B: await s.createChannel("iago", `audit B${n}`, ["othello", "hamlet", "polonius"]),
    C: await s.createChannel("iago", `audit C${n}`, ["othello"]),
    P: await s.createChannel("iago", `audit P${n}`, ["iago", "othello", "hamlet"], { invite_only: true }),
  };
}

const drain = () => s.server.unreadRows.drain();

/** Fresh channels with no deferred unread rows pending before or after their creation: the job's next batch starts at the test's first message. */
async function quietChannels(): Promise<Ctx["ch"]> {
  await drain();
  const ch = await channels();
  await drain();
  return ch;
}

async function send(to: number, topic: string, content: string, who: CastName = "othello"): Promise<number> {
  return expectSuccess(await s.as(who).post("/messages", { type: "stream", to, topic, content })).id as number;
}

async function markRead(srv: TestServer, who: CastName, messages: number[]): Promise<void> {
  expectSuccess(await srv.as(who).post("/messages/flags", { messages, op: "add", flag: "read" }));
}

async function flags(who: Reader, messages: number[], op: "add" | "remove", flag: string): Promise<void> {
  expectSuccess(await s.as(who).post("/messages/flags", { messages, op, flag }));
}

async function move(id: number, to: { stream_id?: number; topic?: string }, propagate_mode = "change_one"): Promise<void> {
  expectSuccess(await s.as("iago").patch(`/messages/${id}`, { ...to, propagate_mode, send_notification_to_old_thread: false, send_notification_to_new_thread: false }));
}

/** Puts the readers' "unread" rows of the scenario's messages in the mode's form. */
async function prepare(ctx: Ctx): Promise<void> {
  const store = s.server.h.store;
  if (ctx.mode === "implicit") {
    expect(unreadWatermark(store)).toBeLessThan(ctx.ids[0]);
    return;
  }
  await drain();
  expect(unreadWatermark(store)).toBeGreaterThanOrEqual(ctx.ids[ctx.ids.length - 1]);
  if (ctx.mode === "rows") {
    for (const who of READERS) {
      const held = ctx.ids.filter((id) => getUserFlags(store, s.users[who].id, id) === 0);
      if (held.length === 0) continue;
      await flags(who, held, "add", "read");
      await flags(who, held, "remove", "read");
      // Written rows, no run entry.
      for (const id of held) expect(store.dbs.userMessageIndex.doesExist([s.users[who].id, "unread", id])).toBe(true);
    }
  }
}

/** What a reader's clients read about the scenario's messages, with message IDs as positions in `ids` and channels by letter. */
async function view(ctx: Ctx, who: Reader) {
  const index = new Map(ctx.ids.map((id, i) => [id, i]));
  const letter = new Map(Object.entries(ctx.ch).map(([k, v]) => [v, k]));
  const pos = (list: number[]) => list.filter((id) => index.has(id)).map((id) => index.get(id)!);
  const state = await register(s.as(who), { event_types: ["message", "update_message_flags"] });
  const streams: [number, string, string][] = [];
  for (const x of state.unread_msgs.streams) for (const id of x.unread_message_ids) if (index.has(id)) streams.push([index.get(id)!, letter.get(x.stream_id) ?? "?", x.topic]);
  streams.sort((a, b) => a[0] - b[0]);
  const narrowed = async (narrow: unknown[], anchor: number | string = ctx.ids[0], num_before = 0, num_after = ctx.ids.length + 50) =>
    expectSuccess(await s.as(who).get("/messages", { anchor, num_before, num_after, narrow: JSON.stringify(narrow) }));
  const canNarrow = async (channelId: number) => (await s.as(who).get("/messages", { anchor: "newest", num_before: 0, num_after: 0, narrow: JSON.stringify([{ operator: "channel", operand: channelId }]) })).status === 200;
  const all = await narrowed([]);
  const flagsOf: Record<number, string[]> = {};
  for (const m of all.messages) if (index.has(m.id)) flagsOf[index.get(m.id)!] = [...m.flags].sort();
  const unread = await narrowed([{ operator: "is", operand: "unread" }]);
  const read = await narrowed([{ operator: "is", operand: "unread", negated: true }]);
  const unreadOlder = await narrowed([{ operator: "is", operand: "unread" }], "newest", ctx.ids.length + 50, 0);
  const firstUnread: Record<string, number | string | null> = {};
  for (const [k, id] of Object.entries(ctx.ch)) {
    if (!(await canNarrow(id))) {
      firstUnread[k] = "no access";
      continue;
    }
    const r = await narrowed([{ operator: "channel", operand: id }], "first_unread", 0, 1);
    firstUnread[k] = index.has(r.anchor) ? index.get(r.anchor)! : r.messages.length === 0 ? null : "other";
  }
  return {
    unread_msgs: streams,
    mentions: pos(state.unread_msgs.mentions),
    pms: state.unread_msgs.pms.map((x: any) => [x.other_user_id, pos(x.unread_message_ids)]).filter((x: any) => x[1].length > 0),
    flags: flagsOf,
    unread: pos(unread.messages.map((m: any) => m.id)),
    unreadOlder: pos(unreadOlder.messages.map((m: any) => m.id)),
    read: pos(read.messages.map((m: any) => m.id)),
    firstUnread,
  };
}

async function views(ctx: Ctx) {
  const out: Record<string, Awaited<ReturnType<typeof view>>> = {};
  for (const who of READERS) out[who] = await view(ctx, who);
  return out;
}

interface Scenario {
  /** Sends the scenario's messages (othello to the scenario's channels unless said otherwise). */
  send(ctx: Ctx): Promise<number[]>;
  act(ctx: Ctx): Promise<void>;
}

/**
 * Runs a scenario in each mode; checks each mode reads the same before and after the
 * job, and that every mode reads the same as the others. Returns the reads (of the
 * "implicit" mode) for the test's own expectations.
 */
async function runScenario(scenario: Scenario) {
  const results: Record<Mode, Awaited<ReturnType<typeof views>>> = {} as any;
  for (const mode of MODES) {
    const ch = await channels();
    // Nothing else pending: the job's batch starts at the scenario's first message.
    await drain();
    const ctx: Ctx = { mode, ch, ids: [] };
    ctx.ids = await scenario.send(ctx);
    await prepare(ctx);
    await scenario.act(ctx);
    const before = await views(ctx);
    await drain();
    const after = await views(ctx);
    expect({ mode, after }).toEqual({ mode, after: before });
    results[mode] = before;
  }
  expect({ mode: "runs", reads: results.runs }).toEqual({ mode: "runs", reads: results.implicit });
  expect({ mode: "rows", reads: results.rows }).toEqual({ mode: "rows", reads: results.implicit });
  return results.implicit;
}

const range = (n: number) => [...Array(n).keys()];
async function sendMany(to: number, n: number, topic: (i: number) => string): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) ids.push(await send(to, topic(i), `audit message ${i}`));
  return ids;
}

/** The user's runs as stored: key start and IDs, in key order. */
function runsOf(userId: number): { start: number; ids: number[] }[] {
  const store = s.server.h.store;
  const out: { start: number; ids: number[] }[] = [];
  for (const { key, value } of store.dbs.userMessageIndex.getRange({ start: [userId, "unreadBatch", 0], end: [userId, "unreadBatch", Number.MAX_SAFE_INTEGER] })) {
    const start = (key as [number, string, number])[2];
    out.push({ start, ids: [...decodeRun(start, value).ids] });
  }
  return out;
}

/** Runs of one user must cover disjoint spans in key order, each ID at least its run's start (the lookup's assumption). */
function expectDisjointRuns(userId: number): void {
  let previousLast = -Infinity;
  for (const run of runsOf(userId)) {
    expect(run.ids.length).toBeGreaterThan(0);
    expect(run.ids[0]).toBeGreaterThanOrEqual(run.start);
    expect(run.start).toBeGreaterThan(previousLast);
    previousLast = run.ids[run.ids.length - 1];
  }
}

describe("unread runs: the same reads whether rows are implicit, in runs or written", () => {
  test("read, unread again, starred and unstarred while unread, starred then read", async () => {
    const v = await runScenario({
      send: (ctx) => sendMany(ctx.ch.A, 6, (i) => `t${i % 2}`),
      async act({ ids }) {
        await flags("hamlet", [ids[0], ids[2]], "add", "read");
        await flags("hamlet", [ids[1]], "add", "starred");
        await flags("hamlet", [ids[2]], "remove", "read");
        await flags("hamlet", [ids[3]], "add", "starred");
        await flags("hamlet", [ids[3]], "add", "read");
        await flags("hamlet", [ids[1]], "remove", "starred");
        // Starred while unread, stays unread; then marked read, then unread, still starred.
        await flags("polonius", [ids[4]], "add", "starred");
        await flags("polonius", [ids[4]], "add", "read");
        await flags("polonius", [ids[4]], "remove", "read");
        await flags("cordelia", [ids[5]], "add", "starred");
      },
    });
    expect(v.hamlet.unread).toEqual([1, 2, 4, 5]);
    expect(v.hamlet.flags[3]).toEqual(["read", "starred"]);
    expect(v.hamlet.flags[1]).toEqual([]);
    expect(v.polonius.flags[4]).toEqual(["starred"]);
    expect(v.polonius.unread).toEqual([0, 1, 2, 3, 4, 5]);
    expect(v.cordelia.flags[5]).toEqual(["starred"]);
    expect(v.cordelia.unreadOlder).toEqual([0, 1, 2, 3, 4, 5]);
  });

  test("moves within a channel (change_one, change_later, back again), then mark_topic_as_read on old and new topics", async () => {
    const v = await runScenario({
      send: (ctx) => sendMany(ctx.ch.A, 8, () => "start"),
      async act({ ch, ids }) {
        await move(ids[1], { topic: "moved one" });
        await move(ids[5], { topic: "moved later" }, "change_later");
        await move(ids[1], { topic: "start" });
        await move(ids[2], { topic: "Moved One" });
        // The old topic read: what moved away stays unread.
        expectSuccess(await s.as("hamlet").post("/mark_topic_as_read", { stream_id: ch.A, topic_name: "start" }));
        // The new topic read (case differs): only what is there now.
        expectSuccess(await s.as("polonius").post("/mark_topic_as_read", { stream_id: ch.A, topic_name: "moved later" }));
        expectSuccess(await s.as("cordelia").post("/mark_topic_as_read", { stream_id: ch.A, topic_name: "moved one" }));
      },
    });
    expect(v.hamlet.unread).toEqual([2, 5, 6, 7]);
    expect(v.hamlet.unread_msgs).toEqual([
      [2, "A", "Moved One"],
      [5, "A", "moved later"],
      [6, "A", "moved later"],
      [7, "A", "moved later"],
    ]);
    expect(v.polonius.unread).toEqual([0, 1, 2, 3, 4]);
    expect(v.cordelia.unread).toEqual([0, 1, 3, 4, 5, 6, 7]);
  });

  test("moves to another channel: kept by readers subscribed to both, lost by those who are not, taken from those outside a private one", async () => {
    const v = await runScenario({
      send: (ctx) => sendMany(ctx.ch.A, 8, (i) => (i < 4 ? "x" : "y")),
      async act({ ch, ids }) {
        // To B: hamlet and polonius are subscribed there, cordelia is not (loses her row).
        await move(ids[1], { stream_id: ch.B });
        await move(ids[5], { stream_id: ch.B, topic: "y in B" }, "change_later");
        // To C, public, no reader subscribed: all lose their rows (as Zulip).
        await move(ids[2], { stream_id: ch.C });
        // To P, private: only hamlet keeps it.
        await move(ids[3], { stream_id: ch.P, topic: "secret" });
        // Read by channel: A for polonius leaves B's; B for hamlet leaves A's and P's.
        expectSuccess(await s.as("polonius").post("/mark_stream_as_read", { stream_id: ch.A }));
        expectSuccess(await s.as("hamlet").post("/mark_stream_as_read", { stream_id: ch.B }));
      },
    });
    expect(v.hamlet.unread).toEqual([0, 3, 4]);
    expect(v.hamlet.unread_msgs).toEqual([
      [0, "A", "x"],
      [3, "P", "secret"],
      [4, "A", "y"],
    ]);
    expect(v.hamlet.firstUnread).toEqual({ A: 0, B: null, C: null, P: 3 });
    expect(v.polonius.unread).toEqual([1, 5, 6, 7]);
    expect(v.polonius.unread_msgs.map(([i, c]) => [i, c])).toEqual([
      [1, "B"],
      [5, "B"],
      [6, "B"],
      [7, "B"],
    ]);
    expect(v.cordelia.unread).toEqual([0, 4]);
    // Her combined feed lists only what she holds a row for.
    expect(v.cordelia.flags[1]).toBeUndefined();
  });

  test("more than a run's worth (64) for one reader: reads at run boundaries and walks across them both ways", async () => {
    const n = 140;
    const v = await runScenario({
      send: (ctx) => sendMany(ctx.ch.A, n, (i) => (i % 3 === 0 ? "third" : "rest")),
      async act({ ch, ids, mode }) {
        if (mode === "runs") {
          // Hamlet's batch was his 140 messages: runs start at the batch, then at his 65th and 129th message.
          const runs = runsOf(s.users.hamlet.id).filter((r) => r.ids[0] >= ids[0]);
          expect(runs.map((r) => r.ids.length)).toEqual([64, 64, 12]);
          expect(runs[1].start).toBe(ids[64]);
          expect(runs[2].start).toBe(ids[128]);
        }
        // The last of a run, the first of the next (its key), and the one after.
        await flags("hamlet", [ids[63], ids[64], ids[65], ids[127], ids[128]], "add", "read");
        await flags("hamlet", [ids[64]], "remove", "read");
        await flags("hamlet", [ids[128]], "add", "starred");
        // Polonius reads a whole run's span, so a run is emptied.
        await flags("polonius", ids.slice(64, 128), "add", "read");
        // Cordelia reads one topic across all runs.
        expectSuccess(await s.as("cordelia").post("/mark_topic_as_read", { stream_id: ch.A, topic_name: "third" }));
        expectDisjointRuns(s.users.hamlet.id);
      },
    });
    const all = range(n);
    expect(v.hamlet.unread).toEqual(all.filter((i) => ![63, 65, 127, 128].includes(i)));
    expect(v.hamlet.flags[128]).toEqual(["read", "starred"]);
    expect(v.polonius.unread).toEqual(all.filter((i) => i < 64 || i >= 128));
    expect(v.polonius.firstUnread.A).toBe(0);
    expect(v.cordelia.unread).toEqual(all.filter((i) => i % 3 !== 0));
  });

  test("walks of is:unread with num_before/num_after from anchors at and around run boundaries match the full list", async () => {
    const n = 140;
    const ch = await quietChannels();
    // Every 8th message goes to C, which hamlet is not in: his runs then have gaps, and
    // anchors there fall between runs or before a run's first ID.
    const ids: number[] = [];
    const others: number[] = [];
    for (let i = 0; ids.length < n; i++) {
      if (i % 8 === 0) others.push(await send(ch.C, "gap", `gap ${i}`));
      else ids.push(await send(ch.A, "walk", `walk ${i}`));
    }
    const store = s.server.h.store;
    const hamlet = s.users.hamlet.id;
    // Read a scattering, some at boundaries, while rows are implicit.
    const readIdx = [0, 1, 62, 63, 64, 100, 127, 128, 129, 139];
    await flags("hamlet", readIdx.map((i) => ids[i]), "add", "read");
    const expected = ids.filter((_, i) => !readIdx.includes(i));
    const walk = async (anchor: number, num_before: number, num_after: number, include_anchor = true) =>
      (
        expectSuccess(
          await s.as("hamlet").get("/messages", {
            anchor,
            num_before,
            num_after,
            include_anchor,
            narrow: JSON.stringify([{ operator: "is", operand: "unread" }]),
          }),
        ).messages as any[]
      )
        .map((m) => m.id)
        .filter((id: number) => ids.includes(id));
    const anchors = [62, 63, 64, 65, 66, 127, 128, 129, 130].map((i) => ids[i]);
    const gapAnchors = others.filter((id) => Math.abs(id - ids[64]) < 12 || Math.abs(id - ids[128]) < 12 || id < ids[0]);
    expect(gapAnchors.length).toBeGreaterThan(2);
    // The combined feed and -is:unread, walked the same way, must agree with the unread list.
    const feed = async (negated: boolean | null, anchor: number, num_before: number, num_after: number) =>
      (
        expectSuccess(
          await s.as("hamlet").get("/messages", { anchor, num_before, num_after, narrow: JSON.stringify(negated === null ? [] : [{ operator: "is", operand: "unread", negated }]) }),
        ).messages as any[]
      ).filter((m) => ids.includes(m.id));
    const checkFeeds = async () => {
      for (const anchor of anchors) {
        const all = await feed(null, anchor, 70, 70);
        const at = ids.indexOf(anchor);
        expect(all.map((m) => m.id)).toEqual(ids.slice(Math.max(0, at - 70), at + 71));
        for (const m of all) expect({ id: ids.indexOf(m.id), read: m.flags.includes("read") }).toEqual({ id: ids.indexOf(m.id), read: !expected.includes(m.id) });
        const read = await feed(true, anchor, 5, 5);
        const readIds = ids.filter((id) => !expected.includes(id));
        const i = readIds.findIndex((id) => id >= anchor);
        const j = i === -1 ? readIds.length : i;
        const incl = readIds[j] === anchor ? 1 : 0;
        expect(read.map((m) => m.id)).toEqual(readIds.slice(Math.max(0, j - 5), j + incl + 5));
      }
    };
    const check = async () => {
      for (const anchor of [...anchors, ...gapAnchors]) {
        for (const [b, a] of [
          [3, 3],
          [0, 5],
          [5, 0],
          [70, 0],
          [0, 70],
        ]) {
          for (const include of [true, false]) {
            const got = await walk(anchor, b, a, include);
            // Built from the full list: the b unread before (and the anchor if unread and included), the a after.
            const idx = expected.findIndex((id) => id >= anchor);
            const anchorUnread = expected.includes(anchor);
            const beforeList = expected.slice(Math.max(0, idx - b), idx);
            const afterStart = anchorUnread ? idx + 1 : idx;
            const afterList = expected.slice(afterStart, afterStart + a);
            const want = [...beforeList, ...(anchorUnread && include ? [anchor] : []), ...afterList];
            expect({ anchor, b, a, include, got }).toEqual({ anchor, b, a, include, got: want });
          }
        }
      }
    };
    await check();
    await checkFeeds();
    await drain();
    expect(runsOf(hamlet).filter((r) => r.ids[0] >= ids[0]).length).toBe(3);
    expect(writtenUnreadLocation(store, hamlet, ids[65])).toEqual([ch.A, "walk"]);
    await check();
    await checkFeeds();
  });

  test("deletions: one message, a topic spanning runs (bulk), and message retention", async () => {
    const v = await runScenario({
      send: async (ctx) => [
        ...(await sendMany(ctx.ch.A, 140, (i) => (i % 2 ? "odd" : "even"))),
        // Retention takes these (channel B gets a one-day retention below).
        ...(await sendMany(ctx.ch.B, 3, () => "old")),
      ],
      async act({ ch, ids }) {
        expectSuccess(await s.as("iago").delete(`/messages/${ids[64]}`));
        await flags("hamlet", [ids[1], ids[2], ids[3]], "add", "read");
        expectSuccess(await s.as("iago").post(`/streams/${ch.A}/delete_topic`, { topic_name: "odd" }));
        expectSuccess(await s.as("desdemona").patch(`/streams/${ch.B}`, { message_retention_days: 1 }));
        await doExpireMessages(s.server.h, Date.now() / 1000 + 2 * 86400);
        for (const who of READERS) for (const id of ids.filter((_, i) => i % 2 === 1 || i >= 140 || i === 64)) expect(writtenUnreadLocation(s.server.h.store, s.users[who].id, id)).toBeUndefined();
        expectDisjointRuns(s.users.hamlet.id);
      },
    });
    const even = range(140).filter((i) => i % 2 === 0 && i !== 64);
    expect(v.hamlet.unread).toEqual(even.filter((i) => i !== 2));
    expect(v.polonius.unread).toEqual(even);
    expect(v.cordelia.unreadOlder).toEqual(even);
  });

  test("mentions (rows written when sent) and direct messages (rows written at once) beside runs", async () => {
    const v = await runScenario({
      async send(ctx) {
        const ids = [await send(ctx.ch.A, "m", "plain"), await send(ctx.ch.A, "m", "@**King Hamlet** look"), await send(ctx.ch.A, "m", "@**all** everyone")];
        ids.push(expectSuccess(await s.as("othello").post("/messages", { type: "direct", to: JSON.stringify([s.users.hamlet.id]), content: "direct" })).id);
        ids.push(await send(ctx.ch.A, "m", "plain again"));
        return ids;
      },
      async act({ ids }) {
        await flags("hamlet", [ids[1], ids[3]], "add", "read");
        await flags("hamlet", [ids[1]], "remove", "read");
        await flags("hamlet", [ids[2]], "add", "starred");
        await flags("polonius", [ids[2]], "add", "read");
      },
    });
    expect(v.hamlet.unread).toEqual([0, 1, 2, 4]);
    expect(v.hamlet.mentions).toEqual([1, 2]);
    expect(v.hamlet.flags[2]).toEqual(["starred", "wildcard_mentioned"]);
    expect(v.polonius.unread).toEqual([0, 1, 4]);
    expect(v.polonius.mentions).toEqual([]);
  });

  test("unsubscribing and subscribing again; a reader removed and re-added to a private channel", async () => {
    const nameOf = async (id: number) => expectSuccess(await s.as("iago").get(`/streams/${id}`)).stream.name as string;
    const v = await runScenario({
      async send(ctx) {
        return [...(await sendMany(ctx.ch.A, 3, () => "u")), ...(await sendMany(ctx.ch.P, 2, () => "p"))];
      },
      async act({ ch, ids }) {
        const a = await nameOf(ch.A);
        const p = await nameOf(ch.P);
        expectSuccess(await s.as("hamlet").delete("/users/me/subscriptions", { subscriptions: JSON.stringify([a]) }));
        // Read while unsubscribed.
        await flags("hamlet", [ids[0]], "add", "read");
        expectSuccess(await s.as("hamlet").post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: a }]) }));
        expectSuccess(await s.as("polonius").delete("/users/me/subscriptions", { subscriptions: JSON.stringify([a]) }));
        expectSuccess(await s.as("iago").delete("/users/me/subscriptions", { subscriptions: JSON.stringify([p]), principals: JSON.stringify([s.users.hamlet.id]) }));
        expectSuccess(await s.as("iago").post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: p }]), principals: JSON.stringify([s.users.hamlet.id]) }));
      },
    });
    expect(v.hamlet.unread).toEqual([1, 2, 3, 4]);
    // A guest who left a channel no longer reads its messages.
    expect(v.polonius.unread).toEqual([]);
    expect(v.polonius.unread_msgs).toEqual([]);
  });

  test("content edits that add and remove mentions of messages whose rows are in runs", async () => {
    const v = await runScenario({
      send: (ctx) => sendMany(ctx.ch.A, 4, () => "edits"),
      async act({ ids }) {
        const edit = async (id: number, content: string) => expectSuccess(await s.as("othello").patch(`/messages/${id}`, { content }));
        await edit(ids[0], "now for @**King Hamlet**");
        await edit(ids[1], "now for @**King Hamlet**");
        await edit(ids[1], "not any more");
        await edit(ids[2], "@**Polonius** and @**all**");
        await flags("polonius", [ids[2]], "add", "read");
        await flags("hamlet", [ids[0]], "add", "read");
        await flags("hamlet", [ids[0]], "remove", "read");
      },
    });
    expect(v.hamlet.mentions).toEqual([0, 2]);
    expect(v.hamlet.flags[0]).toEqual(["mentioned"]);
    expect(v.hamlet.flags[1]).toEqual([]);
    expect(v.hamlet.unread).toEqual([0, 1, 2, 3]);
    expect(v.polonius.flags[2]).toEqual(["mentioned", "read", "wildcard_mentioned"]);
    expect(v.polonius.unread).toEqual([0, 1, 3]);
  });

  test("muting a sender marks their unread messages read, wherever the rows are", async () => {
    const v = await runScenario({
      async send(ctx) {
        const ids: number[] = [];
        for (let i = 0; i < 70; i++) ids.push(await send(ctx.ch.A, "mute", `m ${i}`, i % 2 ? "shiva" : "othello"));
        return ids;
      },
      async act() {
        expectSuccess(await s.as("cordelia").post(`/users/me/muted_users/${s.users.shiva.id}`));
        expectSuccess(await s.as("cordelia").delete(`/users/me/muted_users/${s.users.shiva.id}`));
      },
    });
    expect(v.cordelia.unread).toEqual(range(70).filter((i) => i % 2 === 0));
    expect(v.hamlet.unread).toEqual(range(70));
  });

  test("a whole topic of more than a run moved (change_all) to another channel, then read by topic and by channel", async () => {
    const v = await runScenario({
      send: (ctx) => sendMany(ctx.ch.A, 140, (i) => (i % 4 === 0 ? "stays" : "goes")),
      async act({ ch, ids }) {
        await flags("hamlet", [ids[1], ids[65], ids[66]], "add", "read");
        await move(ids[5], { stream_id: ch.B, topic: "went" }, "change_all");
        expectSuccess(await s.as("polonius").post("/mark_topic_as_read", { stream_id: ch.B, topic_name: "went" }));
        expectSuccess(await s.as("hamlet").post("/mark_stream_as_read", { stream_id: ch.A }));
        await move(ids[9], { topic: "back" }, "change_later");
        await move(ids[9], { stream_id: ch.A }, "change_all");
      },
    });
    const goes = range(140).filter((i) => i % 4 !== 0);
    // Hamlet read A while the topic was in B; from 9 on it came back to A, still unread.
    expect(v.hamlet.unread).toEqual(goes.filter((i) => i !== 1 && i !== 65 && i !== 66));
    expect(v.hamlet.unread_msgs.every(([i, c, topic]) => (i < 9 ? c === "B" && topic === "went" : c === "A" && topic === "back"))).toBe(true);
    // Polonius read the whole moved topic in B.
    expect(v.polonius.unread).toEqual(range(140).filter((i) => i % 4 === 0));
    // Cordelia is not in B: the move took the topic's rows from her.
    expect(v.cordelia.unread).toEqual(range(140).filter((i) => i % 4 === 0));
  });

  test("POST /messages/flags/narrow over is:unread windows that cross run boundaries", async () => {
    const v = await runScenario({
      send: (ctx) => sendMany(ctx.ch.A, 140, () => "n"),
      async act({ ids }) {
        const narrow = JSON.stringify([{ operator: "is", operand: "unread" }]);
        await flags("hamlet", [ids[60], ids[61]], "add", "read");
        const r = expectSuccess(await s.as("hamlet").post("/messages/flags/narrow", { narrow, anchor: ids[64], include_anchor: true, num_before: 5, num_after: 5, op: "add", flag: "read" }));
        // The window is of the whole is:unread narrow; count only what is this scenario's.
        expect(r.first_processed_id).toBe(ids[57]);
        expect(r.last_processed_id).toBe(ids[69]);
        const r2 = expectSuccess(await s.as("hamlet").post("/messages/flags/narrow", { narrow, anchor: ids[70], include_anchor: true, num_before: 0, num_after: 3, op: "add", flag: "starred" }));
        expect(r2.processed_count).toBe(4);
        expect(r2.first_processed_id).toBe(ids[70]);
        const r3 = expectSuccess(
          await s.as("polonius").post("/messages/flags/narrow", { narrow: JSON.stringify([]), anchor: ids[127], include_anchor: true, num_before: 2, num_after: 2, op: "add", flag: "read" }),
        );
        expect(r3.updated_count).toBe(5);
      },
    });
    expect(v.hamlet.unread).toEqual(range(140).filter((i) => i < 57 || i > 69));
    expect(v.hamlet.flags[73]).toEqual(["starred"]);
    expect(v.polonius.unread).toEqual(range(140).filter((i) => i < 125 || i > 129));
  });
});

/**
 * Random sequences of reads, stars, moves (within and across channels, into a private
 * one), deletions, mark-as-read by topic, channel and narrow, run three times with the
 * same seed: the job never run, run often, or cut short (some users' runs written, the
 * watermark left) at random points. The answers and reads must be the same. For a longer
 * search: AUDIT_SEEDS=1,2,…,40 AUDIT_COUNT=160 AUDIT_STEPS=50 (160 messages split runs).
 */
describe("unread runs: random sequences of changes, with the job run at different points", () => {
  /** A small seeded generator (mulberry32): the same sequence for every variant. */
  function rng(seed: number) {
    return () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
      return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
    };
  }

  type Variant = "never" | "often" | "partial";

  async function runRandom(seed: number, variant: Variant) {
    const ch = await quietChannels();
    const ctx: Ctx = { mode: "implicit", ch, ids: [] };
    const random = rng(seed);
    const pick = <T,>(list: readonly T[]) => list[Math.floor(random() * list.length)];
    const jobRandom = rng(seed * 7919);
    const count = Number(process.env.AUDIT_COUNT ?? 90);
    for (let i = 0; i < count; i++) ctx.ids.push(await send(i % 5 === 4 ? ch.B : ch.A, `t${i % 3}`, `random ${i}`));
    const log: unknown[] = [];
    const store = s.server.h.store;
    const job = async () => {
      if (variant === "never") return;
      if (variant === "often" || jobRandom() < 0.5) {
        await drain();
        return;
      }
      // A batch cut short: some users' runs written, the watermark left.
      const batch = planDeferredUnreadRows(store, 500);
      if (!batch) return;
      const users = READERS.map((r) => s.users[r].id).filter(() => jobRandom() < 0.6);
      const byUser = new Map(users.map((u) => [u, [...batch.lists].filter(([, list]) => list.includes(u)).map(([id]) => id)]));
      await store.commit(() => writeDeferredUnreadRows(store, batch, byUser, false));
    };
    await job();
    for (let step = 0; step < Number(process.env.AUDIT_STEPS ?? 30); step++) {
      const op = random();
      const who = pick(READERS);
      const some = [...new Set([0, 1, 2, 3].map(() => Math.floor(random() * count)))].map((i) => ctx.ids[i]);
      let res;
      if (op < 0.3) res = await s.as(who).post("/messages/flags", { messages: some, op: random() < 0.7 ? "add" : "remove", flag: "read" });
      else if (op < 0.45) res = await s.as(who).post("/messages/flags", { messages: some, op: random() < 0.7 ? "add" : "remove", flag: "starred" });
      else if (op < 0.65) {
        const to = pick([{ topic: `moved ${step}` }, { stream_id: ch.B }, { stream_id: ch.A, topic: "back" }, { stream_id: ch.C }, { stream_id: ch.P }]);
        res = await s.as("iago").patch(`/messages/${some[0]}`, { ...to, propagate_mode: pick(["change_one", "change_later", "change_all"]), send_notification_to_old_thread: false, send_notification_to_new_thread: false });
      } else if (op < 0.72) res = await s.as("iago").delete(`/messages/${some[0]}`);
      else if (op < 0.8) res = await s.as(who).post("/mark_topic_as_read", { stream_id: pick([ch.A, ch.B]), topic_name: pick(["t0", "t1", "back"]) });
      else if (op < 0.85) res = await s.as(who).post("/mark_stream_as_read", { stream_id: pick([ch.A, ch.B]) });
      else if (op < 0.9) {
        // Narrows within the scenario's channels: counts over the whole feed would include other tests' messages.
        const narrow = JSON.stringify(
          pick([
            [{ operator: "channel", operand: ch.A }, { operator: "is", operand: "unread" }],
            [{ operator: "channel", operand: ch.A }],
            [{ operator: "channel", operand: ch.B }, { operator: "topic", operand: "t1" }],
          ]),
        );
        res = await s.as(who).post("/messages/flags/narrow", { narrow, anchor: some[0], include_anchor: true, num_before: 3, num_after: 3, op: "add", flag: "read" });
        if (res.status === 200) res = { status: 200, body: { result: "success", processed: [res.body.processed_count, res.body.updated_count] } };
      } else {
        await job();
        continue;
      }
      log.push([step, res.status, res.body.result === "success" ? (res.body.processed ?? "ok") : res.body.msg]);
    }
    const before = await views(ctx);
    await drain();
    const after = await views(ctx);
    expect(after).toEqual(before);
    for (const r of READERS) expectDisjointRuns(s.users[r].id);
    return { log, reads: before };
  }

  for (const seed of (process.env.AUDIT_SEEDS ?? "1,2,3,4").split(",").map(Number)) {
    test(`seed ${seed}: the same answers whether the job ran never, often, or cut short, before the changes`, async () => {
      const never = await runRandom(seed, "never");
      const often = await runRandom(seed, "often");
      const partial = await runRandom(seed, "partial");
      expect(often).toEqual(never);
      expect(partial).toEqual(never);
    });
  }
});

describe("unread runs: the job's batches", () => {
  test("a batch written in several commits with changes between them, as the worker does with many users", async () => {
    const ch = await quietChannels();
    const store = s.server.h.store;
    const { hamlet, polonius, cordelia } = s.users;
    const ids = await sendMany(ch.A, 70, (i) => (i < 35 ? "first" : "second"));
    const batch = planDeferredUnreadRows(store, 500)!;
    const byUser = (userIds: number[]) => new Map(userIds.map((u) => [u, ids.filter((id) => batch.lists.get(id)?.includes(u))]));
    // First commit: hamlet's runs; the watermark stays.
    await store.commit(() => writeDeferredUnreadRows(store, batch, byUser([hamlet.id]), false));
    // Between commits: a move (locations change), a move into P (polonius and cordelia lose it), reads and a deletion.
    await move(ids[3], { topic: "between" });
    await move(ids[40], { stream_id: ch.P });
    await flags("cordelia", [ids[10]], "add", "read");
    await flags("hamlet", [ids[11], ids[64]], "add", "read");
    expectSuccess(await s.as("iago").delete(`/messages/${ids[20]}`));
    // Last commit: the others, with the batch planned before the changes.
    await store.commit(() => writeDeferredUnreadRows(store, batch, byUser([polonius.id, cordelia.id]), true));
    expect(unreadWatermark(store)).toBeGreaterThanOrEqual(ids[69]);
    await drain();
    const unreadOf = async (who: Reader) =>
      (expectSuccess(await s.as(who).get("/messages", { anchor: ids[0], num_before: 0, num_after: 200, narrow: JSON.stringify([{ operator: "is", operand: "unread" }]) })).messages as any[])
        .map((m) => ids.indexOf(m.id))
        .filter((i) => i >= 0);
    expect(await unreadOf("hamlet")).toEqual(range(70).filter((i) => ![11, 20, 64].includes(i)));
    expect(await unreadOf("polonius")).toEqual(range(70).filter((i) => ![20, 40].includes(i)));
    expect(await unreadOf("cordelia")).toEqual(range(70).filter((i) => ![10, 20, 40].includes(i)));
    for (const who of [hamlet, polonius, cordelia]) {
      expect(getUserFlags(store, who.id, ids[20])).toBeUndefined();
      if (who !== hamlet) expect(getUserFlags(store, who.id, ids[40])).toBeUndefined();
      expect(writtenUnreadLocation(store, who.id, ids[3])).toEqual([ch.A, "between"]);
      expectDisjointRuns(who.id);
    }
    expect(writtenUnreadLocation(store, hamlet.id, ids[40])).toEqual([ch.P, "second"]);
  });

  test("concurrent requests rewriting the same run (batched commits) lose no change", async () => {
    const ch = await quietChannels();
    const store = s.server.h.store;
    const hamlet = s.users.hamlet.id;
    const ids = await sendMany(ch.A, 60, () => "together");
    await drain();
    expect(runsOf(hamlet).filter((r) => r.ids[0] >= ids[0]).length).toBe(1);
    // All at once: reads of single messages, moves, a star and deletions, each rewriting hamlet's one run.
    const reads = range(20).map((i) => ids[i * 3]);
    const moved = [ids[1], ids[4], ids[7], ids[10]];
    const deleted = [ids[31], ids[32]];
    await Promise.all([
      ...reads.map((id) => flags("hamlet", [id], "add", "read")),
      ...moved.map((id) => move(id, { topic: `apart ${id}` })),
      ...deleted.map(async (id) => expectSuccess(await s.as("iago").delete(`/messages/${id}`))),
      flags("hamlet", [ids[59]], "add", "starred"),
    ]);
    const expected = ids.filter((id) => !reads.includes(id) && !deleted.includes(id));
    const state = await register(s.as("hamlet"), { event_types: ["message", "update_message_flags"] });
    const listed = state.unread_msgs.streams.filter((x: any) => x.stream_id === ch.A).flatMap((x: any) => x.unread_message_ids).sort((a: number, b: number) => a - b);
    expect(listed).toEqual(expected);
    for (const id of moved) expect(writtenUnreadLocation(store, hamlet, id)).toEqual([ch.A, `apart ${id}`]);
    for (const id of [...reads, ...deleted]) expect(writtenUnreadLocation(store, hamlet, id)).toBeUndefined();
    expect(getUserFlags(store, hamlet, ids[59])).toBe(2);
  });

  test("a batch over more than 100 users (several commits of the worker) with changes arriving while it writes", async () => {
    await drain();
    const store = s.server.h.store;
    const many: Awaited<ReturnType<TestServer["createUser"]>>[] = [];
    for (let i = 0; i < 130; i++) many.push(await s.createUser(`audit${i}`));
    const ch = await s.createChannel("iago", "audit crowd", ["othello", "hamlet"]);
    expectSuccess(await s.as("iago").post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "audit crowd" }]), principals: JSON.stringify(many.map((u) => u.id)) }));
    await drain();
    const ids: number[] = [];
    for (let i = 0; i < 80; i++) ids.push(await send(ch, "crowd", `crowd ${i}`));
    // While the worker writes the batch (one commit per 100 users), users read, a message moves and one is deleted.
    const readBy = new Map(many.filter((_, i) => i % 9 === 0).map((u, k) => [u, [ids[k % 80], ids[(k * 7 + 64) % 80]]]));
    await Promise.all([
      drain(),
      ...[...readBy].map(async ([u, list]) => expectSuccess(await s.as(u).post("/messages/flags", { messages: list, op: "add", flag: "read" }))),
      move(ids[70], { topic: "crowd moved" }),
      (async () => expectSuccess(await s.as("iago").delete(`/messages/${ids[71]}`)))(),
    ]);
    await drain();
    expect(unreadWatermark(store)).toBeGreaterThanOrEqual(ids[79]);
    for (const [k, u] of many.entries()) {
      const read = readBy.get(u) ?? [];
      const want = ids.filter((id) => id !== ids[71] && !read.includes(id));
      if (k % 9 === 0 || k % 17 === 0) {
        const got = expectSuccess(await s.as(u).get("/messages", { anchor: ids[0], num_before: 0, num_after: 200, narrow: JSON.stringify([{ operator: "is", operand: "unread" }]) }));
        expect({ k, got: got.messages.map((m: any) => m.id).filter((id: number) => ids.includes(id)) }).toEqual({ k, got: want });
      }
      for (const id of ids) expect({ k, id, flags: getUserFlags(store, u.id, id) }).toEqual({ k, id, flags: id === ids[71] ? undefined : read.includes(id) ? 1 : 0 });
      if (!read.includes(ids[70])) expect(writtenUnreadLocation(store, u.id, ids[70])).toEqual([ch, "crowd moved"]);
      expectDisjointRuns(u.id);
    }
  });

  // "from before the mark": a data folder written before batches marked themselves in
  // progress (UNREAD_BATCH_IN_PROGRESS), whose partial batch carries no mark.
  for (const folder of ["this version's", "from before the mark"] as const) {
    test(`a batch cut short and planned again with other run boundaries leaves no stale run behind (data folder ${folder})`, async () => {
      const ch = await quietChannels();
      const store = s.server.h.store;
      const hamlet = s.users.hamlet.id;
      const ids = await sendMany(ch.A, 150, () => "replan");
      // The first commit of a batch wrote hamlet's runs for 100 messages (boundary at his 65th), then the worker stopped.
      const partial = planDeferredUnreadRows(store, 500)!;
      await store.commit(() => writeDeferredUnreadRows(store, partial, new Map([[hamlet, ids.slice(0, 100)]]), false));
      expect(runsOf(hamlet).filter((r) => r.ids[0] >= ids[0]).map((r) => r.start)).toEqual([partial.start, ids[64]]);
      if (folder === "from before the mark") await store.commit(() => store.dbs.meta.remove(["unreadBatchInProgress"]));
      // He reads ten: the batch planned again has his boundaries at ids[74] and ids[138].
      await flags("hamlet", ids.slice(0, 10), "add", "read");
      await drain();
      expect(unreadWatermark(store)).toBeGreaterThanOrEqual(ids[149]);
      expect(store.dbs.meta.get(["unreadBatchInProgress"])).toBe(0);
      expectDisjointRuns(hamlet);
      // Reading a message that the first attempt's second run held must make it read.
      await flags("hamlet", [ids[70]], "add", "read");
      expect(getUserFlags(store, hamlet, ids[70])).toBe(1);
      const unread = expectSuccess(await s.as("hamlet").get("/messages", { anchor: ids[0], num_before: 0, num_after: 300, narrow: JSON.stringify([{ operator: "is", operand: "unread" }]) }));
      expect(unread.messages.map((m: any) => m.id).filter((id: number) => ids.includes(id))).toEqual(ids.filter((_, i) => i >= 10 && i !== 70));
    });
  }

  test("a batch cut short, then moves, reads and a loss of access before it is planned again", async () => {
    const ch = await quietChannels();
    const store = s.server.h.store;
    const { hamlet, polonius, cordelia } = s.users;
    const ids = await sendMany(ch.A, 80, () => "cut");
    const partial = planDeferredUnreadRows(store, 500)!;
    await store.commit(() =>
      writeDeferredUnreadRows(
        store,
        partial,
        new Map([
          [hamlet.id, ids],
          [polonius.id, ids],
        ]),
        false,
      ),
    );
    // Hamlet's and Polonius's rows are in runs now, Cordelia's still implicit.
    await move(ids[70], { topic: "cut moved" });
    await move(ids[71], { stream_id: ch.P });
    await flags("hamlet", [ids[5], ids[66]], "add", "read");
    await flags("hamlet", [ids[66]], "remove", "read");
    const expectReads = async () => {
      expect(writtenUnreadLocation(store, hamlet.id, ids[70])).toEqual([ch.A, "cut moved"]);
      expect(writtenUnreadLocation(store, polonius.id, ids[70])).toEqual([ch.A, "cut moved"]);
      expect(writtenUnreadLocation(store, hamlet.id, ids[71])).toEqual([ch.P, "cut"]);
      expect(getUserFlags(store, polonius.id, ids[71])).toBeUndefined();
      expect(getUserFlags(store, cordelia.id, ids[71])).toBeUndefined();
      expect(getUserFlags(store, hamlet.id, ids[5])).toBe(1);
      expect(getUserFlags(store, hamlet.id, ids[66])).toBe(0);
      for (const who of [hamlet, polonius, cordelia]) {
        const state = await register(s.as(who), { event_types: ["message", "update_message_flags"] });
        const moved = state.unread_msgs.streams.find((x: any) => x.stream_id === ch.A && x.topic === "cut moved");
        expect(moved?.unread_message_ids).toEqual([ids[70]]);
      }
    };
    await expectReads();
    await drain();
    await expectReads();
    for (const who of [hamlet.id, polonius.id]) expectDisjointRuns(who);
  });

  test("runs and a batch cut short survive a restart; the restarted job finishes the batch", async () => {
    const env = { HEARTH_UNREAD_ROWS_INTERVAL_MS: String(3600_000) };
    const first = await startTestServer({ env });
    let second: TestServer | null = null;
    try {
      const ch = await first.createChannel("iago", "restart runs", ["othello", "hamlet", "polonius"]);
      await first.server.unreadRows.drain();
      const sendAs = async (n: number) => {
        const ids: number[] = [];
        for (let i = 0; i < n; i++) ids.push(expectSuccess(await first.as("othello").post("/messages", { type: "stream", to: ch, topic: "r", content: `r ${i}` })).id);
        return ids;
      };
      const written = await sendAs(70);
      await first.server.unreadRows.drain();
      const cut = await sendAs(70);
      const store = first.server.h.store;
      const partial = planDeferredUnreadRows(store, 500)!;
      await store.commit(() => writeDeferredUnreadRows(store, partial, new Map([[first.users.hamlet.id, cut]]), false));
      await markRead(first, "hamlet", [written[0], written[64], cut[0], cut[64]]);
      const ids = [...written, ...cut];
      const read = async (srv: TestServer, who: "hamlet" | "polonius") => {
        const state = await register(srv.as(first.users[who]), { event_types: ["message", "update_message_flags"] });
        const listed = state.unread_msgs.streams.flatMap((x: any) => x.unread_message_ids).filter((id: number) => ids.includes(id));
        const walked = expectSuccess(await srv.as(first.users[who]).get("/messages", { anchor: ids[0], num_before: 0, num_after: 500, narrow: JSON.stringify([{ operator: "is", operand: "unread" }]) }));
        return { listed: listed.sort((a: number, b: number) => a - b), walked: walked.messages.map((m: any) => m.id).filter((id: number) => ids.includes(id)) };
      };
      const expected = { hamlet: ids.filter((id) => ![written[0], written[64], cut[0], cut[64]].includes(id)), polonius: ids };
      expect({ hamlet: await read(first, "hamlet"), polonius: await read(first, "polonius") }).toEqual({
        hamlet: { listed: expected.hamlet, walked: expected.hamlet },
        polonius: { listed: ids, walked: ids },
      });
      await first.server.stop();
      second = await startTestServer({ dataDir: first.dataDir, env });
      const srv = second;
      expect(unreadWatermark(srv.server.h.store)).toBeLessThan(cut[0]);
      const again = { hamlet: await read(srv, "hamlet"), polonius: await read(srv, "polonius") };
      expect(again).toEqual({ hamlet: { listed: expected.hamlet, walked: expected.hamlet }, polonius: { listed: ids, walked: ids } });
      await srv.server.unreadRows.drain();
      expect(unreadWatermark(srv.server.h.store)).toBeGreaterThanOrEqual(cut[69]);
      expect({ hamlet: await read(srv, "hamlet"), polonius: await read(srv, "polonius") }).toEqual(again);
      expectSuccess(await srv.as(first.users.hamlet).post("/messages/flags", { messages: [cut[65], written[65]], op: "add", flag: "read" }));
      expect((await read(srv, "hamlet")).walked).toEqual(expected.hamlet.filter((id) => id !== cut[65] && id !== written[65]));
    } finally {
      if (second) await second.server.stop();
      else await first.server.stop().catch(() => {});
      await first.stop().catch(() => {});
    }
  });
});
