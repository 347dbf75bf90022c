import type { Hearth } from "../context";
import { userSessions } from "../store/sessions";

export interface SessionView {
  id: string;
  created: number;
  last_seen: number;
  user_agent: string;
  ip: string;
  current: boolean;
}

/** GET /hearth/sessions: the user's sessions still within the idle time, newest use first. */
export function getSessionViews(h: Hearth, userId: number, currentId: string | null, idleMs: number): SessionView[] {
  const since = (Date.now() - idleMs) / 1000;
  return userSessions(h.store, userId)
    .filter((s) => s.last_seen >= since)
    .sort((a, b) => b.last_seen - a.last_seen)
    .map((s) => ({ id: s.id, created: Math.floor(s.created), last_seen: Math.floor(s.last_seen), user_agent: s.user_agent, ip: s.ip, current: s.id === currentId }));
}
