/** Invitation links and email invitations as GET /invites and the join form show them. */
import type { Hearth } from "../context";
import { linkWorks } from "../access/invites";
import { allInvites, type InviteRecord } from "../store/invites";
import { getOutboxEmail } from "../store/outbox";
import { isAdmin, isOwner, Role, type UserRecord } from "../store/users";

export function inviteLinkUrl(h: Hearth, invite: InviteRecord): string {
  return `${h.realmUrl()}/join/${invite.key}/`;
}

/** Where an email invitation leads: its accept page (the join page's email form). */
export function acceptLinkUrl(h: Hearth, invite: InviteRecord): string {
  return `${h.realmUrl()}/accept/${invite.key}/`;
}

/**
 * What became of an email invitation's email: never sent (no SMTP server when it was
 * made), waiting in the outbox, given up on, or accepted by the SMTP server (its row
 * is gone once accepted).
 */
export function invitationEmailStatus(h: Hearth, invite: InviteRecord): "not_sent" | "queued" | "failed" | "sent" {
  if (invite.email_id === null || invite.email_id === undefined) return "not_sent";
  const row = getOutboxEmail(h.store, invite.email_id);
  if (!row) return "sent";
  return row.failed ? "failed" : "queued";
}

/** The fields every entry of GET /invites has, link or email invitation. */
function inviteBase(invite: InviteRecord) {
  return {
    id: invite.id,
    invited_by_user_id: invite.invited_by_user_id,
    invited: invite.invited,
    expiry_date: invite.expiry_date,
    invited_as: invite.invited_as,
  };
}

/**
 * GET /invites' view of an email invitation: Zulip's fields, plus Hearth's `emailed`
 * and `email_status`; administrators also get its `link_url` when no email carries it
 * (no SMTP server, or given up on), to pass it on themselves (the admin page's "copy link").
 */
function emailInviteView(h: Hearth, invite: InviteRecord, viewer: UserRecord) {
  const status = invitationEmailStatus(h, invite);
  return {
    ...inviteBase(invite),
    email: invite.email!,
    notify_referrer_on_join: invite.notify_referrer_on_join ?? true,
    is_multiuse: false,
    emailed: status === "sent",
    email_status: status,
    ...(isAdmin(viewer) && (status === "not_sent" || status === "failed") ? { link_url: acceptLinkUrl(h, invite) } : {}),
  };
}

/** GET /invites' view of a link (Zulip's Invite object). */
function inviteView(h: Hearth, invite: InviteRecord, viewer: UserRecord) {
  if (invite.email !== undefined) return emailInviteView(h, invite, viewer);
  return {
    ...inviteBase(invite),
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
    .map((invite) => inviteView(h, invite, viewer));
}
