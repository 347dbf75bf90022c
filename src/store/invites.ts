import { valuesOf, type Store } from "./db";

/**
 * A reusable invitation link (Zulip's MultiuseInvite): anyone holding its URL may create
 * an account with its role and channels until it expires or is revoked. Revoked links
 * are kept (marked), so a used key never becomes valid again.
 */
export interface InviteRecord {
  id: number;
  /** The secret in the link's URL (`/join/<key>/`). */
  key: string;
  invited_by_user_id: number;
  /** Unix seconds. */
  invited: number;
  /** Unix seconds; null: never expires. */
  expiry_date: number | null;
  invited_as: number;
  stream_ids: number[];
  /** User-defined groups the new account joins. */
  group_ids: number[];
  include_realm_default_subscriptions: boolean;
  revoked: boolean;
}

export function getInvite(store: Store, id: number): InviteRecord | undefined {
  return store.dbs.invites.get(id) as InviteRecord | undefined;
}

export function getInviteByKey(store: Store, key: string): InviteRecord | undefined {
  const id = store.dbs.inviteKeys.get(key) as number | undefined;
  return id === undefined ? undefined : getInvite(store, id);
}

/** Call inside `commit`. */
export function putInvite(store: Store, invite: InviteRecord): void {
  store.dbs.invites.put(invite.id, invite);
  store.dbs.inviteKeys.put(invite.key, invite.id);
}

export function allInvites(store: Store): InviteRecord[] {
  return valuesOf<InviteRecord>(store.dbs.invites);
}

/** Whether the link still lets people join at `nowSeconds`. */
export function inviteIsLive(invite: InviteRecord, nowSeconds: number): boolean {
  return !invite.revoked && (invite.expiry_date === null || invite.expiry_date > nowSeconds);
}

/** Marks every live link `userId` created as revoked (call inside `commit`); returns how many. */
export function revokeInvitesCreatedBy(store: Store, userId: number): number {
  let revoked = 0;
  for (const invite of allInvites(store)) {
    if (invite.invited_by_user_id !== userId || invite.revoked) continue;
    putInvite(store, { ...invite, revoked: true });
    revoked++;
  }
  return revoked;
}
