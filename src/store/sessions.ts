import { valuesOf, type Store } from "./db";
import { StoreCache } from "./cache";

/**
 * A browser sign-in (POST /login). The cookie carries a random secret; only its
 * SHA-256 is stored, so a copy of the data folder (a backup) signs no one in. The
 * public ID names the session in GET/DELETE /hearth/sessions without revealing
 * anything that opens it.
 */
export interface SessionRecord {
  id: string;
  /** sha256 of the cookie's secret, hex. */
  hash: string;
  user_id: number;
  /** The token a cookie-authenticated write must repeat in X-CSRFToken. */
  csrf_token: string;
  /** Unix seconds (fractional). */
  created: number;
  /** Unix seconds (fractional), updated at most once per throttle interval (src/auth/session.ts). */
  last_seen: number;
  user_agent: string;
  ip: string;
}

/**
 * Sessions by hash while no session is written: every cookie-authenticated request
 * (the web app's `/json/…` calls) reads its session, which was two reads and two
 * decodings each. Every writer below invalidates it; unknown hashes are not kept.
 */
const sessionCache = new StoreCache<string, SessionRecord | undefined>();

export function sessionByHash(store: Store, hash: string): SessionRecord | undefined {
  return sessionCache.get(store, hash, () => {
    const key = store.dbs.sessionsByHash.get(hash) as [number, string] | undefined;
    return key ? (store.dbs.sessions.get(key) as SessionRecord | undefined) : undefined;
  });
}

export function getSession(store: Store, userId: number, id: string): SessionRecord | undefined {
  return store.dbs.sessions.get([userId, id]) as SessionRecord | undefined;
}

/** The user's sessions, by public ID. */
export function userSessions(store: Store, userId: number): SessionRecord[] {
  return valuesOf<SessionRecord>(store.dbs.sessions, userId);
}

/** Call inside `commit`. */
export function putSession(store: Store, session: SessionRecord): void {
  sessionCache.invalidate(store);
  store.dbs.sessions.put([session.user_id, session.id], session);
  store.dbs.sessionsByHash.put(session.hash, [session.user_id, session.id]);
}

/** Call inside `commit`. */
export function removeSession(store: Store, session: SessionRecord): void {
  sessionCache.invalidate(store);
  store.dbs.sessions.remove([session.user_id, session.id]);
  store.dbs.sessionsByHash.remove(session.hash);
}

/** Every session of the user; call inside `commit`. Returns how many went. */
export function removeUserSessions(store: Store, userId: number): number {
  const sessions = userSessions(store, userId);
  for (const session of sessions) removeSession(store, session);
  return sessions.length;
}

/** Every session of every user (the organization was deactivated); call inside `commit`. */
export function removeAllSessions(store: Store): number {
  const sessions = valuesOf<SessionRecord>(store.dbs.sessions);
  for (const session of sessions) removeSession(store, session);
  return sessions.length;
}
