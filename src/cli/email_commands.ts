/** Outgoing mail from the command line: the SMTP URL and From options, and `send-test-email`. */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { getRealm } from "../store/realm";
import { describeSmtpError, Mailer, parseSmtpUrl, redactSmtpUrl, SmtpUrlError, type SmtpSettings } from "../lib/mailer";
import { checkEmailFrom, isValidEmailAddress, sendEmailNow } from "../actions/email";
import { UsageError, parseExternalUrl, parseFlags, required, withStore } from "./options";

export function parseSmtpOption(url: string): SmtpSettings {
  try {
    return parseSmtpUrl(url);
  } catch (e) {
    if (e instanceof SmtpUrlError) throw new UsageError(e.message);
    throw e;
  }
}

export function parseEmailFromEnv(): string | null {
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
export async function realmHostFor(dataDir: string | undefined): Promise<string> {
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

export async function cmdSendTestEmail(args: string[]) {
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

