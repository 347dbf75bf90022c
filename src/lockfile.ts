import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";

/**
 * One process per data folder: LMDB tolerates several, but the event queues and
 * rate limits live in memory, so a second server would split them.
 */
export class DataFolderLock {
  private constructor(private readonly path: string) {}

  static acquire(dataDir: string): DataFolderLock {
    const path = join(dataDir, "hearth.pid");
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(path, "wx", 0o600);
        writeSync(fd, String(process.pid));
        closeSync(fd);
        return new DataFolderLock(path);
      } catch (e: any) {
        if (e?.code !== "EEXIST") throw e;
        const pid = Number(readFileSync(path, "utf8").trim());
        if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processAlive(pid)) {
          throw new Error(`The data folder ${dataDir} is in use by another Hearth process (pid ${pid}).`);
        }
        unlinkSync(path); // left behind by a process that died
      }
    }
    throw new Error(`Could not lock the data folder ${dataDir}.`);
  }

  release(): void {
    try {
      unlinkSync(this.path);
    } catch {
      /* already gone */
    }
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e: any) {
    return e?.code === "EPERM";
  }
  return !isZombie(pid);
}

/**
 * A process that has exited but that its parent has not reaped yet still answers
 * kill(pid, 0), though it holds nothing (its files and LMDB's locks are released).
 * After a kill -9, a restart within the next second or so found the folder "in use"
 * when the parent reaped slowly (measured: 1.2 s as a zombie under a container's init).
 */
function isZombie(pid: number): boolean {
  try {
    // Linux: the state is the field after the command name, which is in parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) === "Z";
  } catch {
    return false;
  }
}
