import type { Hearth } from "../context";
import { invalidApiKey, realmDeactivated, unauthorized, userDeactivated } from "../errors";
import { getRealm } from "../store/realm";
import { getUser, getUserByEmail, type UserRecord } from "../store/users";
import { secretsEqual } from "./credentials";

/** Splits `Authorization: Basic base64(email:api_key)`; null when absent or not Basic. */
export function parseBasicAuth(header: string | null): { email: string; key: string } | null {
  if (!header) return null;
  const match = /^Basic\s+(\S+)\s*$/i.exec(header);
  if (!match) return null;
  let decoded: string;
  try {
    decoded = Buffer.from(match[1], "base64").toString("utf-8");
  } catch {
    return null;
  }
  const colon = decoded.indexOf(":");
  if (colon === -1) return null;
  return { email: decoded.slice(0, colon), key: decoded.slice(colon + 1) };
}

/**
 * Finds an account by the email a client logs in with: the real address, or the
 * `user{id}@{realm_host}` placeholder that hidden-email users are shown as.
 */
export function findUserByLoginEmail(h: Hearth, email: string): UserRecord | undefined {
  const direct = getUserByEmail(h.store, email.trim());
  if (direct) return direct;
  const placeholder = /^user(\d+)@(.+)$/i.exec(email.trim());
  if (placeholder && placeholder[2].toLowerCase() === h.realmHost().toLowerCase()) {
    return getUser(h.store, Number(placeholder[1]));
  }
  return undefined;
}

/** A key no account has, compared against when the email is unknown so timing tells nothing. */
const DECOY_KEY = "decoy-key-that-matches-no-account-xx";

/**
 * The only place API credentials are checked: constant-time key comparison, failed
 * attempts rate limited per client IP, then deactivation checks.
 */
export async function authenticateRequest(h: Hearth, request: Request, ip: string, required: boolean): Promise<UserRecord | null> {
  const header = request.headers.get("authorization");
  const credentials = parseBasicAuth(header);
  if (!credentials) {
    if (!required && !header) return null;
    throw unauthorized();
  }
  h.limits.loginByIp.assertAllowed(`ip:${ip}`);
  const user = findUserByLoginEmail(h, credentials.email);
  const keyMatches = secretsEqual(credentials.key, user?.api_key ?? DECOY_KEY);
  if (!user || !keyMatches) {
    h.limits.loginByIp.recordFailure(`ip:${ip}`);
    throw invalidApiKey();
  }
  if (getRealm(h.store)?.deactivated) throw realmDeactivated();
  if (!user.is_active) throw userDeactivated();
  return user;
}
