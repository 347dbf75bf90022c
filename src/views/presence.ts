import type { Hearth } from "../context";
import { allPresence, getPresence, lastPresenceUpdateId, type PresenceRecord } from "../store/presence";
import { getUser, type UserRecord } from "../store/users";
import { apiEmail } from "./users";
import { userSetting } from "./settings";
import { realmSetting } from "../store/realm_settings";
import { requireRealm } from "./realm";

/** Zulip's presence timing (zerver/lib/presence.py, settings.py). */
export const PRESENCE_PING_INTERVAL_SECS = 60;
export const PRESENCE_OFFLINE_THRESHOLD_SECS = 140;
/** Legacy format: "active" while the last activity is this close to the last connection. */
const LEGACY_ACTIVITY_OFFSET_SECS = 70;
export const DEFAULT_PRESENCE_HISTORY_DAYS = 14;

export type PresenceStatus = "active" | "idle" | "offline";

export function modernPresence(p: PresenceRecord) {
  return { active_timestamp: p.last_active_time, idle_timestamp: p.last_connected_time };
}

/** One client entry of the legacy format (Zulip stores no per-client data since FL 178). */
export function legacyClientPresence(p: PresenceRecord) {
  const active = p.last_active_time + LEGACY_ACTIVITY_OFFSET_SECS >= p.last_connected_time;
  return { client: "website", status: active ? ("active" as const) : ("idle" as const), timestamp: active ? p.last_active_time : p.last_connected_time, pushable: false };
}

export function legacyPresence(p: PresenceRecord) {
  const website = legacyClientPresence(p);
  return { website, aggregated: { client: website.client, status: website.status, timestamp: website.timestamp } };
}

export function presenceStatus(p: PresenceRecord | undefined, now: number): PresenceStatus {
  if (!p || now - p.last_connected_time > PRESENCE_OFFLINE_THRESHOLD_SECS) return "offline";
  return legacyClientPresence(p).status as PresenceStatus;
}

/** Whether others may see this user's presence (the user's presence_enabled, the realm's presence_disabled). */
export function presenceVisible(h: Hearth, user: UserRecord): boolean {
  if (realmSetting(requireRealm(h).settings, "presence_disabled") === true) return false;
  return user.is_active && !user.is_system_bot && userSetting(user, "presence_enabled") !== false;
}

export interface PresenceQuery {
  slim: boolean;
  /** Only rows changed after this presence_last_update_id (modern format only). */
  sinceUpdateId?: number;
  historyLimitDays?: number | null;
}

/** Presences of the realm, keyed by user ID (modern) or by API email (legacy). */
export function getRealmPresences(h: Hearth, query: PresenceQuery): { presences: Record<string, unknown>; presence_last_update_id: number } {
  const now = Date.now() / 1000;
  const days = query.historyLimitDays ?? DEFAULT_PRESENCE_HISTORY_DAYS;
  const oldest = now - days * 86400;
  const presences: Record<string, unknown> = {};
  for (const [userId, p] of allPresence(h.store)) {
    if (p.last_connected_time < oldest) continue;
    if (query.sinceUpdateId !== undefined && p.last_update_id <= query.sinceUpdateId) continue;
    const user = getUser(h.store, userId);
    if (!user || !presenceVisible(h, user)) continue;
    if (query.slim) presences[String(userId)] = modernPresence(p);
    else presences[apiEmail(h, user)] = legacyPresence(p);
  }
  return { presences, presence_last_update_id: lastPresenceUpdateId(h.store) };
}

/**
 * `GET /users/{user_id}/presence`: the user's presence in the modern format (FL 487)
 * beside the legacy `website` and `aggregated` entries (kept again from FL 497), or
 * undefined when others may not see any.
 */
export function getUserPresence(h: Hearth, user: UserRecord) {
  const record = getPresence(h.store, user.id);
  if (!record || !presenceVisible(h, user)) return undefined;
  const { website } = legacyPresence(record);
  const entry = { status: website.status, timestamp: website.timestamp };
  return { ...modernPresence(record), website: entry, aggregated: entry };
}
