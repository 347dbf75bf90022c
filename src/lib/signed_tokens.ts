import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * Tokens for links in emails (password reset, address confirmation, unsubscribe):
 * `<payload>.<signature>`, both base64url, the payload a small JSON object and the
 * signature an HMAC-SHA256 over the purpose and the payload with the server's secret.
 * The purpose is signed but not carried, so a token made for one page is refused by
 * every other. Nothing in a token is secret; what it proves is that this server made it.
 */

export type TokenFields = Record<string, string | number>;

function signature(secret: string, purpose: string, payload: string): Buffer {
  return createHmac("sha256", secret).update(`${purpose}\n${payload}`).digest();
}

export function signToken(secret: string, purpose: string, fields: TokenFields): string {
  const payload = Buffer.from(JSON.stringify(fields)).toString("base64url");
  return `${payload}.${signature(secret, purpose, payload).toString("base64url")}`;
}

/** The fields of a token this server signed for `purpose`, or null (malformed, forged, made for another purpose). */
export function verifyToken(secret: string, purpose: string, token: string): TokenFields | null {
  // Far longer than any token this server makes: nothing to decode.
  if (token.length > 2000) return null;
  const match = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/.exec(token);
  if (!match) return null;
  const given = Buffer.from(match[2], "base64url");
  const expected = signature(secret, purpose, match[1]);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  try {
    const fields = JSON.parse(Buffer.from(match[1], "base64url").toString("utf8"));
    return fields !== null && typeof fields === "object" && !Array.isArray(fields) ? (fields as TokenFields) : null;
  } catch {
    return null;
  }
}
