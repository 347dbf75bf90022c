import { DamagedArchiveError, unpackArchive } from "../lib/archives";
import { existsSync, lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { TransferError } from "./zulip_format";

/**
 * Unpacking a Zulip export safely: only regular files and folders, at relative paths
 * without `..`; a link, device or absolute path anywhere refuses the whole archive,
 * as does a damaged gzip or tar stream (node-tar's warnings are errors here).
 */
export async function unpackExport(archive: string, into: string): Promise<string> {
  if (!existsSync(archive) || !lstatSync(archive).isFile()) throw new TransferError(`No export file at ${archive}.`);
  let refused: string[];
  try {
    refused = await unpackArchive(archive, into, (_type, path) => isSafeRelativePath(path));
  } catch (error) {
    if (!(error instanceof DamagedArchiveError)) throw error;
    throw new TransferError(`The export file is damaged or not a .tar.gz archive (${error.message}).`);
  }
  if (refused.length > 0) throw new TransferError(`The export holds entries a Zulip export never has (links, absolute paths or '..'): ${refused.slice(0, 5).join(", ")}.`);
  return findExportRoot(into);
}

/** A path inside the archive: relative, no empty, `.` or `..` part, no backslash or NUL. */
export function isSafeRelativePath(path: string): boolean {
  if (path === "" || path.startsWith("/") || /[\\\0]/.test(path)) return false;
  return path.split("/").every((part) => part !== "" && part !== "." && part !== "..");
}

/** The folder holding realm.json: the archive's root or its single top-level folder. */
function findExportRoot(dir: string): string {
  if (existsSync(join(dir, "realm.json"))) return dir;
  const entries = readdirSync(dir, { withFileTypes: true });
  const folders = entries.filter((e) => e.isDirectory());
  if (folders.length === 1 && existsSync(join(dir, folders[0].name, "realm.json"))) return join(dir, folders[0].name);
  throw new TransferError("This is not a Zulip organization export (no realm.json).");
}

/** A JSON file of the export, with a clear error when it is missing or broken. */
export function readExportJson<T = any>(root: string, name: string, required = true): T | undefined {
  const path = join(root, name);
  if (!existsSync(path)) {
    if (required) throw new TransferError(`This is not a complete Zulip export: ${name} is missing.`);
    return undefined;
  }
  if (!lstatSync(path).isFile()) throw new TransferError(`${name} in the export is not a regular file.`);
  try {
    return JSON.parse(readFileSync(path, "utf8")) as T;
  } catch (error: any) {
    throw new TransferError(`${name} in the export is not valid JSON (${error?.message ?? error}).`);
  }
}

/** A file named by a records.json, inside its folder of the export, as a regular file. */
export function exportFile(root: string, folder: string, path: unknown): string | undefined {
  if (typeof path !== "string" || !isSafeRelativePath(path)) return undefined;
  const full = join(root, folder, path);
  try {
    return lstatSync(full).isFile() ? full : undefined;
  } catch {
    return undefined;
  }
}
