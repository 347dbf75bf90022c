import { packArchive, removeStaleWork, syncFile, workPath } from "../lib/archives";
import { chmodSync, copyFileSync, existsSync, linkSync, lstatSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { HEARTH_VERSION } from "../version";
import { Store } from "../store/db";
import { recordCounts, storeFormatVersion, assertReadableFormat } from "../store/format";
import { allAttachments } from "../store/uploads";
import { BackupError, MANIFEST_NAME, STORE_FILE, UPLOADS_DIR, sha256File, type BackupFile, type BackupManifest } from "./manifest";

/**
 * `hearth backup`: one `.tar.gz` holding a consistent snapshot of the store and every
 * uploaded file it names, with a manifest of counts and checksums.
 *
 * The snapshot is LMDB's own copy (lmdb-js `backup`, with compaction) taken in a read
 * transaction: writers go on meanwhile — the running server's or none — and the copy
 * is the store as of one commit. Uploads are written once and never changed, so those
 * the snapshot names are read after it. They are linked (not copied) into a staging
 * folder beside the output where the file system allows, so a backup costs the disk
 * one compacted store and the archive.
 *
 * The archive is written under a temporary name and renamed when complete and synced:
 * a backup killed halfway leaves no file under the name asked for, and the data folder
 * is only ever read.
 */
export async function createBackup(source: { dataDir: string; store?: Store }, outFile: string): Promise<BackupManifest> {
  const dataDir = resolve(source.dataDir);
  outFile = resolve(outFile);
  const storeDir = join(dataDir, "db");
  if (!existsSync(join(storeDir, "data.mdb"))) throw new BackupError(`No Hearth data folder at ${dataDir} (no db/data.mdb).`);
  const outDir = dirname(outFile);
  if (!existsSync(outDir)) throw new BackupError(`The folder ${outDir} does not exist.`);
  removeStaleWork(outFile, "partial");
  const staging = workPath(outFile, "partial");
  const partialArchive = `${staging}.tar.gz`;
  mkdirSync(join(staging, "db"), { recursive: true, mode: 0o700 });
  try {
    const createdAt = Math.floor(Date.now() / 1000);
    await snapshotStore(source.store ?? storeDir, join(staging, "db"));
    const snapshot = new Store(staging);
    let counts: Record<string, number>;
    let formatVersion: number;
    let pathIds: string[];
    try {
      formatVersion = storeFormatVersion(snapshot);
      assertReadableFormat(formatVersion, `The data folder ${dataDir}`);
      counts = recordCounts(snapshot);
      pathIds = [...allAttachments(snapshot)].map((a) => a.path_id);
    } finally {
      await snapshot.close();
    }
    rmSync(join(staging, "db", "lock.mdb"), { force: true });
    const missing = stageUploads(dataDir, staging, pathIds);
    const missingSet = new Set(missing);
    const files: BackupFile[] = [];
    for (const path of [STORE_FILE, ...pathIds.filter((p) => !missingSet.has(p)).map((p) => `${UPLOADS_DIR}/${p}`)]) {
      const full = join(staging, path);
      files.push({ path, size: lstatSync(full).size, sha256: await sha256File(full) });
    }
    const manifest: BackupManifest = {
      kind: "hearth-backup",
      archive_version: 1,
      hearth_version: HEARTH_VERSION,
      store_format_version: formatVersion,
      created_at: createdAt,
      record_counts: counts,
      files,
      missing_uploads: missing,
    };
    writeFileSync(join(staging, MANIFEST_NAME), JSON.stringify(manifest, null, 2) + "\n", { mode: 0o600 });
    const entries = [MANIFEST_NAME, STORE_FILE, ...(existsSync(join(staging, UPLOADS_DIR)) ? [UPLOADS_DIR] : [])];
    await packArchive(partialArchive, staging, entries);
    chmodSync(partialArchive, 0o600);
    syncFile(partialArchive);
    renameSync(partialArchive, outFile);
    syncFile(outDir);
    return manifest;
  } finally {
    rmSync(staging, { recursive: true, force: true });
    rmSync(partialArchive, { force: true });
  }
}

/**
 * LMDB's compacting copy into `targetDir/data.mdb`: through the server's own handle
 * in the server's process (LMDB allows one per process), else a read-only one.
 */
async function snapshotStore(from: Store | string, targetDir: string): Promise<void> {
  if (typeof from !== "string") return from.snapshotTo(targetDir);
  return Store.snapshotFolder(from, targetDir);
}

/**
 * Links (or copies) each upload the snapshot names into the staging folder. Only
 * regular files: a link planted in the uploads folder is not followed. Returns the
 * path IDs with no file (deleted by hand, or a disk fault), which the manifest lists.
 */
function stageUploads(dataDir: string, staging: string, pathIds: string[]): string[] {
  const missing: string[] = [];
  for (const pathId of pathIds) {
    const source = join(dataDir, UPLOADS_DIR, pathId);
    const target = join(staging, UPLOADS_DIR, pathId);
    let regular = false;
    try {
      regular = lstatSync(source).isFile() && !pathId.split("/").includes("..");
    } catch {
      regular = false;
    }
    if (!regular) {
      missing.push(pathId);
      continue;
    }
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
    try {
      linkSync(source, target);
    } catch {
      copyFileSync(source, target);
    }
  }
  return missing;
}
