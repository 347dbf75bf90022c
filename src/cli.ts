import { HEARTH_VERSION, ZULIP_FEATURE_LEVEL, ZULIP_VERSION } from "./version";
import { DEFAULT_ZULIP_RELEASE, SUPPORTED_ZULIP_RELEASES } from "./transfer/zulip_format";
import { cmdCreateUser, cmdInit, cmdReactivateRealm } from "./cli/organization";
import { cmdBackup, cmdExport, cmdImport, cmdRestore, cmdSetPassword, cmdVerifyBackup } from "./cli/data_commands";
import { cmdSendTestEmail } from "./cli/email_commands";
import { cmdServe } from "./cli/serve";
import { UsageError } from "./cli/options";
import { useNormalJitPolicy } from "./lib/jit_policy";

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

export async function runCli(argv: string[]): Promise<number> {
  // Data files must not be readable by other accounts on the machine.
  process.umask(0o077);
  const [command, ...rest] = argv;
  // Only `serve` has a start worth keeping out of the JIT (src/lib/jit_policy.ts); an
  // import or a backup is one long run of hot code.
  if (command !== "serve") useNormalJitPolicy();
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

