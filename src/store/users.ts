import type { Store } from "./db";

export const Role = {
  OWNER: 100,
  ADMINISTRATOR: 200,
  MODERATOR: 300,
  MEMBER: 400,
  GUEST: 600,
} as const;
export type RoleValue = (typeof Role)[keyof typeof Role];
export const ROLES: readonly number[] = Object.values(Role);

export const BotType = { GENERIC: 1, INCOMING_WEBHOOK: 2, OUTGOING_WEBHOOK: 3, EMBEDDED: 4 } as const;

/** Who may see a user's real email (Zulip's per-user `email_address_visibility`). */
export const EmailVisibility = { EVERYONE: 1, MEMBERS: 2, ADMINS: 3, NOBODY: 4, MODERATORS: 5 } as const;

export interface UserRecord {
  id: number;
  /** The real (delivery) email address. */
  email: string;
  full_name: string;
  role: number;
  is_active: boolean;
  is_bot: boolean;
  bot_type: number | null;
  bot_owner_id: number | null;
  /** System bots (the notification bot) are not listed as realm users. */
  is_system_bot: boolean;
  /** Bun.password hash; null for accounts that cannot log in with a password. */
  password_hash: string | null;
  api_key: string;
  timezone: string;
  /** Unix seconds (fractional). Replaced by the first-login time for API-created users. */
  date_joined: number;
  /** Set for users created through the API/CLI until their first login. */
  joined_pending_first_login: boolean;
  avatar_source: "G" | "U";
  avatar_version: number;
  email_address_visibility: number;
  is_imported_stub: boolean;
  /** Per-user settings changed through the API; absent keys take the defaults. */
  settings: Record<string, unknown>;
}

/**
 * Decoded user records by ID, per store, valid while no user is written. Every
 * request (authentication) and every fan-out (recipients) reads users, so decoding
 * them again each time was a large share of the work. Reads inside a transaction
 * bypass it: they may see writes that roll back. Treat returned records as immutable.
 */
const userCaches = new WeakMap<Store, { version: number; users: Map<number, UserRecord> }>();

export function getUser(store: Store, id: number): UserRecord | undefined {
  if (store.inTransaction) return store.dbs.users.get(id) as UserRecord | undefined;
  let cache = userCaches.get(store);
  if (!cache || cache.version !== userWrites) userCaches.set(store, (cache = { version: userWrites, users: new Map() }));
  let user = cache.users.get(id);
  if (user === undefined) {
    user = store.dbs.users.get(id) as UserRecord | undefined;
    if (user !== undefined) cache.users.set(id, user);
  }
  return user;
}

export function getUserByEmail(store: Store, email: string): UserRecord | undefined {
  const id = store.dbs.usersByEmail.get(email.toLowerCase()) as number | undefined;
  return id === undefined ? undefined : getUser(store, id);
}

/**
 * Counts user writes in this process (one server per data folder, so every write goes
 * through here): caches of user records are valid while it is unchanged. It moves
 * when a user is written and again when that transaction ends (committed or rolled
 * back), so nothing read in between outlives the write.
 */
let userWrites = 0;
export const userWriteVersion = () => userWrites;

/** For writes that bypass putUser (wiping the store): forget every cached user. */
export function noteUsersRewritten(store: Store): void {
  userWrites++;
  store.afterCommit(() => userWrites++);
}

/** Writes a user and keeps the email index in step; call only inside `commit`. */
export function putUser(store: Store, user: UserRecord, previousEmail?: string): void {
  userWrites++;
  // Again once the commit lands: a reader between now and then saw the old record.
  store.afterCommit(() => userWrites++);
  if (previousEmail !== undefined && previousEmail.toLowerCase() !== user.email.toLowerCase()) {
    store.dbs.usersByEmail.remove(previousEmail.toLowerCase());
  }
  store.dbs.users.put(user.id, user);
  store.dbs.usersByEmail.put(user.email.toLowerCase(), user.id);
}

export function* allUsers(store: Store): Generator<UserRecord> {
  for (const { value } of store.dbs.users.getRange({})) yield value as UserRecord;
}
