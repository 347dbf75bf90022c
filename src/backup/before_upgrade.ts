import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Store } from "../store/db";
import { openStoreFormat, STORE_FORMAT_VERSION, storeFormatVersion } from "../store/format";
import { getRealm } from "../store/realm";
import { createBackup } from "./create";
import { backupStamp } from "./schedule";

/**
 * A newer Hearth upgrades an older store at start (src/store/format.ts). Before the
 * first byte changes, it backs the store up as it is, so going back — to the older
 * Hearth, which reads that format — is `hearth restore` of this file.
 *
 * An upgrade that a crash cut short resumes at the next start; the backup from its
 * first attempt is the one of the old store, so none is taken again (a second one
 * would hold a half-upgraded store). A backup that fails stops the start: no upgrade
 * runs without one. Returns the file written, or null when there was nothing to do.
 */
export async function backupBeforeUpgrade(store: Store, backupDir: string): Promise<string | null> {
  const from = storeFormatVersion(store);
  if (from >= STORE_FORMAT_VERSION || !getRealm(store)) return null;
  const prefix = `hearth-before-format-${STORE_FORMAT_VERSION}-from-${from}-`;
  if (existsSync(backupDir) && readdirSync(backupDir).some((name) => name.startsWith(prefix) && name.endsWith(".tar.gz"))) return null;
  mkdirSync(backupDir, { recursive: true, mode: 0o700 });
  const file = join(backupDir, `${prefix}${backupStamp(new Date())}.tar.gz`);
  await createBackup({ dataDir: store.dataDir, store }, file);
  return file;
}

/**
 * At start (the server, and CLI commands that write): the format check and upgrade of
 * src/store/format.ts, with the backup above first; says where the backup went.
 */
export async function openStoreFormatWithBackup(store: Store, backupDir: string): Promise<void> {
  const before = await backupBeforeUpgrade(store, backupDir);
  if (before) console.log(`Upgrading the store to format ${STORE_FORMAT_VERSION}; the store as it was is backed up in ${before}`);
  await openStoreFormat(store);
}
