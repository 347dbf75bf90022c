import type { Hearth } from "../context";
import { invalidApiKey, realmDeactivated, unauthorized, userDeactivated } from "../errors";
import { getRealm, realmWriteVersion } from "../store/realm";
import { allUsers, getUser, userWriteVersion, type UserRecord } from "../store/users";
import { createHash } from "node:crypto";
import { secretsEqual } from "../lib/credentials";
import { findUserByLoginEmail } from "../access/users";

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

/** A key no account has, compared against when the email is unknown so timing tells nothing. */
const DECOY_KEY = "decoy-key-that-matches-no-account-xx";

/**
 * Credentials already checked, by exact Authorization header, while no user or realm
 * record has been written since: long-polling clients authenticate on every poll,
 * and re-reading and decoding the account each time was the largest cost of a poll.
 * Any user or realm write (a new key, a deactivation) empties it.
 */
interface AuthCache {
  userVersion: number;
  realmVersion: number;
  users: Map<string, UserRecord>;
}
const MAX_CACHED_CREDENTIALS = 10_000;
const authCaches = new WeakMap<Hearth, AuthCache>();

function authCacheFor(h: Hearth): AuthCache {
  let cache = authCaches.get(h);
  if (!cache || cache.userVersion !== userWriteVersion() || cache.realmVersion !== realmWriteVersion()) {
    cache = { userVersion: userWriteVersion(), realmVersion: realmWriteVersion(), users: new Map() };
    authCaches.set(h, cache);
  }
  return cache;
}

/**
 * Every credential passes here: failed attempts rate limited per client IP, the key
 * compared in constant time (against a decoy when no account was found), then the
 * deactivation checks.
 */
function checkCredentials(h: Hearth, ip: () => string, key: string, findAccount: () => UserRecord | undefined): UserRecord {
  h.limits.loginByIp.assertAllowed(`ip:${ip()}`);
  const user = findAccount();
  const keyMatches = secretsEqual(key, user?.api_key ?? DECOY_KEY);
  if (!user || !keyMatches) {
    h.limits.loginByIp.recordFailure(`ip:${ip()}`);
    throw invalidApiKey();
  }
  if (getRealm(h.store)?.deactivated) throw realmDeactivated();
  if (!user.is_active) throw userDeactivated();
  return user;
}

/** HTTP Basic `email:api_key`, with known headers remembered until a user or the realm is written. */
export function authenticateRequest(h: Hearth, request: Request, ip: () => string, required: boolean): UserRecord | null {
  const header = request.headers.get("authorization");
  const cache = header ? authCacheFor(h) : null;
  const known = header ? cache!.users.get(header) : undefined;
  if (known) return known;
  const credentials = parseBasicAuth(header);
  if (!credentials) {
    if (!required && !header) return null;
    throw unauthorized();
  }
  const user = checkCredentials(h, ip, credentials.key, () => findUserByLoginEmail(h, credentials.email));
  if (cache!.users.size >= MAX_CACHED_CREDENTIALS) cache!.users.clear();
  cache!.users.set(header!, user);
  return user;
}

/** Each account's key by its SHA-256, rebuilt after any user write: a webhook's key is found with one hash, not one per account. */
const keyIndexes = new WeakMap<Hearth, { version: number; byHash: Map<string, number> }>();

function accountByKeyHash(h: Hearth, hash: string): UserRecord | undefined {
  let index = keyIndexes.get(h);
  if (!index || index.version !== userWriteVersion()) {
    index = { version: userWriteVersion(), byHash: new Map() };
    for (const user of allUsers(h.store)) index.byHash.set(createHash("sha256").update(user.api_key).digest("hex"), user.id);
    keyIndexes.set(h, index);
  }
  const id = index.byHash.get(hash);
  return id === undefined ? undefined : getUser(h.store, id);
}

/** A webhook's `api_key` URL parameter (Zulip's webhook URLs carry the key alone): the account found by the key's hash. */
export function authenticateApiKey(h: Hearth, key: string, ip: () => string): UserRecord {
  return checkCredentials(h, ip, key, () => accountByKeyHash(h, createHash("sha256").update(key).digest("hex")));
}
