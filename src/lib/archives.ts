import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, openSync, readdirSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * The .tar.gz archives Hearth writes and reads (backups, Zulip-format exports).
 * node-tar is loaded with the first archive, not at start: the server's idle memory
 * (docs/benchmarks.md).
 */
const loadTar = () => import("tar");

export class DamagedArchiveError extends Error {}

/** Writes `entries` (paths under `cwd`) into a gzipped tar at `file`, without owners or times that vary. */
export async function packArchive(file: string, cwd: string, entries: string[]): Promise<void> {
  const tar = await loadTar();
  await tar.c({ gzip: true, file, cwd, portable: true }, entries);
}

/**
 * Unpacks only regular files and folders that `allow` accepts (by type and path,
 * trailing slashes removed); returns what it refused, so the caller can refuse the
 * whole archive. Links and devices are never unpacked; with `warningsRefuse`, node-tar's
 * warnings (a stripped absolute path or `..`) count as refusals too. A damaged gzip or
 * tar stream throws DamagedArchiveError. It blocks the event loop while it unpacks
 * (see below): for the commands that run alone (restore, verify-backup, import).
 */
export async function unpackArchive(
  file: string,
  into: string,
  allow: (type: "File" | "Directory", path: string) => boolean,
  warningsRefuse = true,
): Promise<string[]> {
  const tar = await loadTar();
  const refused: string[] = [];
  try {
    // Synchronous, reading 64 KiB at a time: each entry is written before more is
    // read. The asynchronous unpack (and the synchronous one's default 16 MiB reads)
    // decompressed far ahead of the disk and held it: about the whole unpacked
    // export (docs/benchmarks.md).
    tar.x({
      sync: true,
      maxReadSize: 64 * 1024,
      file,
      cwd: into,
      strict: true,
      preserveOwner: false,
      noChmod: true,
      filter: (path: string, entry: unknown) => {
        const type = (entry as { type?: string }).type;
        const ok = (type === "File" || type === "Directory") && allow(type, path.replace(/\/+$/, ""));
        if (!ok) refused.push(`${type} ${path}`);
        return ok;
      },
      onwarn: (_code: string, message: string) => {
        if (warningsRefuse) refused.push(message);
      },
    });
  } catch (error: any) {
    throw new DamagedArchiveError(String(error?.message ?? error));
  }
  return refused;
}

/** fsync of a file or a folder (after a rename, so that the new name is on disk too). */
export function syncFile(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Backups, restores, exports and imports build their result in a working folder
 * beside the target, `.<target name>.<kind>-<pid>-<12 hex>`, renamed into place at the
 * end. A kill -9 leaves that folder behind; the next run to the same target removes
 * it (`removeStaleWork`). The name carries the process ID so that a run still going
 * on in another process keeps its folder.
 */
export type WorkKind = "partial" | "restoring" | "importing";

const ownWork = new Set<string>();

export function workPath(target: string, kind: WorkKind): string {
  const path = join(dirname(target), `.${basename(target)}.${kind}-${process.pid}-${randomBytes(6).toString("hex")}`);
  ownWork.add(basename(path));
  return path;
}

/**
 * Removes what killed runs to `target` left: only entries named exactly as `workPath`
 * names them (with the archive suffix a partial archive adds), whose process is gone.
 * Anything else beside the target, the user's own files included, is left alone.
 */
export function removeStaleWork(target: string, kind: WorkKind): string[] {
  const dir = dirname(target);
  const pattern = new RegExp(`^\\.${escapeRegExp(basename(target))}\\.${kind}-(\\d+)-[0-9a-f]{12}(\\.tar\\.gz)?$`);
  const removed: string[] = [];
  for (const name of readdirSync(dir)) {
    const match = pattern.exec(name);
    if (!match || ownWork.has(name.replace(/\.tar\.gz$/, "")) || processAlive(Number(match[1]))) continue;
    rmSync(join(dir, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

function processAlive(pid: number): boolean {
  // This process's own runs are in ownWork; its ID on another folder is an earlier process's.
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error: any) {
    return error?.code === "EPERM";
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
