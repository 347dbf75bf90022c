import { valuesOf, type Store } from "./db";

/**
 * A reusable invitation link (Zulip's MultiuseInvite): anyone holding its URL may create
 * an account with its role and channels until it expires or is revoked. Revoked links
 * are kept (marked), so a used key never becomes valid again.
 *
 * With `email` set it is an email invitation instead (Zulip's PreregistrationUser,
 * POST /invites): one use, by that address only (the link was sent there, so accepting
 * proves it), after which `accepted_user_id` is set. Both kinds share the ID sequence
 * and key spaces: `is_multiuse` in GET /invites tells them apart.
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
  /** An email invitation's address (absent: a reusable link). */
  email?: string;
  /** Email invitations: the account it created, once accepted. */
  accepted_user_id?: number;
  /** Email invitations: Notification Bot tells the inviter when the invitee joins. */
  notify_referrer_on_join?: boolean;
  /** Email invitations: Welcome Bot's extra message ("" none; null the organization's default). */
  welcome_message_custom_text?: string | null;
  /** Email invitations: the outbox row of the last email sent for it; null when no email went (no SMTP server). */
  email_id?: number | null;
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
  return !invite.revoked && invite.accepted_user_id === undefined && (invite.expiry_date === null || invite.expiry_date > nowSeconds);
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
