import { fitsKey, type Store } from "./db";
import { StoreCache } from "./cache";
import { generateApiKey } from "../lib/credentials";

export const Role = {
  OWNER: 100,
  ADMINISTRATOR: 200,
  MODERATOR: 300,
  MEMBER: 400,
  GUEST: 600,
} as const;
export const ROLES: readonly number[] = Object.values(Role);

export const isAdmin = (u: UserRecord) => u.role <= Role.ADMINISTRATOR;
export const isOwner = (u: UserRecord) => u.role === Role.OWNER;
export const isModerator = (u: UserRecord) => u.role <= Role.MODERATOR;
export const isGuest = (u: UserRecord) => u.role === Role.GUEST;

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
  /** A bot's defaults (Zulip's default_sending_stream & co.); absent: none. */
  bot_defaults?: BotDefaults;
  /** An outgoing-webhook bot's service (Zulip's Service row; one per bot, as in Zulip). */
  bot_service?: OutgoingWebhookService;
}

/**
 * Where an outgoing-webhook bot's triggers are posted (`base_url`), in which format
 * (`interface`: 1 Zulip's own JSON, 2 Slack's outgoing-webhook form), and the token
 * the receiving server checks to know the request came from this server.
 */
export interface OutgoingWebhookService {
  name: string;
  base_url: string;
  interface: number;
  token: string;
}

/**
 * Where a bot posts when a channel message names none, which channel its queues
 * follow when registered without a narrow, and whether they get every public
 * channel's messages when registered without saying.
 */
export interface BotDefaults {
  sending_channel_id: number | null;
  events_register_channel_id: number | null;
  all_public_streams: boolean;
}

/** Every request (authentication) and every fan-out (recipients) reads users. */
const userCache = new StoreCache<number, UserRecord | undefined>();

export function getUser(store: Store, id: number): UserRecord | undefined {
  return userCache.get(store, id, () => store.dbs.users.get(id) as UserRecord | undefined);
}

export function getUserByEmail(store: Store, email: string): UserRecord | undefined {
  const key = email.toLowerCase();
  // No address is so long (254 characters at most), and LMDB refuses a key that long (it throws).
  if (!fitsKey(key)) return undefined;
  const id = store.dbs.usersByEmail.get(key) as number | undefined;
  return id === undefined ? undefined : getUser(store, id);
}

/** Moves whenever a user record is written (see StoreCache): caches of users check it. */
export const userWriteVersion = () => userCache.version;

/**
 * The active accounts (system bots excepted) and the deactivated ones (usually few),
 * from one pass over the users: recomputed only after a user is written, not after
 * every commit.
 */
const accountStatesCache = new StoreCache<"states", { active: readonly number[]; inactive: ReadonlySet<number> }>();

function accountStates(store: Store) {
  return accountStatesCache.get(store, "states", () => {
    const active: number[] = [];
    const inactive = new Set<number>();
    for (const u of allUsers(store)) {
      if (!u.is_active) inactive.add(u.id);
      else if (!u.is_system_bot) active.push(u.id);
    }
    return { active, inactive };
  });
}

export function activeUserIdsOf(store: Store): readonly number[] {
  return accountStates(store).active;
}

/** Every active human and bot account (not system bots): the audience of realm-wide events. */
export function activeUserIds(h: { store: Store }): readonly number[] {
  return activeUserIdsOf(h.store);
}

/** The same without guests (Zulip's active_non_guest_user_ids): who hears of default channels and their groups. */
export function activeNonGuestUserIds(h: { store: Store }): number[] {
  return activeUserIdsOf(h.store).filter((id) => getUser(h.store, id)?.role !== Role.GUEST);
}

/** The deactivated accounts: a message's fan-out drops them from its recipients with one set lookup each, not a user read each. */
export function inactiveUserIdsOf(store: Store): ReadonlySet<number> {
  return accountStates(store).inactive;
}

/** Writes a user and keeps the email index in step; call only inside `commit`. */
export function putUser(store: Store, user: UserRecord, previousEmail?: string): void {
  userCache.invalidate(store);
  accountStatesCache.invalidate(store);
  if (previousEmail !== undefined && previousEmail.toLowerCase() !== user.email.toLowerCase()) {
    store.dbs.usersByEmail.remove(previousEmail.toLowerCase());
  }
  store.dbs.users.put(user.id, user);
  store.dbs.usersByEmail.put(user.email.toLowerCase(), user.id);
}

export function* allUsers(store: Store): Generator<UserRecord> {
  for (const { value } of store.dbs.users.getRange({})) yield value as UserRecord;
}

/**
 * A new account's record: a member, active, with a fresh API key and no password,
 * as every way of making one (a new organization's owner and bots, an import) starts
 * it; `fields` says what differs.
 */
export function newUserRecord(id: number, fields: Partial<UserRecord> & Pick<UserRecord, "email" | "full_name">): UserRecord {
  return {
    id,
    role: Role.MEMBER,
    is_active: true,
    is_bot: false,
    bot_type: null,
    bot_owner_id: null,
    is_system_bot: false,
    password_hash: null,
    api_key: generateApiKey(),
    timezone: "",
    date_joined: Date.now() / 1000,
    joined_pending_first_login: false,
    avatar_source: "G",
    avatar_version: 1,
    email_address_visibility: EmailVisibility.EVERYONE,
    is_imported_stub: false,
    settings: {},
    ...fields,
  };
}
