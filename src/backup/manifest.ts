import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";

/** What a backup holds, written as `manifest.json` at the top of the archive. */
export interface BackupManifest {
  kind: "hearth-backup";
  /** Layout of the archive itself (this file and the paths beside it). */
  archive_version: 1;
  hearth_version: string;
  store_format_version: number;
  /** Unix seconds when the store's snapshot was taken. */
  created_at: number;
  /** Records per key space in the snapshot. */
  record_counts: Record<string, number>;
  /** Every other file of the archive, with its size and SHA-256. */
  files: BackupFile[];
  /** Uploaded files the store names that were not on disk when the backup ran. */
  missing_uploads: string[];
}

export interface BackupFile {
  path: string;
  size: number;
  sha256: string;
}

export const MANIFEST_NAME = "manifest.json";
export const STORE_FILE = "db/data.mdb";
export const UPLOADS_DIR = "uploads";

export class BackupError extends Error {}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** The archive paths a manifest may list: the store file and uploads, nothing that climbs out. */
export function isArchivePath(path: string): boolean {
  if (path === STORE_FILE) return true;
  if (!path.startsWith(`${UPLOADS_DIR}/`)) return false;
  return path.split("/").every((part) => part !== "" && part !== "." && part !== "..") && !path.includes("\\") && !path.includes("\0");
}

export function parseManifest(text: string): BackupManifest {
  let value: any;
  try {
    value = JSON.parse(text);
  } catch {
    throw new BackupError("The backup's manifest is not valid JSON.");
  }
  const ok =
    value?.kind === "hearth-backup" &&
    value.archive_version === 1 &&
    Number.isInteger(value.store_format_version) &&
    Number.isInteger(value.created_at) &&
    typeof value.hearth_version === "string" &&
    value.record_counts !== null &&
    typeof value.record_counts === "object" &&
    Array.isArray(value.missing_uploads) &&
    Array.isArray(value.files) &&
    value.files.every((f: any) => typeof f?.path === "string" && isArchivePath(f.path) && Number.isInteger(f.size) && f.size >= 0 && /^[0-9a-f]{64}$/.test(f.sha256));
  if (!ok) throw new BackupError("This is not a Hearth backup (its manifest is missing fields or names unexpected files).");
  if (!value.files.some((f: BackupFile) => f.path === STORE_FILE)) throw new BackupError("The backup's manifest lists no store file.");
  return value as BackupManifest;
}
