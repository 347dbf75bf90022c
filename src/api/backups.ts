import { createReadStream, existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { once } from "node:events";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import type { Hearth } from "../context";
import { ApiRoutes } from "../http/route";
import { createBackup } from "../backup/create";
import { checkOwner } from "../access/users";

/**
 * Hearth's own backups, for the administration page (owners only, like Zulip's
 * organization exports): the schedule and its last result, and a fresh backup to
 * download.
 */
export function backupRoutes(h: Hearth) {
  return new ApiRoutes(h)
    .get("/hearth/backups", {}, ({ user }) => {
      checkOwner(user);
      const schedule = h.backups;
      return {
        schedule: schedule ? { every_seconds: schedule.config.everyMs / 1000, dir: schedule.config.dir, keep: schedule.config.keep } : null,
        last: schedule?.last ?? null,
        // A run's pruning may remove a file between the listing and its stat: it is left out.
        backups: (schedule?.backups() ?? []).reverse().flatMap((name) => {
          const stat = statSync(join(schedule!.config.dir, name), { throwIfNoEntry: false });
          return stat ? [{ name, size: stat.size, created: Math.floor(stat.mtimeMs / 1000) }] : [];
        }),
      };
    })
    .get("/hearth/backup", {}, async ({ user }) => {
      checkOwner(user);
      const scratch = mkdtempSync(join(tmpdir(), "hearth-download-"));
      const name = `hearth-backup-${new Date().toISOString().slice(0, 19).replace(/[-:]/g, "").replace("T", "-")}.tar.gz`;
      const file = join(scratch, name);
      try {
        await createBackup({ dataDir: h.store.dataDir, store: h.store }, file);
        const stream = createReadStream(file);
        await once(stream, "open");
        // Open: the folder can go now, and the bytes go with the last reader.
        rmSync(scratch, { recursive: true, force: true });
        return new Response(Readable.toWeb(stream) as unknown as ReadableStream, {
          headers: {
            "content-type": "application/gzip",
            "content-disposition": `attachment; filename="${name}"`,
            "cache-control": "no-store",
            "x-content-type-options": "nosniff",
          },
        });
      } finally {
        if (existsSync(scratch)) rmSync(scratch, { recursive: true, force: true });
      }
    });
}

