/**
 * Store format 2 (src/store/format.ts): unread runs are stored as varint distances
 * instead of float64 pairs. A format-1 store (runs in the old encoding, version 1 or
 * none recorded) must open in a Hearth of format 2, its runs upgraded at start, and
 * read exactly as before: the same unread messages listed and walked.
 */
import { expect, test } from "bun:test";
import { expectSuccess, startTestServer, type TestServer } from "../kit";
import { register } from "../kit/events";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Store } from "../../src/store/db";
import { restoreBackup, verifyBackup } from "../../src/backup/restore";
import { STORE_FORMAT_VERSION } from "../../src/store/format";
import { decodeRun, encodeRun } from "../../src/store/unread_run_encoding";

test("a run's encoding round-trips IDs far apart, up to the largest safe ID, with their places", () => {
  const start = 5;
  const ids = [5, 6, 7, 200, 70_000, 2 ** 31 + 3, 2 ** 33, Number.MAX_SAFE_INTEGER];
  const placeAt = [0, 0, 1, 2, 255, 3, 1, 0];
  const run = decodeRun(start, encodeRun(start, ids, placeAt));
  expect([...run.ids]).toEqual(ids);
  expect([...run.placeAt]).toEqual(placeAt);
  expect(encodeRun(start, [5, 6, 7], [0, 0, 0]).length).toBe(7);
  expect(() => encodeRun(10, [9], [0])).toThrow(RangeError);
});

/** Format 1's run record: the IDs, then the place positions, all float64. */
function format1Run(ids: ArrayLike<number>, placeAt: ArrayLike<number>): Buffer {
  const values = new Float64Array(ids.length * 2);
  values.set(ids);
  values.set(placeAt, ids.length);
  return Buffer.from(values.buffer);
}

test("a format-1 store opens: its runs are upgraded at start and unread state reads the same", () => upgradeScenario(false));

test("an upgrade cut short (some users' runs already in format 2) resumes where it stopped", () => upgradeScenario(true));

/**
 * `partial`: as if a start had crashed midway through the upgrade: the runs of users
 * below the progress mark are already in format 2, the others still in format 1.
 */
async function upgradeScenario(partial: boolean) {
  const env = { HEARTH_UNREAD_ROWS_INTERVAL_MS: String(3600_000) };
  const first = await startTestServer({ env });
  let second: TestServer | undefined;
  try {
    const ch = await first.createChannel("iago", "upgrade", ["othello", "hamlet", "polonius"]);
    const ids: number[] = [];
    for (let i = 0; i < 70; i++) ids.push(expectSuccess(await first.as("othello").post("/messages", { type: "stream", to: ch, topic: i < 40 ? "a" : "b", content: `u ${i}` })).id);
    await first.server.unreadRows.drain();
    expectSuccess(await first.as("hamlet").post("/messages/flags", { messages: [ids[3], ids[64]], op: "add", flag: "read" }));
    const read = async (srv: TestServer, who: "hamlet" | "polonius") => {
      const client = srv.as(first.users[who]);
      const state = await register(client, { event_types: ["message", "update_message_flags"] });
      const listed = state.unread_msgs.streams.flatMap((x: any) => x.unread_message_ids).filter((id: number) => ids.includes(id));
      const walked = expectSuccess(await client.get("/messages", { anchor: ids[0], num_before: 0, num_after: 500, narrow: JSON.stringify([{ operator: "is", operand: "unread" }]) }));
      const topicB = expectSuccess(await client.get("/messages", { anchor: "newest", num_before: 100, num_after: 0, narrow: JSON.stringify([{ operator: "is", operand: "unread" }, { operator: "channel", operand: ch }, { operator: "topic", operand: "b" }]) }));
      return { listed: listed.sort((a: number, b: number) => a - b), walked: walked.messages.map((m: any) => m.id), topicB: topicB.messages.map((m: any) => m.id) };
    };
    const before = { hamlet: await read(first, "hamlet"), polonius: await read(first, "polonius") };
    expect(before.hamlet.listed).toEqual(ids.filter((id) => id !== ids[3] && id !== ids[64]));
    expect(before.polonius.topicB).toEqual(ids.slice(40));
    await first.server.stop();

    // Back to format 1: every run re-encoded as float64 pairs (with `partial`, only those of
    // users from the higher of the two readers' IDs on), the version as a format-1 store has it.
    const store = new Store(first.dataDir);
    const resumeAt = Math.max(first.users.hamlet.id, first.users.polonius.id);
    let runs = 0;
    await store.commit(() => {
      for (const { key, value } of store.dbs.userMessageIndex.getRange({})) {
        if ((key as unknown[])[1] !== "unreadBatch" || (partial && (key as number[])[0] < resumeAt)) continue;
        const run = decodeRun((key as number[])[2], value);
        store.dbs.userMessageIndex.put(key, format1Run(run.ids, run.placeAt));
        runs++;
      }
      store.dbs.meta.put("store_format_version", 1);
      if (partial) store.dbs.meta.put(["format2RunsUpgradedBelowUser"], resumeAt);
    });
    await store.close();
    expect(runs).toBeGreaterThanOrEqual(partial ? 2 : 4);

    second = await startTestServer({ dataDir: first.dataDir, env });
    expect(second.server.h.store.dbs.meta.get("store_format_version")).toBe(STORE_FORMAT_VERSION);
    // The store as it was, backed up before the upgrade touched it: it restores as format 1.
    const backups = `${first.dataDir}-backups`;
    try {
      const taken = readdirSync(backups);
      expect(taken).toEqual([expect.stringMatching(new RegExp(`^hearth-before-format-${STORE_FORMAT_VERSION}-from-1-\\d{8}-\\d{6}\\.tar\\.gz$`))]);
      expect((await verifyBackup(join(backups, taken[0]))).store_format_version).toBe(1);
      if (!partial) {
        const restored = join(backups, "restored");
        await restoreBackup(join(backups, taken[0]), restored);
        const old = new Store(restored);
        expect(old.dbs.meta.get("store_format_version")).toBe(1);
        await old.close();
      }
      // Started again, the upgraded store takes no second backup.
      await second.server.stop();
      second = await startTestServer({ dataDir: first.dataDir, env });
      expect(readdirSync(backups).filter((name) => name.endsWith(".tar.gz"))).toEqual(taken);
    } finally {
      rmSync(backups, { recursive: true, force: true });
    }
    expect(second.server.h.store.dbs.meta.get(["format2RunsUpgradedBelowUser"])).toBeUndefined();
    expect({ hamlet: await read(second, "hamlet"), polonius: await read(second, "polonius") }).toEqual(before);
    // The upgraded runs still change as runs do.
    expectSuccess(await second.as(first.users.polonius).post("/messages/flags", { messages: [ids[0], ids[69]], op: "add", flag: "read" }));
    expect((await read(second, "polonius")).walked).toEqual(ids.slice(1, 69));
  } finally {
    if (second) await second.server.stop();
    else await first.server.stop().catch(() => {});
    await first.stop().catch(() => {});
  }
}
