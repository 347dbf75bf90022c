/** Invitation links as GET /invites and the join form show them. */
import type { Hearth } from "../context";
import { linkWorks } from "../access/invites";
import { allInvites, type InviteRecord } from "../store/invites";
import { isAdmin, isOwner, Role, type UserRecord } from "../store/users";

export function inviteLinkUrl(h: Hearth, invite: InviteRecord): string {
  return `${h.realmUrl()}/join/${invite.key}/`;
}

/** GET /invites' view of a link (Zulip's Invite object). */
function inviteView(h: Hearth, invite: InviteRecord) {
  return {
    id: invite.id,
    invited_by_user_id: invite.invited_by_user_id,
    invited: invite.invited,
    expiry_date: invite.expiry_date,
    invited_as: invite.invited_as,
    is_multiuse: true,
    link_url: inviteLinkUrl(h, invite),
  };
}

/**
 * `GET /invites`: the live links the caller may manage. Administrators manage every
 * link but those to the owner role, which only owners see; others their own.
 */
export function invitesFor(h: Hearth, viewer: UserRecord) {
  const now = Date.now() / 1000;
  return allInvites(h.store)
    .filter((invite) => linkWorks(h, invite, now))
    .filter((invite) => (isAdmin(viewer) ? invite.invited_as !== Role.OWNER || isOwner(viewer) : invite.invited_by_user_id === viewer.id))
    .map((invite) => inviteView(h, invite));
}
