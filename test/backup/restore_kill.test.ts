/**
 * `hearth restore` killed with SIGKILL at several points of its work (unpacking the
 * store, unpacking the uploads, checking them): no data folder appears under the name
 * asked for, the backup file is unchanged, and the next restore to that name clears
 * what the killed one left and succeeds. The clearing touches only working folders of
 * runs that are gone, never anything else beside the target.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ApiClient, expectSuccess, startTestServer, type TestServer } from "../kit";
import { hearth, MAIN, tempDir } from "../kit/process";

let s: TestServer;
let dir: string;
let archive: string;
let archiveHash: string;
const FILES = 6;
const FILE_BYTES = 6 * 1024 * 1024;

const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

beforeAll(async () => {
  s = await startTestServer();
  const channelId = await s.createChannel("iago", "archive", ["hamlet", "othello"]);
  // Incompressible uploads, so that unpacking and checking the backup take a while.
  for (let i = 0; i < FILES; i++) {
    const url = expectSuccess(await s.as("hamlet").post("/user_uploads", { file: new File([randomBytes(FILE_BYTES)], `blob-${i}.bin`) }, { multipart: true })).url;
    expectSuccess(await s.as("hamlet").post("/messages", { type: "stream", to: channelId, topic: "files", content: `[blob ${i}](${url})` }));
  }
  dir = tempDir();
  archive = join(dir, "big.tar.gz");
  const backup = await hearth(["backup", "--data", s.dataDir, "--out", archive]);
  expect(backup.stderr).toBe("");
  expect(backup.code).toBe(0);
  archiveHash = sha256(archive);
}, 60_000);
afterAll(() => s.stop());

/** The restore's working folder beside `target`, once it holds `inside` (a path in it), or undefined if the restore ended first. */
async function waitForWork(proc: { exitCode: number | null }, target: string, inside: string): Promise<string | undefined> {
  const prefix = `.${target.split("/").pop()}.restoring-`;
  while (proc.exitCode === null) {
    const work = readdirSync(dir).find((n) => n.startsWith(prefix));
    if (work && existsSync(join(dir, work, inside))) return work;
    await Bun.sleep(1);
  }
  return undefined;
}

describe("a restore killed with SIGKILL", () => {
  test("leaves no data folder at any point, keeps the backup unchanged, and the next restore succeeds", async () => {
    const target = join(dir, "restored");
    // Points of the work, each seen in the working folder: it exists (the store is
    // being unpacked), the store is there, the uploads are being unpacked; then two
    // waits after the uploads appear (checksums, opening the store).
    const points: [string, string, number][] = [
      ["started", ".", 0],
      ["store unpacked", "db/data.mdb", 0],
      ["uploads unpacking", "uploads", 0],
      ["checking, early", "uploads", 150],
      ["checking, late", "uploads", 400],
    ];
    /** Starts a restore, kills it once its working folder holds `inside` (and `delay` ms more); its exit code and working folder. */
    const killRestoreAt = async (inside: string, delay: number) => {
      const proc = Bun.spawn([process.execPath, MAIN, "restore", "--from", archive, "--data", target], { stdout: "pipe", stderr: "pipe" });
      const work = await waitForWork(proc, target, inside);
      if (delay > 0) await Bun.sleep(delay);
      proc.kill(9);
      return { code: await proc.exited, work };
    };
    let killedMidway = 0;
    for (const [label, inside, delay] of points) {
      const { code, work } = await killRestoreAt(inside, delay);
      if (code !== 0) {
        // Killed before the rename: no data folder, only the working folder.
        expect([label, existsSync(target)]).toEqual([label, false]);
        if (work) killedMidway++;
      } else {
        // It finished first: the folder is whole; clear it for the next point.
        expect((await hearth(["verify-backup", archive])).code).toBe(0);
        await Bun.$`rm -rf ${target}`;
      }
      expect(sha256(archive)).toBe(archiveHash);
    }
    // The large backup let most kills land halfway (else this test proves little).
    expect(killedMidway).toBeGreaterThanOrEqual(3);
    // On a quick machine the last point's restore may finish first and clear the
    // earlier leftovers as it starts; one more kill halfway leaves some for the next restore.
    if (!readdirSync(dir).some((n) => n.startsWith(".restored.restoring-"))) expect((await killRestoreAt("db/data.mdb", 0)).code).not.toBe(0);
    expect(readdirSync(dir).some((n) => n.startsWith(".restored.restoring-"))).toBe(true);

    const again = await hearth(["restore", "--from", archive, "--data", target]);
    expect(again.stderr).toBe("");
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`and ${FILES} uploaded files into ${target}`);
    expect(readdirSync(dir).sort()).toEqual(["big.tar.gz", "restored"]);
    expect(sha256(archive)).toBe(archiveHash);
    const served = await startTestServer({ dataDir: target });
    try {
      const hamlet = new ApiClient(served.url, s.users.hamlet.email, s.users.hamlet.apiKey);
      const me = expectSuccess(await hamlet.get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow: JSON.stringify([{ operator: "topic", operand: "files" }]) }));
      expect(me.messages.length).toBe(FILES);
    } finally {
      await served.server.stop();
    }
  }, 120_000);

  test("clearing a killed restore's leftovers removes nothing else beside the target", async () => {
    const target = join(dir, "careful");
    const keep = [
      // The user's own files, named like working folders but not exactly.
      ".careful.restoring-notes",
      ".careful.restoring-123-notahexname0",
      ".careful.importing-1-0123456789ab",
      ".carefully.restoring-1-0123456789ab",
      // A working folder of a restore still running (this test's own process stands in for it).
      `.careful.restoring-${process.pid}-0123456789ab`,
    ];
    for (const name of keep) {
      mkdirSync(join(dir, name));
      writeFileSync(join(dir, name, "precious.txt"), "keep me");
    }
    // A folder of a restore that is gone (no process has ID 2^22 + 1 on Linux, above pid_max's default).
    const stale = ".careful.restoring-4194305-abcdef012345";
    mkdirSync(join(dir, stale));
    writeFileSync(join(dir, stale, "half.mdb"), "half");
    const r = await hearth(["restore", "--from", archive, "--data", target]);
    expect(r.code).toBe(0);
    expect(existsSync(join(dir, stale))).toBe(false);
    for (const name of keep) expect([name, readFileSync(join(dir, name, "precious.txt"), "utf8")]).toEqual([name, "keep me"]);
  }, 60_000);
});
