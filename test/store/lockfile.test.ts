/**
 * The data folder's lock (src/lockfile.ts): one server per folder, and a lock left by a
 * process that is gone does not keep the next one out.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DataFolderLock } from "../../src/lockfile";

function folderLockedBy(pid: number): string {
  const dir = mkdtempSync(join(tmpdir(), "hearth-lock-"));
  writeFileSync(join(dir, "hearth.pid"), String(pid));
  return dir;
}

test("a lock held by a live process refuses; one left by a process that exited is taken over", () => {
  const live = Bun.spawn(["sleep", "5"]);
  const busy = folderLockedBy(live.pid);
  const gone = folderLockedBy(2 ** 22 + 12345);
  try {
    expect(() => DataFolderLock.acquire(busy)).toThrow(`is in use by another Hearth process (pid ${live.pid})`);
    DataFolderLock.acquire(gone).release();
  } finally {
    live.kill();
    for (const dir of [busy, gone]) rmSync(dir, { recursive: true, force: true });
  }
});

test("a lock left by a process that was killed but not yet reaped by its parent (a zombie) is taken over", async () => {
  if (process.platform !== "linux") return;
  // The shell starts a short child, then becomes `sleep 5`, which never reaps it: for
  // a few seconds the child is a zombie, as a killed server is until its parent reaps it.
  const parent = Bun.spawn(["sh", "-c", "sleep 0.05 & echo $!; exec sleep 5"], { stdout: "pipe" });
  const reader = parent.stdout.getReader();
  const zombie = Number(new TextDecoder().decode((await reader.read()).value).trim());
  const dir = folderLockedBy(zombie);
  try {
    while (!readFileSync(`/proc/${zombie}/stat`, "utf8").includes(") Z ")) await Bun.sleep(10);
    const lock = DataFolderLock.acquire(dir);
    expect(readFileSync(join(dir, "hearth.pid"), "utf8")).toBe(String(process.pid));
    lock.release();
  } finally {
    parent.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});
