import type { Hearth } from "../context";
import { ApiError } from "../errors";
import { getRealm } from "../store/realm";
import { getUser, type UserRecord } from "../store/users";
import { sessionByHash, type SessionRecord } from "../store/sessions";
import { doRevokeSession, doTouchSession, sessionSecretHash } from "../actions/sessions";
import { secretsEqual } from "../lib/credentials";

/**
 * Browser sessions: the `hearth_session` cookie (HttpOnly) names a session stored in
 * LMDB (src/store/sessions.ts); `hearth_csrf` (readable by the page's script) carries
 * the token that every cookie-authenticated write must repeat in `X-CSRFToken`, as
 * Zulip's web app does for its `/json/` calls. A cross-site page can make the browser
 * send the cookie but cannot read the token.
 */
export const SESSION_COOKIE = "hearth_session";
export const CSRF_COOKIE = "hearth_csrf";
export const CSRF_HEADER = "x-csrftoken";

/** Default idle expiry: 14 days without a request (Zulip's SESSION_COOKIE_AGE is two weeks). */
export const DEFAULT_SESSION_IDLE_MS = 14 * 86_400_000;

export const csrfFailed = () => new ApiError("CSRF verification failed.", "CSRF_FAILED", 403);

/** No usable session. No Basic challenge: a browser would answer it with its own login dialog. */
export const notLoggedIn = () =>
  new ApiError("Not logged in: API authentication or user session required", "UNAUTHORIZED", 401, {}, { "WWW-Authenticate": 'Session realm="zulip"' });

/** A cookie's value from the Cookie header; null when absent. */
export function readCookie(request: Request, name: string): string | null {
  const header = request.headers.get("cookie");
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq === -1 || part.slice(0, eq).trim() !== name) continue;
    return part.slice(eq + 1).trim();
  }
  return null;
}

export const sessionIdleMs = (h: Hearth) => h.config.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;

/**
 * How stale last_seen may get before a request writes it again: a minute, or a tenth
 * of the idle time when that is shorter, so a busy tab costs one write a minute, not
 * one per request, and expiry is still accurate to a tenth.
 */
const touchIntervalMs = (h: Hearth) => Math.min(60_000, sessionIdleMs(h) / 10);

/** Sessions whose last_seen write is under way, so concurrent requests add none. */
const touching = new WeakMap<Hearth, Set<string>>();

export interface ActiveSession {
  session: SessionRecord;
  user: UserRecord;
}

/**
 * The request's session and its user, or null: no cookie, an unknown or revoked
 * session, one idle past the configured time (removed on the way), a deactivated
 * user or organization. Records the use, throttled (touchIntervalMs).
 */
export function sessionOf(h: Hearth, request: Request): ActiveSession | null {
  const secret = readCookie(request, SESSION_COOKIE);
  if (!secret || secret.length > 200) return null;
  // Only the secret's hash is looked up (and kept, by the store's session cache): no
  // raw cookie secret stays in memory beyond its request.
  const session = sessionByHash(h.store, sessionSecretHash(secret));
  if (!session) return null;
  const now = Date.now();
  if (now - session.last_seen * 1000 > sessionIdleMs(h)) {
    void doRevokeSession(h, session).catch((e) => console.error("Removing an expired session failed:", e));
    return null;
  }
  const user = getUser(h.store, session.user_id);
  if (!user || !user.is_active || getRealm(h.store)?.deactivated) return null;
  if (now - session.last_seen * 1000 >= touchIntervalMs(h)) {
    let pending = touching.get(h);
    if (!pending) touching.set(h, (pending = new Set()));
    if (!pending.has(session.hash)) {
      pending.add(session.hash);
      void doTouchSession(h, session, now / 1000)
        .catch((e) => console.error("Recording a session's use failed:", e))
        .finally(() => pending.delete(session.hash));
    }
  }
  return { session, user };
}

/** The signed-in user of a browser request (no CSRF check: for pages, e.g. whether `/` shows the app or the login). */
export function sessionUserOf(h: Hearth, request: Request): UserRecord | null {
  return sessionOf(h, request)?.user ?? null;
}

/** Reading methods carry no CSRF token; everything else must. */
export const isSafeMethod = (method: string) => method === "GET" || method === "HEAD";

/** Whether `token` (X-CSRFToken or a form's csrf_token) is the session's, compared in constant time. */
export function csrfTokenMatches(session: SessionRecord, token: string | null): boolean {
  return token !== null && secretsEqual(token, session.csrf_token);
}

/**
 * The caller of a cookie-authenticated API request (`/json/…`, tus, files): 401
 * without a session when one is required, 403 when a write lacks the CSRF token.
 */
export function authenticateSession(h: Hearth, request: Request, required: boolean): UserRecord | null {
  const active = sessionOf(h, request);
  if (!active) {
    if (required) throw notLoggedIn();
    return null;
  }
  if (!isSafeMethod(request.method) && !csrfTokenMatches(active.session, request.headers.get(CSRF_HEADER))) throw csrfFailed();
  return active.user;
}
