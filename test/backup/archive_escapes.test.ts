/**
 * A backup that holds, besides everything a real one holds, an entry that would land
 * outside the restore's folder: one climbing out with `..`, one at an absolute path,
 * one under `uploads/` that climbs back out. The restore refuses it, writes nothing
 * outside, and leaves no data folder; `verify-backup` refuses it too.
 */
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as tar from "tar";
import { hearth, tempDir } from "../kit/process";
import { tarEntry } from "../kit/tar";

test("a backup with an entry that escapes its folder is refused and writes nothing outside", async () => {
  const dir = tempDir();
  const dataDir = join(dir, "data");
  expect((await hearth(["init", "--data", dataDir, "--realm-name", "Escapes", "--owner-email", "o@escapes.test", "--owner-password", "a long password"])).code).toBe(0);
  const good = join(dir, "good.tar.gz");
  expect((await hearth(["backup", "--data", dataDir, "--out", good])).code).toBe(0);
  const unpacked = join(dir, "unpacked");
  mkdirSync(unpacked);
  await tar.x({ file: good, cwd: unpacked });
  const goodTar = join(dir, "good.tar");
  await tar.c({ file: goodTar, cwd: unpacked, portable: true }, readdirSync(unpacked));
  rmSync(unpacked, { recursive: true });

  const absolute = join(dir, "absolute.txt");
  const cases: [string, string][] = [
    ["climb", "../escaped.txt"],
    ["climb-deep", "uploads/1/../../../escaped.txt"],
    ["absolute", absolute],
  ];
  for (const [name, entry] of cases) {
    const archive = join(dir, `${name}.tar.gz`);
    // The hostile entry first, then the whole real backup.
    writeFileSync(archive, Bun.gzipSync(Buffer.concat([tarEntry(entry, "escaped"), readFileSync(goodTar)])));
    const target = join(dir, `restored-${name}`);
    const r = await hearth(["restore", "--from", archive, "--data", target]);
    expect([name, r.code]).toEqual([name, 1]);
    expect(r.stderr).toMatch(/never has|manifest does not list/);
    expect(existsSync(target)).toBe(false);
    expect(existsSync(join(dir, "escaped.txt"))).toBe(false);
    expect(existsSync(absolute)).toBe(false);
    const v = await hearth(["verify-backup", archive]);
    expect([name, v.code]).toEqual([name, 1]);
  }
  expect(readdirSync(dir).filter((n) => n.startsWith(".") || n.includes("escaped"))).toEqual([]);
  // The real backup, unchanged, still restores.
  expect((await hearth(["restore", "--from", good, "--data", join(dir, "restored")])).code).toBe(0);
}, 60_000);
