import { randomBytes } from "node:crypto";
import type { Hearth } from "../context";
import { signToken, verifyToken, type TokenFields } from "../lib/signed_tokens";
import { getAccountTokenSecret, putAccountTokenSecret } from "../store/account_emails";

/**
 * The links of account emails, signed with a secret kept in the data folder's store
 * (made the first time one is needed, inside that action's commit, so a restart or a
 * backup keeps every link sent working, and another server's links never verify).
 */

export const TokenPurpose = {
  passwordReset: "password_reset",
  emailChange: "email_change",
  unsubscribe: "unsubscribe",
} as const;

/** Call only inside `commit`. */
export function signAccountToken(h: Hearth, purpose: string, fields: TokenFields): string {
  let secret = getAccountTokenSecret(h.store);
  if (!secret) {
    secret = randomBytes(32).toString("hex");
    putAccountTokenSecret(h.store, secret);
  }
  return signToken(secret, purpose, fields);
}

/** A token's fields when this server signed it for `purpose` and it has not expired (`exp`, unix seconds), else null. */
export function readAccountToken(h: Hearth, purpose: string, token: string): TokenFields | null {
  const secret = getAccountTokenSecret(h.store);
  if (!secret) return null;
  const fields = verifyToken(secret, purpose, token);
  if (!fields) return null;
  if (typeof fields.exp === "number" && fields.exp < Date.now() / 1000) return null;
  return fields;
}

/** A link that does not (or no longer) work: the pages say so without saying why. */
export class AccountLinkError extends Error {}
