import type { Hearth } from "../context";
import type { UserJson } from "../schemas/register";
import { canSeeRealEmail } from "../access/users";
import { allUsers, EmailVisibility, isAdmin, isGuest, isOwner, userWriteVersion, type UserRecord } from "../store/users";
import { realmWriteVersion } from "../store/realm";
import { profileDataVersion } from "../store/profile_fields";
import { newestIdsVersion, newestMessageIdOf } from "../store/user_messages";
import { SerializedFields } from "../lib/serialized_fields";
import { boundedMemo } from "../lib/collections";
import { avatarUrl } from "./avatars";
import { profileDataView } from "./profile_fields";

/** Zulip's `user{id}@{realm_host}` address, shown when the real one is hidden. */
export function placeholderEmail(h: Hearth, userId: number): string {
  return `user${userId}@${h.realmHost()}`;
}

/** The API email: the real address only when everyone may see it. */
export function apiEmail(h: Hearth, target: UserRecord): string {
  return target.is_bot || target.email_address_visibility === EmailVisibility.EVERYONE
    ? target.email
    : placeholderEmail(h, target.id);
}

/**
 * ISO 8601 in Zulip's style (`+00:00`, not `Z`), remembered: every user object shows a
 * join date, and formatting showed in GET /users/me's profile (docs/benchmarks.md).
 */
export const isoTimestamp: (unixSeconds: number) => string = boundedMemo(10_000, (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString().replace("Z", "+00:00"));

export interface UserViewOptions {
  /** Accepted for the API's sake; Hearth never uses Gravatar, so it changes nothing. */
  clientGravatar: boolean;
  includeCustomProfileFields: boolean;
}

/** A user as the API shows it to `viewer` (the spec's User table). */
export function formatUser(
  h: Hearth,
  viewer: UserRecord | null,
  target: UserRecord,
  options: UserViewOptions,
): UserJson {
  const seesEmail = canSeeRealEmail(viewer, target);
  const user: Record<string, unknown> = {
    user_id: target.id,
    delivery_email: seesEmail ? target.email : null,
    email: apiEmail(h, target),
    full_name: target.full_name,
    date_joined: isoTimestamp(target.date_joined),
    is_active: target.is_active,
    is_owner: isOwner(target),
    is_admin: isAdmin(target),
    is_guest: isGuest(target),
    is_bot: target.is_bot,
    bot_type: target.bot_type,
    role: target.role,
    timezone: target.timezone,
    // Hearth serves every avatar itself (no Gravatar), so avatar_url is never null:
    // client_gravatar only permits, never requires, a null.
    avatar_url: avatarUrl(h, target),
    avatar_version: target.avatar_version,
    is_imported_stub: target.is_imported_stub,
  };
  if (target.is_bot) user.bot_owner_id = target.bot_owner_id;
  if (target.is_system_bot) user.is_system_bot = true;
  if (options.includeCustomProfileFields && !target.is_bot) user.profile_data = profileDataView(h, target.id);
  // Built field by field (some fields only for some users); the tests hold it to the schema.
  return user as UserJson;
}

/** `GET /users`: every account but the system bots, as `viewer` sees them. */
export function usersView(h: Hearth, viewer: UserRecord, options: UserViewOptions): Record<string, unknown>[] {
  const members: Record<string, unknown>[] = [];
  for (const u of allUsers(h.store)) if (!u.is_system_bot) members.push(formatUser(h, viewer, u, options));
  return members;
}

/**
 * GET /users/me's fields, serialized, per account while nothing they show was written
 * (the account or any user, the realm, profile values, the account's messages: each
 * kind's write version is part of the key). Clients call it at start and on every
 * reconnect; building and serializing it was most of the request's cost
 * (docs/benchmarks.md).
 */
interface OwnUserAnswer {
  users: number;
  realm: number;
  profileData: number;
  newestIds: number;
  realmUrl: string;
  fields: SerializedFields;
}
const ownUserAnswers = new WeakMap<Hearth, Map<number, OwnUserAnswer>>();

export function ownUserView(h: Hearth, user: UserRecord): SerializedFields {
  let answers = ownUserAnswers.get(h);
  if (!answers) ownUserAnswers.set(h, (answers = new Map()));
  // The key's parts compared one by one: joining them in a string cost more than the rest of the lookup.
  const users = userWriteVersion();
  const realm = realmWriteVersion();
  const profileData = profileDataVersion();
  const newestIds = newestIdsVersion();
  const realmUrl = h.realmUrl();
  const cached = answers.get(user.id);
  if (
    cached &&
    cached.users === users &&
    cached.realm === realm &&
    cached.profileData === profileData &&
    cached.newestIds === newestIds &&
    cached.realmUrl === realmUrl &&
    !h.store.inTransaction
  ) {
    return cached.fields;
  }
  const json = JSON.stringify({
    ...formatUser(h, user, user, { clientGravatar: false, includeCustomProfileFields: true }),
    max_message_id: newestMessageIdOf(h.store, user.id),
  });
  const fields = new SerializedFields(json.slice(1, -1));
  // One entry per account at most (the key moves with any write): bounded by the users.
  if (!h.store.inTransaction) answers.set(user.id, { users, realm, profileData, newestIds, realmUrl, fields });
  return fields;
}
