import { closeSync, fsyncSync, openSync } from "node:fs";

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
 * tar stream throws DamagedArchiveError.
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
    await tar.x({
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
