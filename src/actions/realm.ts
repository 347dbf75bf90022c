import { rmSync } from "node:fs";
import { clearAllButMeta, recordCurrentFormat } from "../store/format";
import { uploadsRoot } from "../store/uploads";
import type { Store } from "../store/db";
import type { Hearth } from "../context";
import { commit } from "../events/commit";
import { assertOwner } from "../access/roles";
import { badRequest } from "../errors";
import { getRealm, putRealm, REALM_ID, type Realm } from "../store/realm";
import { activeUserIds, BotType, newUserRecord, putUser, Role, type UserRecord } from "../store/users";
import { StoreCache } from "../store/cache";
import { recipientsChanged } from "../store/unread";
import { ensureAvatarSalt } from "../store/avatars";
import { checkEmailAddress, checkFullName } from "./create_user";
import { SYSTEM_BOTS } from "../store/system_bots";
import { MIN_DEACTIVATED_REALM_DELETION_DAYS } from "../views/realm";

import { createMissingSystemGroups } from "./user_groups";
import { hashPasswordSync } from "../lib/credentials";
import { removeAllSessions } from "../store/sessions";


export interface InitOptions {
  realmName: string;
  ownerEmail: string;
  ownerPassword: string;
  ownerFullName?: string;
  externalUrl?: string | null;
}

/** Zulip's Realm.MAX_REALM_NAME_LENGTH, in characters. */
export const MAX_REALM_NAME_LENGTH = 40;

/**
 * Creates the organization, its system bots and the first owner in one transaction.
 * Runs before the server listens (init command, or serve on an empty folder), so
 * there is nobody to notify.
 */
export async function doInitRealm(store: Store, options: InitOptions): Promise<{ realm: Realm; owner: UserRecord }> {
  const email = checkEmailAddress(options.ownerEmail);
  const fullName = checkFullName(options.ownerFullName ?? email.split("@")[0]);
  const realmName = options.realmName.trim();
  if (realmName === "" || [...realmName].length > MAX_REALM_NAME_LENGTH) throw new Error(`The organization name must be 1 to ${MAX_REALM_NAME_LENGTH} characters long.`);
  if (options.ownerPassword.length < 6) throw new Error("The owner password must be at least 6 characters long.");
  const passwordHash = hashPasswordSync(options.ownerPassword);
  return store.commit(() => {
    if (getRealm(store)) throw new Error("This data folder already holds an organization.");
    recordCurrentFormat(store);
    const realm: Realm = {
      id: REALM_ID,
      name: realmName,
      description: "",
      date_created: Math.floor(Date.now() / 1000),
      deactivated: false,
      external_url: options.externalUrl ?? null,
      settings: {},
    };
    putRealm(store, realm);
    ensureAvatarSalt(store);
    createMissingSystemGroups(store);
    for (const bot of SYSTEM_BOTS) {
      putUser(store, newUserRecord(store.nextId("user"), { email: bot.email, full_name: bot.full_name, is_bot: true, bot_type: BotType.GENERIC, is_system_bot: true }));
    }
    const owner = newUserRecord(store.nextId("user"), { email, full_name: fullName, role: Role.OWNER, password_hash: passwordHash, joined_pending_first_login: true });
    putUser(store, owner);
    return { realm, owner };
  });
}

export async function doReactivateRealm(store: Store): Promise<boolean> {
  return store.commit(() => {
    const realm = getRealm(store);
    if (!realm) throw new Error("This data folder holds no organization.");
    if (realm.data_deleted) throw new Error("The organization's data has been deleted; it cannot be reactivated.");
    if (!realm.deactivated) return false;
    putRealm(store, { ...realm, deactivated: false, scheduled_deletion_date: null });
    return true;
  });
}


/**
 * `POST /realm/deactivate` (owners): everyone is logged out at once (every API key is
 * refused with REALM_DEACTIVATED); the data stays until `deletionDelayDays` have
 * passed (null: kept until an administrator reactivates or removes it by hand).
 */
export async function doDeactivateRealm(h: Hearth, actor: UserRecord, deletionDelayDays: number | null): Promise<void> {
  assertOwner(actor);
  if (deletionDelayDays !== null && deletionDelayDays < MIN_DEACTIVATED_REALM_DELETION_DAYS) {
    throw badRequest(`Data deletion time must be at least ${MIN_DEACTIVATED_REALM_DELETION_DAYS} days in the future.`);
  }
  const recipients = activeUserIds(h);
  await commit(h, (tx) => {
    const current = getRealm(h.store)!;
    const scheduled = deletionDelayDays === null ? null : Math.floor(Date.now() / 1000) + deletionDelayDays * 86400;
    const next = { ...current, deactivated: true, scheduled_deletion_date: scheduled };
    putRealm(h.store, next);
    // Everyone is signed out of the browser too; reactivation does not bring sessions back.
    removeAllSessions(h.store);
    tx.notify({ type: "realm", op: "deactivated", realm_id: next.id }, recipients);
  });
}

/**
 * Deletes a deactivated organization's data once its deletion date has passed: every
 * key space is emptied except the realm record, which remembers that it happened.
 * Runs at start and hourly (src/server.ts), so a restart never skips it.
 */
export async function runRealmDeletionIfDue(store: Store, now = Date.now() / 1000): Promise<boolean> {
  const realm = getRealm(store);
  if (!realm?.deactivated || realm.data_deleted || !realm.scheduled_deletion_date || now < realm.scheduled_deletion_date) return false;
  await store.commit(() => {
    clearAllButMeta(store);
    // Every recipient list just went: a batch of the unread-rows worker planned before
    // must read them again, and so writes no rows for messages that are gone.
    recipientsChanged(store);
    StoreCache.invalidateAll(store);
    putRealm(store, { ...realm, data_deleted: true });
  });
  // The uploaded files are the organization's data too; their records just went.
  rmSync(uploadsRoot(store), { recursive: true, force: true });
  return true;
}
