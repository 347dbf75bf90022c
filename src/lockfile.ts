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
    return true;
  } catch (e: any) {
    return e?.code === "EPERM";
  }
}
