/** Invitation links found by their key, and whether they still work. */
import type { Hearth } from "../context";
import { getRealm } from "../store/realm";
import { getInviteByKey, inviteIsLive, type InviteRecord } from "../store/invites";
import { getUser, Role, ROLES, type UserRecord } from "../store/users";
import { badRequest, insufficientPermission, mustBeAdmin, mustBeOwner } from "../errors";

/** Why a link no longer works, in Zulip's words for a dead confirmation link. */
export class InviteLinkError extends Error {
  constructor(
    message: string,
    /** No link ever had this key (a guess, or a typo), rather than one that died. */
    readonly unknownKey = false,
  ) {
    super(message);
  }
}

/**
 * Live, and never granting more than its creator holds now: deactivation revokes a
 * creator's links, and a creator demoted below a link's role makes that link dead too.
 */
export function linkWorks(h: Hearth, invite: InviteRecord, nowSeconds: number): boolean {
  const creator = getUser(h.store, invite.invited_by_user_id);
  return inviteIsLive(invite, nowSeconds) && creator?.is_active === true && creator.role <= invite.invited_as;
}

/** The live invitation behind a `/join/<key>/` URL, or InviteLinkError. */
export function accessLiveInvite(h: Hearth, key: string): InviteRecord {
  const invite = /^[a-z0-9]{1,64}$/.test(key) ? getInviteByKey(h.store, key) : undefined;
  if (!invite) throw new InviteLinkError("Whoops. We couldn't find your confirmation link in the system.", true);
  if (!linkWorks(h, invite, Date.now() / 1000)) throw new InviteLinkError("The confirmation link has expired or been deactivated.");
  if (getRealm(h.store)?.deactivated) throw new InviteLinkError("This organization has been deactivated.");
  return invite;
}

/** Whether joining with `invite` offers the default channel groups: not to a guest, whom the API shows none (Zulip's registration form). */
export function offersDefaultChannelGroups(invite: InviteRecord): boolean {
  return invite.invited_as !== Role.GUEST;
}

/** The spec's rule: only roles equal to or more restricted than the caller's (Zulip's words for owner and administrator). */
export function checkInviteRole(actor: UserRecord, role: number): void {
  if (!ROLES.includes(role)) throw badRequest("Invalid invite_as");
  if (role >= actor.role) return;
  if (role === Role.OWNER) throw mustBeOwner();
  if (role === Role.ADMINISTRATOR) throw mustBeAdmin();
  throw insufficientPermission();
}
