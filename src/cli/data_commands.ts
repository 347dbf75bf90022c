/** The data folder as a whole: `backup`, `restore`, `verify-backup`, Zulip-format `export`/`import`, `set-password`. */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { createBackup } from "../backup/create";
import { restoreBackup, verifyBackup } from "../backup/restore";
import { type BackupManifest } from "../backup/manifest";
import { randomPassword } from "../lib/credentials";
import { exportZulip } from "../transfer/zulip_export";
import { importZulip } from "../transfer/zulip_import";
import { doSetPasswordFromCli } from "../actions/set_password";
import { UsageError, parseFlags, required, withStore } from "./options";

export async function cmdBackup(args: string[]) {
  const flags = parseFlags(args, { data: "string", out: "string" });
  const dataDir = resolve(required(flags, "data"));
  const outFile = resolve(required(flags, "out"));
  const started = Date.now();
  const manifest = await createBackup({ dataDir }, outFile);
  console.log(`Backed up ${describeBackup(manifest)} to ${outFile} in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
  warnMissingUploads(manifest);
}

export async function cmdRestore(args: string[]) {
  const flags = parseFlags(args, { from: "string", data: "string" });
  const archive = resolve(required(flags, "from"));
  const dataDir = resolve(required(flags, "data"));
  const manifest = await restoreBackup(archive, dataDir);
  console.log(`Restored ${describeBackup(manifest)} into ${dataDir}. Start it with: hearth serve --data ${dataDir}`);
  warnMissingUploads(manifest);
}

export async function cmdVerifyBackup(args: string[]) {
  if (args.length !== 1 || args[0].startsWith("--")) throw new UsageError("verify-backup takes one backup file");
  const manifest = await verifyBackup(resolve(args[0]));
  console.log(`OK: ${describeBackup(manifest)}, taken ${new Date(manifest.created_at * 1000).toISOString()} by Hearth ${manifest.hearth_version}; every checksum matches and the store opens.`);
  warnMissingUploads(manifest);
}

export function describeBackup(m: BackupManifest): string {
  const c = m.record_counts;
  const uploads = m.files.length - 1;
  return `${c.users ?? 0} users, ${c.channels ?? 0} channels, ${c.messages ?? 0} messages and ${uploads} uploaded file${uploads === 1 ? "" : "s"}`;
}

export function warnMissingUploads(m: BackupManifest): void {
  if (m.missing_uploads.length > 0) console.warn(`Warning: ${m.missing_uploads.length} uploaded file(s) named by the store were not on disk when the backup ran: ${m.missing_uploads.slice(0, 5).join(", ")}`);
}

export function requireZulipFormat(flags: Record<string, string | boolean>): void {
  const format = required(flags, "format");
  if (format !== "zulip") throw new UsageError(`unknown format '${format}' (only 'zulip' is supported)`);
}

export async function cmdExport(args: string[]) {
  const flags = parseFlags(args, { format: "string", data: "string", out: "string", "zulip-release": "string", "zulip-migration-status": "string" });
  requireZulipFormat(flags);
  const s = await exportZulip({
    dataDir: resolve(required(flags, "data")),
    outFile: resolve(required(flags, "out")),
    zulipRelease: flags["zulip-release"] as string | undefined,
    migrationStatusFile: flags["zulip-migration-status"] as string | undefined,
  });
  console.log(
    `Exported ${s.users} users, ${s.channels} channels, ${s.messages} messages (${s.userMessages} message rows), ${s.reactions} reactions and ${s.uploads} uploaded file${s.uploads === 1 ? "" : "s"} ` +
      `for Zulip Server ${s.zulipRelease} to ${resolve(required(flags, "out"))} in ${s.seconds.toFixed(1)} s (${Math.round(s.messages / Math.max(s.seconds, 0.001))} messages/s).`,
  );
}

export async function cmdImport(args: string[]) {
  const flags = parseFlags(args, { format: "string", from: "string", data: "string" });
  requireZulipFormat(flags);
  const dataDir = resolve(required(flags, "data"));
  const s = await importZulip({ archive: resolve(required(flags, "from")), dataDir });
  console.log(
    `Imported ${s.users} users, ${s.channels} channels, ${s.messages} messages, ${s.reactions} reactions and ${s.uploads} uploaded file${s.uploads === 1 ? "" : "s"} from Zulip ${s.zulipVersion} ` +
      `into ${dataDir} in ${s.seconds.toFixed(1)} s (${Math.round(s.messages / Math.max(s.seconds, 0.001))} messages/s).\n` +
      `Passwords do not travel in a Zulip export: give the owner one with\n  hearth set-password --data ${dataDir} --email OWNER_EMAIL\n` +
      `then start the server (hearth serve --data ${dataDir}); the others get theirs the same way.`,
  );
}

export async function cmdSetPassword(args: string[]) {
  const flags = parseFlags(args, { data: "string", email: "string", password: "string" });
  const dataDir = resolve(required(flags, "data"));
  if (!existsSync(dataDir)) throw new Error(`No data folder at ${dataDir}.`);
  const password = (flags.password as string | undefined) ?? randomPassword();
  const user = await withStore(dataDir, (store) => doSetPasswordFromCli(store, required(flags, "email"), password));
  console.log(flags.password === undefined ? `Set a new password for ${user.email}: ${password}` : `Set the password of ${user.email}.`);
}

