import type { Hearth } from "../context";
import { commit } from "../events/commit";
import { passwordLengthAllowed, SERVER_LIMITS } from "../store/realm_settings";
import { accessChannel } from "../access/channels";
import { accessUserGroupForUpdate, inRealmGroup } from "../access/groups";
import { badRequest, insufficientPermission, mustBeAdmin, mustBeOwner } from "../errors";
import { getInvite, putInvite } from "../store/invites";
import { getUser, getUserByEmail, Role, type UserRecord, isAdmin, isOwner } from "../store/users";
import { defaultChannelIds } from "../store/default_channels";
import { emailRefusalForRealm } from "../views/realm_domains";
import { notifyInvitesChanged } from "./invite_events";
import { channelsOfDefaultChannelGroups } from "../views/default_channel_groups";
import { accessLiveInvite, checkInviteRole, offersDefaultChannelGroups } from "../access/invites";
import { inviteLinkUrl } from "../views/invites";
import { checkEmailAddress, checkFullName, doCreateUser } from "./create_user";
import { afterEmailInviteAccepted, checkExpiryMinutes, checkWelcomeText, markEmailInviteAccepted, newInviteRecord, sendInviteWelcomeText } from "./email_invites";


export interface InviteLinkInput {
  invite_expires_in_minutes: number | null | undefined;
  invite_as: number;
  stream_ids: readonly number[];
  group_ids: readonly number[];
  include_realm_default_subscriptions: boolean;
  welcome_message_custom_text?: string | null;
}


/** Every check on a link's creator and contents: run before the commit, and again inside it on the creator as stored then. */
function checkInviteLink(h: Hearth, actor: UserRecord, input: InviteLinkInput): void {
  if (!actor.is_active || actor.is_bot || !inRealmGroup(h, actor, "create_multiuse_invite_group")) throw insufficientPermission();
  checkInviteRole(actor, input.invite_as);
  for (const id of input.stream_ids) {
    try {
      accessChannel(h, actor, id, { requireContentAccess: true });
    } catch {
      throw badRequest(`Invalid channel ID ${id}. No invites were sent.`);
    }
  }
  if (input.stream_ids.length > 0 && !inRealmGroup(h, actor, "can_add_subscribers_group")) {
    throw badRequest("You do not have permission to subscribe other users to channels.");
  }
  // Zulip's rule for POST /invites: the caller may add members to each group.
  for (const id of input.group_ids) {
    const group = accessUserGroupForUpdate(h, actor, id, "can_add_members_group");
    if (group.deactivated) throw badRequest("You can't add users to a deactivated user group.");
  }
}

/** The role an invitation link gives when it names none. */
export const DEFAULT_INVITE_AS = Role.MEMBER;

/** `POST /invites/multiuse`: a reusable invitation link; answers its URL. */
export async function checkCreateInviteLink(h: Hearth, actor: UserRecord, input: InviteLinkInput): Promise<string> {
  checkInviteLink(h, actor, input);
  const welcomeText = checkWelcomeText(actor, input.welcome_message_custom_text);
  const minutes = checkExpiryMinutes(input.invite_expires_in_minutes);
  const now = Math.floor(Date.now() / 1000);
  const invite = await commit(h, (tx) => {
    // A deactivation, demotion or permission change committed since the checks wins.
    checkInviteLink(h, getUser(h.store, actor.id) ?? { ...actor, is_active: false }, input);
    const record = newInviteRecord(h, actor.id, input, minutes, welcomeText, now);
    putInvite(h.store, record);
    notifyInvitesChanged(tx, h, actor.id);
    return record;
  });
  return inviteLinkUrl(h, invite);
}

/** `DELETE /invites/multiuse/{invite_id}`: its creator or an administrator (an owner for owner links). */
export async function checkRevokeInviteLink(h: Hearth, actor: UserRecord, inviteId: number): Promise<void> {
  const found = getInvite(h.store, inviteId);
  // Email invitations have their own endpoint (DELETE /invites/{id}).
  if (!found || found.email !== undefined) throw badRequest("No such invitation");
  if (found.invited_by_user_id !== actor.id) {
    if (found.invited_as === Role.OWNER && !isOwner(actor)) throw mustBeOwner();
    if (!isAdmin(actor)) throw mustBeAdmin();
  }
  await commit(h, (tx) => {
    const invite = getInvite(h.store, inviteId)!;
    if (invite.revoked) throw badRequest("Invitation has already been revoked");
    putInvite(h.store, { ...invite, revoked: true });
    notifyInvitesChanged(tx, h, found.invited_by_user_id);
  });
}

/**
 * Someone holding a live link creates their account: the link's role, its channels
 * (and the default channels when it says so). The link stays live for the next person.
 */
export async function checkJoinWithInvite(
  h: Hearth,
  key: string,
  input: { email: string; full_name: string; password: string; default_channel_groups?: readonly string[] },
): Promise<UserRecord> {
  const invite = accessLiveInvite(h, key);
  // An email invitation's address is the one it was sent to (accepting it proves it);
  // a link's holder gives theirs.
  const email = invite.email ?? checkEmailAddress(input.email);
  // Zulip's registration form's words.
  const refusal = invite.email === undefined ? emailRefusalForRealm(h, email) : null;
  if (refusal === "plus") throw badRequest("Email addresses containing + are not allowed in this organization.");
  if (refusal === "domain") throw badRequest(`Your email address, ${email}, is not in one of the domains that are allowed to register for accounts in this organization.`);
  if (getUserByEmail(h.store, email)) throw badRequest(`${email} already has an account.`);
  checkFullName(input.full_name);
  if (!passwordLengthAllowed(input.password)) {
    throw badRequest(`The password must be ${SERVER_LIMITS.password_min_length} to ${SERVER_LIMITS.password_max_length} characters long.`);
  }
  // The link's channels, the default channels when it says so, and those of the default
  // channel groups the person picked (Zulip's registration form offers them).
  const channelIds = [
    ...new Set([
      ...invite.stream_ids,
      ...(invite.include_realm_default_subscriptions ? defaultChannelIds(h.store) : []),
      ...(offersDefaultChannelGroups(invite) ? channelsOfDefaultChannelGroups(h, input.default_channel_groups ?? []) : []),
    ]),
  ];
  const user = await doCreateUser(h, {
    email,
    full_name: input.full_name,
    password: input.password,
    role: invite.invited_as,
    channel_ids: channelIds,
    group_ids: invite.group_ids,
    // Revoked (or, for an email invitation, accepted) while the password was hashed: no account.
    recheck: () => void accessLiveInvite(h, key),
    alsoInTransaction: invite.email === undefined ? undefined : (tx, created) => markEmailInviteAccepted(h, tx, invite, created),
  });
  if (invite.email !== undefined) await afterEmailInviteAccepted(h, invite, user);
  else await sendInviteWelcomeText(h, invite, user);
  return user;
}
