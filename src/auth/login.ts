import type { Hearth } from "../context";
import { ApiError, realmDeactivated, userDeactivated } from "../errors";
import { getRealm } from "../store/realm";
import type { UserRecord } from "../store/users";
import { verifyPassword } from "../lib/credentials";
import { findUserByLoginEmail } from "../access/users";
import { doNoteLogin } from "../actions/login_notices";

/** An account's key in the per-account login limit: every check of its password counts against it. */
export const accountLimitKey = (userId: number) => `user:${userId}`;

const authenticationFailed = () => new ApiError("Your username or password is incorrect", "AUTHENTICATION_FAILED", 401);

/**
 * PATCH /settings' `old_password`, checked as a login is: Zulip checks it through its
 * rate-limited authenticate(), so an API key must not buy unlimited guesses at the
 * account's password. Failures count against the account's login limit.
 */
export function currentPasswordCheck(h: Hearth, user: UserRecord): (password: string) => Promise<boolean> {
  return async (password) => {
    const limitKey = accountLimitKey(user.id);
    h.limits.loginByUser.assertAllowed(limitKey);
    const ok = await verifyPassword(password, user.password_hash);
    if (!ok) h.limits.loginByUser.recordFailure(limitKey);
    return ok;
  };
}

/**
 * `POST /fetch_api_key`: email (or `user{id}@host`) and password, with failed
 * attempts limited per account and per address. `userAgent` (the request's
 * User-Agent header) tells a new client, for the new-login notice. An account's counter is keyed by
 * its ID, so its two login names share one limit.
 */
export async function checkPasswordLogin(h: Hearth, username: string, password: string, ip: string, userAgent = ""): Promise<UserRecord> {
  const user = findUserByLoginEmail(h, username);
  const userKey = user ? accountLimitKey(user.id) : `name:${username.trim().toLowerCase()}`;
  const ipKey = `ip:${ip}`;
  h.limits.loginByUser.assertAllowed(userKey);
  h.limits.loginByIp.assertAllowed(ipKey);
  const ok = await verifyPassword(password, user?.password_hash ?? null);
  if (!user || !ok || user.is_bot) {
    h.limits.loginByUser.recordFailure(userKey);
    h.limits.loginByIp.recordFailure(ipKey);
    throw authenticationFailed();
  }
  if (getRealm(h.store)?.deactivated) throw realmDeactivated();
  if (!user.is_active) throw userDeactivated();
  // Every password login passes here (the API's and the browser's): a client the
  // account has not logged in from before gets the new-login notice.
  await doNoteLogin(h, user, { ip, userAgent });
  return user;
}
