import type { Store } from "./db";

/** A user's presence (Zulip's modern UserPresence model): unix seconds. */
export interface PresenceRecord {
  /** Last time a client reported the user active (interacting). */
  last_active_time: number;
  /** Last time any client of the user reported in (active or idle). */
  last_connected_time: number;
  /** Realm-wide sequence number of this row's last change (presence_last_update_id). */
  last_update_id: number;
}

export function getPresence(store: Store, userId: number): PresenceRecord | undefined {
  return store.dbs.presence.get(userId) as PresenceRecord | undefined;
}

export function putPresence(store: Store, userId: number, record: PresenceRecord): void {
  store.dbs.presence.put(userId, record);
}

export function* allPresence(store: Store): Generator<[number, PresenceRecord]> {
  for (const { key, value } of store.dbs.presence.getRange({})) yield [key as number, value as PresenceRecord];
}

/** The newest presence_last_update_id handed out; -1 before any update. */
export function lastPresenceUpdateId(store: Store): number {
  // The sequence starts at 1: 0 means none yet.
  return store.lastId("presence_update") || -1;
}
