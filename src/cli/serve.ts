/** `hearth serve`: the options, the first-run organization, and a clean shutdown on a signal. */
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { startServer } from "../server";
import { getRealm } from "../store/realm";
import { parseInterval, type BackupScheduleConfig } from "../backup/schedule";
import { HEARTH_VERSION, ZULIP_FEATURE_LEVEL, ZULIP_VERSION } from "../version";
import { randomPassword } from "../lib/credentials";
import { settleStart } from "../lib/startup_pages";
import { UsageError, parseExternalUrl, parseFlags, parsePort } from "./options";
import { createOrganization } from "./organization";
import { parseEmailFromEnv, parseSmtpOption } from "./email_commands";

export function parseBackupSchedule(flags: Record<string, string | boolean>, dataDir: string): BackupScheduleConfig | null {
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


export async function cmdServe(args: string[]) {
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

  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  let firstRun = null as { email: string; password: string; api_key: string } | null;
  const config = { dataDir, host, port, externalUrl, backup: backupConfig, sessionIdleMs, smtpUrl, emailFrom };
  const server = await startServer(config, async (store) => {
    if (getRealm(store)) return;
    const password = randomPassword();
    const email = process.env.HEARTH_OWNER_EMAIL ?? "owner@hearth.local";
    const { owner } = await createOrganization(store, { host, port, externalUrl }, {
      realmName: process.env.HEARTH_REALM_NAME ?? "Hearth",
      ownerEmail: email,
      ownerPassword: password,
      ownerFullName: "Owner",
    });
    firstRun = { email: owner.email, password, api_key: owner.api_key };
  });
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
  // Start-up ends with the folder's pending rows written: then hot request code is
  // compiled as usual and the code only the start ran need not stay resident.
  void settleStart(server.writeStartBacklog(), process.env.HEARTH_KEEP_STARTUP_PAGES === "1");
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

