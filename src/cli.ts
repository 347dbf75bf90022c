import { existsSync, mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { doInitRealm, doReactivateRealm, type InitOptions } from "./actions/realm";
import { doCreateStarterContent } from "./actions/new_organization";
import { createHearth, listeningUrl, startServer } from "./server";
import { Store } from "./store/db";
import { getRealm } from "./store/realm";
import { openStoreFormatWithBackup } from "./backup/before_upgrade";
import { DataFolderLock } from "./lockfile";
import { doCreateUser } from "./actions/create_user";
import { allUsers, Role, ROLES, BotType } from "./store/users";
import { createBackup } from "./backup/create";
import { restoreBackup, verifyBackup } from "./backup/restore";
import type { BackupManifest } from "./backup/manifest";
import { parseInterval, type BackupScheduleConfig } from "./backup/schedule";
import { HEARTH_VERSION, ZULIP_FEATURE_LEVEL, ZULIP_VERSION } from "./version";
import { randomPassword } from "./lib/credentials";
import { describeSmtpError, Mailer, parseSmtpUrl, redactSmtpUrl, SmtpUrlError, type SmtpSettings } from "./lib/mailer";
import { checkEmailFrom, isValidEmailAddress, sendEmailNow } from "./actions/email";
import { exportZulip } from "./transfer/zulip_export";
import { importZulip } from "./transfer/zulip_import";
import { DEFAULT_ZULIP_RELEASE, SUPPORTED_ZULIP_RELEASES } from "./transfer/zulip_format";
import { doSetPasswordFromCli } from "./actions/set_password";

export class UsageError extends Error {}

const HELP = `Hearth ${HEARTH_VERSION}: a team-chat server that speaks the Zulip API.

Usage:
  hearth serve [--data DIR] [--port N] [--host ADDR] [--external-url URL]
              [--backup-every 24h [--backup-dir DIR] [--backup-keep N]]
              [--session-idle 14d]
              [--smtp-url URL]
      Run the server (defaults: ./hearth-data, 9991, 127.0.0.1; env HEARTH_DATA,
      HEARTH_PORT, HEARTH_HOST, HEARTH_EXTERNAL_URL). On an empty data folder it
      creates the organization and an owner and prints their credentials once.
      With --backup-every (s, m, h or d; env HEARTH_BACKUP_EVERY) it backs up on
      that schedule into --backup-dir (default: DIR-backups beside the data
      folder), keeping the newest --backup-keep (default 7).
      --session-idle (env HEARTH_SESSION_IDLE): browser sign-ins end after this
      long without use (default 14d). --smtp-url (env HEARTH_SMTP_URL) sends
      email: smtp://user:pass@host:587 (STARTTLS), smtps://user:pass@host:465,
      smtp://host:25, ?tls=off for a loopback test server; From is
      HEARTH_EMAIL_FROM (default Hearth <noreply@HOST>).
  hearth init --data DIR --realm-name NAME --owner-email E --owner-password P
              [--owner-name NAME] [--external-url URL] [--json]
      Create the organization and its owner without starting the server.
  hearth create-user --data DIR --email E --full-name N --password P
              [--role 100|200|300|400|600] [--bot] [--json]
      Add a user (or, with --bot, a generic bot owned by the first owner).
  hearth reactivate-realm --data DIR
      Reactivate a deactivated organization.
  hearth backup --data DIR --out FILE.tar.gz
      Back up the store and uploads into one archive, while the server runs or not.
  hearth restore --from FILE.tar.gz --data DIR
      Restore a backup into a new (absent or empty) data folder.
  hearth verify-backup FILE.tar.gz
      Check a backup's checksums and that its store opens, without restoring it.
  hearth send-test-email --to ADDR [--smtp-url URL] [--data DIR]
      Send one email now through the SMTP server (--smtp-url or HEARTH_SMTP_URL)
      and report its answer or its error. --data (or HEARTH_EXTERNAL_URL) gives
      the host of the default From address.
  hearth export --format zulip --data DIR --out FILE.tar.gz
              [--zulip-release X] [--zulip-migration-status FILE]
      Write the organization as a Zulip realm export for './manage.py import' of
      Zulip Server X (default ${DEFAULT_ZULIP_RELEASE}; ${SUPPORTED_ZULIP_RELEASES.join(", ")}), while the server runs or not.
  hearth import --format zulip --from EXPORT.tar.gz --data DIR
      Create the organization from a Zulip realm export in a new (absent or empty)
      data folder. Accounts get new API keys and no password (see set-password).
  hearth set-password --data DIR --email E [--password P]
      Give an account a password (a random one, printed, without --password).
  hearth --help | --version
`;

interface FlagSpec {
  [name: string]: "string" | "boolean";
}

function parseFlags(args: string[], spec: FlagSpec): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith("--")) throw new UsageError(`unexpected argument '${arg}'`);
    let name = arg.slice(2);
    let value: string | undefined;
    const eq = name.indexOf("=");
    if (eq !== -1) {
      value = name.slice(eq + 1);
      name = name.slice(0, eq);
    }
    const kind = spec[name];
    if (!kind) throw new UsageError(`unknown option '--${name}'`);
    if (kind === "boolean") {
      if (value !== undefined) throw new UsageError(`option '--${name}' takes no value`);
      out[name] = true;
      continue;
    }
    if (value === undefined) {
      value = args[++i];
      if (value === undefined || value.startsWith("--")) throw new UsageError(`option '--${name}' needs a value`);
    }
    out[name] = value;
  }
  return out;
}

function required(flags: Record<string, string | boolean>, name: string): string {
  const v = flags[name];
  if (typeof v !== "string" || v === "") throw new UsageError(`missing required option '--${name}'`);
  return v;
}

function parsePort(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) throw new UsageError(`invalid port '${text}'`);
  return port;
}

function parseExternalUrl(text: string | undefined): string | null {
  if (text === undefined || text === "") return null;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`invalid external URL '${text}'`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`invalid external URL '${text}'`);
  return url.origin + url.pathname.replace(/\/+$/, "");
}


/** Opens the data folder for a one-off command, holding the lock so no server runs beside it. */
async function withStore<T>(dataDir: string, fn: (store: Store) => Promise<T>): Promise<T> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const lock = DataFolderLock.acquire(dataDir);
  const store = new Store(dataDir);
  try {
    await openStoreFormatWithBackup(store, `${dataDir}-backups`);
    return await fn(store);
  } finally {
    await store.close();
    lock.release();
  }
}

function printJson(value: unknown) {
  console.log(JSON.stringify(value));
}

/**
 * A new organization with its owner, then its starting channels and messages. The
 * second part runs after the first has committed: should it fail, the organization
 * still works, only without them (the owner can create channels).
 */
async function createOrganization(store: Store, where: { host: string; port: number; externalUrl: string | null }, options: InitOptions) {
  const created = await doInitRealm(store, options);
  await doCreateStarterContent(createHearth(store, { dataDir: store.dataDir, ...where }), created.owner);
  return created;
}

async function cmdInit(args: string[]) {
  const flags = parseFlags(args, {
    data: "string",
    "realm-name": "string",
    "owner-email": "string",
    "owner-password": "string",
    "owner-name": "string",
    "external-url": "string",
    json: "boolean",
  });
  const dataDir = resolve(required(flags, "data"));
  const externalUrl = parseExternalUrl(flags["external-url"] as string | undefined);
  const realmUrl = externalUrl ?? listeningUrl("127.0.0.1", 9991);
  const result = await withStore(dataDir, (store) =>
    createOrganization(store, { host: "127.0.0.1", port: 9991, externalUrl }, {
      realmName: required(flags, "realm-name"),
      ownerEmail: required(flags, "owner-email"),
      ownerPassword: required(flags, "owner-password"),
      ownerFullName: flags["owner-name"] as string | undefined,
      externalUrl,
    }),
  );
  const out = { email: result.owner.email, api_key: result.owner.api_key, user_id: result.owner.id, realm_url: realmUrl };
  if (flags.json) printJson(out);
  else console.log(`Created organization "${result.realm.name}" with owner ${out.email} (user ${out.user_id}).\nAPI key: ${out.api_key}`);
}

async function cmdCreateUser(args: string[]) {
  const flags = parseFlags(args, {
    data: "string",
    email: "string",
    "full-name": "string",
    password: "string",
    role: "string",
    bot: "boolean",
    json: "boolean",
  });
  const dataDir = resolve(required(flags, "data"));
  const role = flags.role === undefined ? Role.MEMBER : Number(flags.role);
  if (!ROLES.includes(role)) throw new UsageError(`invalid role '${flags.role}' (use 100, 200, 300, 400 or 600)`);
  const email = required(flags, "email");
  const fullName = required(flags, "full-name");
  const password = flags.bot ? ((flags.password as string | undefined) ?? null) : required(flags, "password");
  const out = await withStore(dataDir, async (store) => {
    if (!getRealm(store)) throw new Error(`No organization in ${dataDir}: run 'hearth init' first.`);
    const h = createHearth(store, { dataDir, host: "127.0.0.1", port: 9991, externalUrl: null });
    const owner = [...allUsers(store)].find((u) => u.role === Role.OWNER && u.is_active && !u.is_bot);
    const user = await doCreateUser(h, {
      email,
      full_name: fullName,
      password,
      role: flags.bot ? Role.MEMBER : role,
      bot_type: flags.bot ? BotType.GENERIC : null,
      bot_owner_id: flags.bot ? (owner?.id ?? null) : null,
      pending_first_login: true,
    });
    return { email: user.email, api_key: user.api_key, user_id: user.id, realm_url: h.realmUrl() };
  });
  if (flags.json) printJson(out);
  else console.log(`Created ${flags.bot ? "bot" : "user"} ${out.email} (user ${out.user_id}).\nAPI key: ${out.api_key}`);
}

async function cmdReactivateRealm(args: string[]) {
  const flags = parseFlags(args, { data: "string" });
  const dataDir = resolve(required(flags, "data"));
  if (!existsSync(dataDir)) throw new Error(`No data folder at ${dataDir}.`);
  const changed = await withStore(dataDir, (store) => doReactivateRealm(store));
  console.log(changed ? "The organization is active again." : "The organization was already active.");
}

async function cmdBackup(args: string[]) {
  const flags = parseFlags(args, { data: "string", out: "string" });
  const dataDir = resolve(required(flags, "data"));
  const outFile = resolve(required(flags, "out"));
  const started = Date.now();
  const manifest = await createBackup({ dataDir }, outFile);
  console.log(`Backed up ${describeBackup(manifest)} to ${outFile} in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
  warnMissingUploads(manifest);
}

async function cmdRestore(args: string[]) {
  const flags = parseFlags(args, { from: "string", data: "string" });
  const archive = resolve(required(flags, "from"));
  const dataDir = resolve(required(flags, "data"));
  const manifest = await restoreBackup(archive, dataDir);
  console.log(`Restored ${describeBackup(manifest)} into ${dataDir}. Start it with: hearth serve --data ${dataDir}`);
  warnMissingUploads(manifest);
}

async function cmdVerifyBackup(args: string[]) {
  if (args.length !== 1 || args[0].startsWith("--")) throw new UsageError("verify-backup takes one backup file");
  const manifest = await verifyBackup(resolve(args[0]));
  console.log(`OK: ${describeBackup(manifest)}, taken ${new Date(manifest.created_at * 1000).toISOString()} by Hearth ${manifest.hearth_version}; every checksum matches and the store opens.`);
  warnMissingUploads(manifest);
}

function describeBackup(m: BackupManifest): string {
  const c = m.record_counts;
  const uploads = m.files.length - 1;
  return `${c.users ?? 0} users, ${c.channels ?? 0} channels, ${c.messages ?? 0} messages and ${uploads} uploaded file${uploads === 1 ? "" : "s"}`;
}

function warnMissingUploads(m: BackupManifest): void {
  if (m.missing_uploads.length > 0) console.warn(`Warning: ${m.missing_uploads.length} uploaded file(s) named by the store were not on disk when the backup ran: ${m.missing_uploads.slice(0, 5).join(", ")}`);
}

function requireZulipFormat(flags: Record<string, string | boolean>): void {
  const format = required(flags, "format");
  if (format !== "zulip") throw new UsageError(`unknown format '${format}' (only 'zulip' is supported)`);
}

async function cmdExport(args: string[]) {
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

async function cmdImport(args: string[]) {
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

async function cmdSetPassword(args: string[]) {
  const flags = parseFlags(args, { data: "string", email: "string", password: "string" });
  const dataDir = resolve(required(flags, "data"));
  if (!existsSync(dataDir)) throw new Error(`No data folder at ${dataDir}.`);
  const password = (flags.password as string | undefined) ?? randomPassword();
  const user = await withStore(dataDir, (store) => doSetPasswordFromCli(store, required(flags, "email"), password));
  console.log(flags.password === undefined ? `Set a new password for ${user.email}: ${password}` : `Set the password of ${user.email}.`);
}

function parseBackupSchedule(flags: Record<string, string | boolean>, dataDir: string): BackupScheduleConfig | null {
  const every = (flags["backup-every"] as string | undefined) ?? process.env.HEARTH_BACKUP_EVERY;
  const dir = (flags["backup-dir"] as string | undefined) ?? process.env.HEARTH_BACKUP_DIR;
  const keepText = (flags["backup-keep"] as string | undefined) ?? process.env.HEARTH_BACKUP_KEEP;
  if (every === undefined || every === "") {
    if (flags["backup-dir"] !== undefined || flags["backup-keep"] !== undefined) throw new UsageError("--backup-dir and --backup-keep need --backup-every");
    return null;
  }
  const everyMs = parseInterval(every);
  if (everyMs === null) throw new UsageError(`invalid backup interval '${every}' (use e.g. 90s, 30m, 24h or 7d)`);
  const keep = keepText === undefined ? 7 : Number(keepText);
  if (!Number.isInteger(keep) || keep < 1 || keep > 10_000) throw new UsageError(`invalid --backup-keep '${keepText}' (a whole number from 1)`);
  return { everyMs, keep, dir: resolve(dir ?? `${dataDir}-backups`) };
}

function parseSmtpOption(url: string): SmtpSettings {
  try {
    return parseSmtpUrl(url);
  } catch (e) {
    if (e instanceof SmtpUrlError) throw new UsageError(e.message);
    throw e;
  }
}

function parseEmailFromEnv(): string | null {
  const from = process.env.HEARTH_EMAIL_FROM || null;
  if (from) {
    try {
      checkEmailFrom(from);
    } catch (e: any) {
      throw new UsageError(`HEARTH_EMAIL_FROM: ${e.message}`);
    }
  }
  return from;
}

/** The host of the realm's URL for the default From: --data's organization, else HEARTH_EXTERNAL_URL, else localhost. */
async function realmHostFor(dataDir: string | undefined): Promise<string> {
  const external = parseExternalUrl(process.env.HEARTH_EXTERNAL_URL);
  if (external) return new URL(external).hostname;
  if (dataDir && existsSync(dataDir)) {
    try {
      const url = await withStore(resolve(dataDir), async (store) => getRealm(store)?.external_url ?? null);
      if (url) return new URL(url).hostname;
    } catch {
      // A running server holds the folder: fall back rather than fail the test.
    }
  }
  return "localhost";
}

async function cmdSendTestEmail(args: string[]) {
  const flags = parseFlags(args, { to: "string", "smtp-url": "string", data: "string" });
  const to = required(flags, "to");
  if (!isValidEmailAddress(to)) throw new UsageError(`invalid address '${to}'`);
  const url = (flags["smtp-url"] as string | undefined) || process.env.HEARTH_SMTP_URL;
  if (!url) throw new UsageError("no SMTP server: give --smtp-url URL or set HEARTH_SMTP_URL");
  const settings = parseSmtpOption(url);
  const host = await realmHostFor((flags.data as string | undefined) ?? process.env.HEARTH_DATA);
  const from = parseEmailFromEnv() ?? `Hearth <noreply@${host}>`;
  const mailer = new Mailer(settings);
  try {
    const response = await sendEmailNow(mailer, from, to, "Hearth test email", `This is a test email from Hearth (hearth send-test-email).\n\nIf you received it, outgoing email works.\n`, host);
    console.log(`Sent a test email to ${to} from ${from} through ${redactSmtpUrl(url)}.\nThe SMTP server answered: ${response}`);
  } catch (e) {
    throw new Error(`could not send through ${redactSmtpUrl(url)}: ${describeSmtpError(e)}`);
  } finally {
    mailer.close();
  }
}

async function cmdServe(args: string[]) {
  const flags = parseFlags(args, {
    data: "string",
    port: "string",
    host: "string",
    "external-url": "string",
    "backup-every": "string",
    "backup-dir": "string",
    "backup-keep": "string",
    "session-idle": "string",
    "smtp-url": "string",
  });
  const dataDir = resolve((flags.data as string | undefined) ?? process.env.HEARTH_DATA ?? "./hearth-data");
  const smtpUrl = (flags["smtp-url"] as string | undefined) || process.env.HEARTH_SMTP_URL || null;
  const smtp = smtpUrl ? parseSmtpOption(smtpUrl) : null;
  const emailFrom = parseEmailFromEnv();
  const port = parsePort((flags.port as string | undefined) ?? process.env.HEARTH_PORT ?? "9991");
  const host = (flags.host as string | undefined) ?? process.env.HEARTH_HOST ?? "127.0.0.1";
  const externalUrl = parseExternalUrl((flags["external-url"] as string | undefined) ?? process.env.HEARTH_EXTERNAL_URL);
  const backupConfig = parseBackupSchedule(flags, dataDir);
  const idle = flags["session-idle"] as string | undefined;
  const sessionIdleMs = idle === undefined ? undefined : (parseInterval(idle) ?? undefined);
  if (idle !== undefined && sessionIdleMs === undefined) throw new UsageError(`invalid --session-idle '${idle}' (use e.g. 30m, 12h or 14d)`);

  const firstRun = await withStore(dataDir, async (store) => {
    if (getRealm(store)) return null;
    const password = randomPassword();
    const email = process.env.HEARTH_OWNER_EMAIL ?? "owner@hearth.local";
    const { owner } = await createOrganization(store, { host, port, externalUrl }, {
      realmName: process.env.HEARTH_REALM_NAME ?? "Hearth",
      ownerEmail: email,
      ownerPassword: password,
      ownerFullName: "Owner",
    });
    return { email: owner.email, password, api_key: owner.api_key };
  });

  const server = await startServer({ dataDir, host, port, externalUrl, backup: backupConfig, sessionIdleMs, smtpUrl, emailFrom });
  if (firstRun) {
    console.log("Created a new organization. The owner's credentials (shown only this once):");
    console.log(`  email:    ${firstRun.email}`);
    console.log(`  password: ${firstRun.password}`);
    console.log(`  API key:  ${firstRun.api_key}\n`);
  }
  console.log(`Organization URL: ${server.h.realmUrl()}   Data folder: ${dataDir}`);
  console.log(
    smtp
      ? `Email: through ${smtp.host}:${smtp.port} (${smtp.secure ? "TLS" : smtp.tls === "off" ? "no TLS" : smtp.tls === "required" ? "STARTTLS" : "STARTTLS when offered"}), from ${emailFrom ?? `Hearth <noreply@${server.h.realmHost()}>`}`
      : "Email: no SMTP server configured (--smtp-url); invitation links are printed here and on the admin page",
  );
  if (backupConfig) console.log(`Backups: every ${flags["backup-every"] ?? process.env.HEARTH_BACKUP_EVERY} into ${backupConfig.dir}, keeping ${backupConfig.keep}`);
  // Printed last: scripts wait for this line to know the server is ready.
  console.log(`Hearth ${HEARTH_VERSION} (Zulip ${ZULIP_VERSION}, feature level ${ZULIP_FEATURE_LEVEL}) is listening on ${server.url}`);
  const shutdown = async (signal: string) => {
    console.log(`Received ${signal}; shutting down.`);
    try {
      await server.stop();
      process.exit(0);
    } catch (e) {
      // Committed data is safe either way; only the saved event queues may be lost.
      console.error("Shutdown did not complete cleanly:", e);
      process.exit(1);
    }
  };
  process.once("SIGINT", () => void shutdown("SIGINT"));
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
}

export async function runCli(argv: string[]): Promise<number> {
  // Data files must not be readable by other accounts on the machine.
  process.umask(0o077);
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case undefined:
      case "--help":
      case "-h":
      case "help":
        process.stdout.write(HELP);
        return command === undefined ? 2 : 0;
      case "--version":
      case "-v":
      case "version":
        console.log(`hearth ${HEARTH_VERSION} (Zulip ${ZULIP_VERSION}, feature level ${ZULIP_FEATURE_LEVEL})`);
        return 0;
      case "serve":
        await cmdServe(rest);
        return -1; // keeps running
      case "init":
        await cmdInit(rest);
        return 0;
      case "create-user":
        await cmdCreateUser(rest);
        return 0;
      case "reactivate-realm":
        await cmdReactivateRealm(rest);
        return 0;
      case "backup":
        await cmdBackup(rest);
        return 0;
      case "restore":
        await cmdRestore(rest);
        return 0;
      case "verify-backup":
        await cmdVerifyBackup(rest);
        return 0;
      case "send-test-email":
        await cmdSendTestEmail(rest);
        return 0;
      case "export":
        await cmdExport(rest);
        return 0;
      case "import":
        await cmdImport(rest);
        return 0;
      case "set-password":
        await cmdSetPassword(rest);
        return 0;
      default:
        throw new UsageError(`unknown command '${command}'`);
    }
  } catch (e: any) {
    if (e instanceof UsageError) {
      console.error(`hearth: ${e.message}\nRun 'hearth --help' for usage.`);
      return 2;
    }
    console.error(`hearth: ${e?.message ?? e}`);
    return 1;
  }
}
