import { DamagedArchiveError, removeStaleWork, unpackArchive, workPath } from "../lib/archives";
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { Store } from "../store/db";
import { assertReadableFormat, recordCounts, StoreFormatError } from "../store/format";
import { BackupError, isArchivePath, MANIFEST_NAME, parseManifest, sha256File, type BackupManifest } from "./manifest";

/**
 * `hearth restore`: a backup into a new data folder. It is unpacked and checked in a
 * temporary folder beside the target and moved into place only once every file
 * matches its checksum and the store opens with the counts the manifest gives, so a
 * restore that fails or is killed leaves no data folder behind (a killed one leaves its
 * working folder, which the next restore to that name removes), and it never writes
 * into one that holds anything.
 */
export async function restoreBackup(archive: string, dataDir: string): Promise<BackupManifest> {
  dataDir = resolve(dataDir);
  if (existsSync(dataDir) && (!lstatSync(dataDir).isDirectory() || readdirSync(dataDir).length > 0)) {
    throw new BackupError(`Refusing to restore into ${dataDir}: it is not an empty folder.`);
  }
  const parent = dirname(dataDir);
  if (!existsSync(parent)) throw new BackupError(`The folder ${parent} does not exist.`);
  removeStaleWork(dataDir, "restoring");
  const staging = workPath(dataDir, "restoring");
  mkdirSync(staging, { mode: 0o700 });
  try {
    const manifest = await unpackAndCheck(archive, staging);
    if (existsSync(dataDir)) rmdirSync(dataDir); // empty, checked above
    renameSync(staging, dataDir);
    return manifest;
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
}

/** `hearth verify-backup`: every check of a restore, in a temporary folder removed afterwards. */
export async function verifyBackup(archive: string): Promise<BackupManifest> {
  const scratch = mkdtempSync(join(tmpdir(), "hearth-verify-"));
  try {
    return await unpackAndCheck(archive, scratch);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function unpackAndCheck(archive: string, into: string): Promise<BackupManifest> {
  archive = resolve(archive);
  if (!existsSync(archive) || !lstatSync(archive).isFile()) throw new BackupError(`No backup file at ${archive}.`);
  await unpack(archive, into);
  const manifestPath = join(into, MANIFEST_NAME);
  if (!existsSync(manifestPath)) throw new BackupError("This is not a Hearth backup (it has no manifest.json).");
  const manifest = parseManifest(readFileSync(manifestPath, "utf8"));
  try {
    assertReadableFormat(manifest.store_format_version, "This backup");
  } catch (error) {
    if (error instanceof StoreFormatError) throw new BackupError(error.message);
    throw error;
  }
  await checkFiles(manifest, into);
  rmSync(manifestPath);
  await checkStore(manifest, into);
  return manifest;
}

/**
 * Unpacks only what a backup holds: regular files and folders under paths the
 * manifest may name. Links, devices, absolute paths and `..` are refused (node-tar
 * strips the last two already; its warnings are errors here), as is a damaged gzip
 * or tar stream.
 */
async function unpack(archive: string, into: string): Promise<void> {
  let refused: string[];
  try {
    refused = await unpackArchive(
      archive,
      into,
      (type, path) =>
        (type === "File" && (path === MANIFEST_NAME || isArchivePath(path))) ||
        (type === "Directory" && (path === "db" || path === "uploads" || isArchivePath(path))),
      false,
    );
  } catch (error) {
    if (!(error instanceof DamagedArchiveError)) throw error;
    throw new BackupError(`The backup file is damaged or not a backup (${error.message}).`);
  }
  if (refused.length > 0) throw new BackupError(`The backup holds entries a Hearth backup never has: ${refused.slice(0, 5).join(", ")}.`);
  // Data files readable by their owner only, whatever the archive said.
  chmodTree(into);
}

function chmodTree(dir: string): void {
  chmodSync(dir, 0o700);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) chmodTree(path);
    else if (entry.isFile()) chmodSync(path, 0o600);
  }
}

async function checkFiles(manifest: BackupManifest, root: string): Promise<void> {
  const listed = new Set(manifest.files.map((f) => f.path));
  for (const file of manifest.files) {
    const path = join(root, file.path);
    if (!existsSync(path) || !lstatSync(path).isFile()) throw new BackupError(`The backup is missing ${file.path}.`);
    if (lstatSync(path).size !== file.size || (await sha256File(path)) !== file.sha256) {
      throw new BackupError(`${file.path} does not match its checksum: the backup is damaged.`);
    }
  }
  for (const path of filesUnder(root)) {
    const rel = relative(root, path);
    if (rel !== MANIFEST_NAME && !listed.has(rel)) throw new BackupError(`The backup holds ${rel}, which its manifest does not list.`);
  }
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else out.push(path);
  }
  return out;
}

/** The store opens, and holds as many records in each key space as when it was saved. */
async function checkStore(manifest: BackupManifest, root: string): Promise<void> {
  let store: Store;
  try {
    store = new Store(root);
  } catch (error: any) {
    throw new BackupError(`The backup's store does not open (${error?.message ?? error}).`);
  }
  try {
    const counts = recordCounts(store);
    for (const [name, count] of Object.entries(manifest.record_counts)) {
      if ((counts[name] ?? 0) !== count) throw new BackupError(`The backup's store holds ${counts[name] ?? 0} records in ${name}; its manifest says ${count}.`);
    }
  } finally {
    await store.close();
  }
}
