import { createHash, randomBytes } from "node:crypto";
import type { Hearth } from "../context";
import { badRequest } from "../errors";
import { commit } from "../events/commit";
import { randomToken } from "../lib/credentials";
import { getSession, putSession, removeSession, sessionByHash, userSessions, type SessionRecord } from "../store/sessions";
import type { UserRecord } from "../store/users";

/**
 * Browser sign-in sessions (POST /login, src/auth/session.ts). They record no state
 * any client is told about (Zulip sends no event for its sessions either), so these
 * commits notify no one.
 */

/** The SHA-256 a session is stored under, from the cookie's secret. */
export const sessionSecretHash = (secret: string) => createHash("sha256").update(secret).digest("hex");

/** The longest user agent kept: it is shown in the session list, not parsed. */
const MAX_USER_AGENT = 300;

export interface NewSession {
  /** The cookie's value; not stored anywhere. */
  secret: string;
  session: SessionRecord;
}

/**
 * A new session for `user`. The user's sessions idle for longer than `idleMs` go in
 * the same write: one never used again is otherwise only removed when its cookie
 * comes back, so this bounds what a user's abandoned browsers leave behind.
 */
export async function doCreateSession(h: Hearth, user: UserRecord, client: { userAgent: string; ip: string }, idleMs: number): Promise<NewSession> {
  const secret = randomBytes(32).toString("base64url");
  // Fractional seconds: a short idle time (tests, kiosks) must not lose up to a second to rounding.
  const now = Date.now() / 1000;
  const session: SessionRecord = {
    id: randomToken(16),
    hash: sessionSecretHash(secret),
    user_id: user.id,
    csrf_token: randomToken(32),
    created: now,
    last_seen: now,
    user_agent: client.userAgent.slice(0, MAX_USER_AGENT),
    ip: client.ip,
  };
  await commit(h, () => {
    for (const old of userSessions(h.store, user.id)) if ((now - old.last_seen) * 1000 > idleMs) removeSession(h.store, old);
    putSession(h.store, session);
  });
  return { secret, session };
}

/** Records that the session was used; a session revoked meanwhile stays revoked. */
export async function doTouchSession(h: Hearth, session: SessionRecord, now: number): Promise<void> {
  await commit(h, () => {
    const current = sessionByHash(h.store, session.hash);
    if (current) putSession(h.store, { ...current, last_seen: Math.max(current.last_seen, now) });
  });
}

export async function doRevokeSession(h: Hearth, session: SessionRecord): Promise<void> {
  await commit(h, () => {
    const current = sessionByHash(h.store, session.hash);
    if (current) removeSession(h.store, current);
  });
}

/** `DELETE /hearth/sessions/{id}`: one of the caller's own sessions, by its public ID. */
export async function doRevokeOwnSession(h: Hearth, user: UserRecord, id: string): Promise<void> {
  const invalid = () => badRequest("Invalid session ID");
  if (!/^[A-Za-z0-9]{1,64}$/.test(id)) throw invalid();
  await commit(h, () => {
    const session = getSession(h.store, user.id, id);
    if (!session) throw invalid();
    removeSession(h.store, session);
  });
}
