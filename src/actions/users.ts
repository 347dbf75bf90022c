import type { Hearth } from "../context";
import { commit, type Transaction } from "../events/commit";
import { notifyAvatarChange, readBotAvatarFiles, withUploadedAvatar } from "./avatars";
import type { UploadedAvatar } from "../store/avatars";
import { assertAdmin } from "../access/roles";
import { accessBot, accessManagedBot, accessUser } from "../access/users";
import { checkProfileData, doSetProfileData, notifyProfileData, writeProfileData } from "./profile_fields";
import { badRequest, insufficientPermission, mustBeAdmin, mustBeOwner } from "../errors";
import { generateApiKey, hashPassword } from "../lib/credentials";
import { passwordLengthAllowed } from "../store/realm_settings";
import { revokeInvitesCreatedBy } from "../store/invites";
import { getSystemBot } from "../store/system_bots";
import { sendSystemBotDm } from "./messages";
import { notifyInvitesChanged } from "./invite_events";
import { adminIds, notifyFullNameChanged, notifyRealmBot, notifyRealmUser } from "./user_events";
import { activeUserIds, activeUserIdsOf, allUsers, BotType, EmailVisibility, getUser, getUserByEmail, putUser, Role, ROLES, type BotDefaults, type OutgoingWebhookService, type UserRecord } from "../store/users";
import { checkInterfaceType, checkPayloadUrl, newOutgoingWebhookService, ServiceInterface } from "./outgoing_webhooks";
import { botDefaultsView, botServicesView, botView } from "../views/bots";
import { getChannel } from "../store/channels";
import { accessChannelByName } from "../access/channels";
import { joinGroupsInTransaction, notifyGroupsJoined, notifySystemGroupMembership } from "./user_groups";
import { inRealmGroup } from "../access/groups";
import {
  notifyDefaultChannelsJoined,
  notifySubscriberActivityChanged,
  notifyUserChannelAccessChanged,
  subscribeToDefaultChannelsInTransaction,
} from "./channels";
import { formatUser, isoTimestamp } from "../views/users";
import { canSeeRealEmail, visibleUserByEmail } from "../access/users";
import { isAdmin, isOwner } from "../store/users";
import { realmUserDefaults } from "../views/settings";
import { getRealm } from "../store/realm";
import { emailRefusalForRealm } from "../views/realm_domains";
import { avatarUrl } from "../views/avatars";

export const MAX_NAME_LENGTH = 100;
const NAME_FORBIDDEN = /[*`\\>"@]/;

export function checkFullName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0) throw badRequest("Name too short!");
  if (trimmed.length > MAX_NAME_LENGTH) throw badRequest("Name too long!");
  if (NAME_FORBIDDEN.test(trimmed) || /[\u0000-\u001f]/.test(trimmed)) throw badRequest("Invalid characters in name!");
  return trimmed;
}

export function checkEmailAddress(email: string): string {
  const trimmed = email.trim();
  if (!/^[^\s@<>(),;:"\[\]\\]+@[^\s@<>(),;:"\[\]\\]+\.[^\s@<>(),;:"\[\]\\]+$|^[^\s@]+@localhost$/i.test(trimmed) || trimmed.length > 254) {
    throw badRequest(`Invalid email '${email}'`);
  }
  return trimmed;
}

function countActiveOwners(h: Hearth): number {
  let n = 0;
  for (const u of allUsers(h.store)) if (u.is_active && !u.is_bot && isOwner(u)) n++;
  return n;
}

export interface NewUser {
  email: string;
  full_name: string;
  password: string | null;
  role?: number;
  bot_type?: number | null;
  bot_owner_id?: number | null;
  is_system_bot?: boolean;
  /** Users created by an administrator or the CLI get their date_joined at first login. */
  pending_first_login?: boolean;
  bot_defaults?: BotDefaults;
  bot_service?: OutgoingWebhookService;
  /** The channels a new human account joins; default: the organization's default channels. */
  channel_ids?: readonly number[];
  /** User-defined groups a new human account joins (an invitation link's `group_ids`). */
  group_ids?: readonly number[];
  /** Checked again inside the creation transaction (an invitation link still live). */
  recheck?: () => void;
  /** An uploaded avatar, already checked (readBotAvatarFiles): a bot's, from POST /bots. */
  avatar?: UploadedAvatar;
}

/** The settings a new account starts with: Zulip's defaults overridden by the organization's. */
function newUserSettings(realmSettings: Record<string, unknown> | undefined): Pick<UserRecord, "settings" | "email_address_visibility"> {
  const { email_address_visibility, ...settings } = realmUserDefaults(realmSettings);
  return { settings, email_address_visibility: (email_address_visibility as number | undefined) ?? EmailVisibility.EVERYONE };
}

/** Builds and stores a new account in one transaction; returns it after it is durable. */
export async function doCreateUser(h: Hearth, input: NewUser): Promise<UserRecord> {
  const email = checkEmailAddress(input.email);
  const full_name = checkFullName(input.full_name);
  const role = input.role ?? Role.MEMBER;
  if (!ROLES.includes(role)) throw badRequest("Invalid role");
  const password_hash = input.password === null ? null : await hashPassword(input.password);
  const isBot = input.bot_type !== undefined && input.bot_type !== null;
  const user = await commit(h, (tx) => {
    if (getUserByEmail(h.store, email)) throw badRequest(`Email '${email}' already in use`);
    input.recheck?.();
    let record: UserRecord = {
      id: h.store.nextId("user"),
      email,
      full_name,
      role,
      is_active: true,
      is_bot: isBot,
      bot_type: isBot ? input.bot_type! : null,
      bot_owner_id: isBot ? (input.bot_owner_id ?? null) : null,
      is_system_bot: input.is_system_bot ?? false,
      password_hash,
      api_key: generateApiKey(),
      timezone: "",
      date_joined: Date.now() / 1000,
      joined_pending_first_login: input.pending_first_login ?? false,
      avatar_source: "G",
      avatar_version: 1,
      is_imported_stub: false,
      // New accounts start from the organization's defaults (PATCH /realm/user_settings_defaults).
      ...newUserSettings(getRealm(h.store)?.settings),
      ...(isBot && input.bot_defaults ? { bot_defaults: input.bot_defaults } : {}),
      ...(isBot && input.bot_service ? { bot_service: input.bot_service } : {}),
    };
    if (input.avatar) record = withUploadedAvatar(h, record, input.avatar);
    putUser(h.store, record);
    const defaultChannels = subscribeToDefaultChannelsInTransaction(h, record, input.channel_ids);
    const groups = isBot ? [] : joinGroupsInTransaction(h, record, input.group_ids ?? []);
    if (!record.is_system_bot) {
      notifyRealmUser(tx, h, "add", record);
      if (record.is_bot) notifyRealmBot(tx, h, "add", record);
      notifySystemGroupMembership(tx, h, null, record);
      tx.afterCommit(() => notifyDefaultChannelsJoined(h, record, defaultChannels));
      notifyGroupsJoined(tx, h, record, groups);
    }
    return record;
  });
  if (!user.is_bot && !user.is_system_bot) await sendWelcomeDm(h, user);
  return user;
}

/**
 * Like Zulip's send_initial_direct_message: every new human account finds a direct
 * message from Welcome Bot (the conversation the `narrow_to_dm_with_welcome_bot_new_user`
 * onboarding step opens). Best effort, after the account is durable.
 */
async function sendWelcomeDm(h: Hearth, user: UserRecord): Promise<void> {
  const bot = getSystemBot(h.store, "welcome");
  if (!bot) return;
  const realmName = getRealm(h.store)?.name ?? "your organization";
  const content = [
    `Hello, and welcome to **${realmName}**! :wave:`,
    "",
    "I'm Welcome Bot. A few things to know as you start:",
    "* Conversations happen in **channels**, and every message has a **topic**, so several conversations can go on side by side without mixing.",
    "* Browse the channels to join the ones that interest you, and mute the ones you don't need.",
    "* Direct messages, like this one, are for conversations with one person or a small group.",
    "",
    "Try the message box by replying here: nobody else reads this conversation.",
  ].join("\n");
  await sendSystemBotDm(h, bot, user.id, content, "a welcome message");
}

/** `POST /users`: administrators create accounts. */
export async function checkCreateUser(h: Hearth, actor: UserRecord, input: { email: string; full_name: string; password: string }) {
  assertAdmin(actor);
  // Zulip's create_user_backend's words for email_allowed_for_realm's refusals.
  const email = checkEmailAddress(input.email);
  const refusal = emailRefusalForRealm(h, email);
  if (refusal === "plus") throw badRequest("Email addresses containing + are not allowed.");
  if (refusal === "domain") throw badRequest(`Email '${email}' not allowed in this organization`);
  // Zulip's create_user_backend order: the address in use, then the password's strength (here, its length limits).
  if (getUserByEmail(h.store, email)) throw badRequest(`Email '${email}' already in use`);
  checkFullName(input.full_name);
  if (!passwordLengthAllowed(input.password)) throw badRequest("The password is too weak.");
  return doCreateUser(h, { ...input, pending_first_login: true });
}

export const BOT_TYPES_SUPPORTED: readonly number[] = [BotType.GENERIC, BotType.INCOMING_WEBHOOK, BotType.OUTGOING_WEBHOOK];

/** A bot's defaults as clients send them: channel names ("" for none), checked against the caller's access. */
export interface BotDefaultsInput {
  default_sending_stream?: string;
  default_events_register_stream?: string;
  default_all_public_streams?: boolean;
}

/** The defaults asked for, channel names turned into IDs (undefined: leave as is; null: none). */
interface BotDefaultsChange {
  sending_channel_id?: number | null;
  events_register_channel_id?: number | null;
  all_public_streams?: boolean;
}

function checkBotDefaults(h: Hearth, actor: UserRecord, input: BotDefaultsInput): BotDefaultsChange {
  // Zulip's access_stream_by_name for the caller: a channel they cannot read is an invalid name.
  const channelId = (name: string | undefined) =>
    name === undefined ? undefined : name === "" ? null : accessChannelByName(h, actor, name, { requireContentAccess: true }).id;
  return {
    sending_channel_id: channelId(input.default_sending_stream),
    events_register_channel_id: channelId(input.default_events_register_stream),
    all_public_streams: input.default_all_public_streams,
  };
}

function mergeBotDefaults(current: BotDefaults | undefined, change: BotDefaultsChange): BotDefaults {
  return {
    sending_channel_id: change.sending_channel_id !== undefined ? change.sending_channel_id : (current?.sending_channel_id ?? null),
    events_register_channel_id: change.events_register_channel_id !== undefined ? change.events_register_channel_id : (current?.events_register_channel_id ?? null),
    all_public_streams: change.all_public_streams ?? current?.all_public_streams ?? false,
  };
}

export async function checkCreateBot(
  h: Hearth,
  owner: UserRecord,
  input: { full_name: string; short_name: string; bot_type: number; avatarFiles?: readonly File[]; service?: OutgoingWebhookInput } & BotDefaultsInput,
): Promise<UserRecord> {
  if (owner.is_bot) throw badRequest("Bots cannot create bots");
  if (!BOT_TYPES_SUPPORTED.includes(input.bot_type)) throw badRequest("Invalid bot type");
  // Zulip's check_bot_creation_policy: can_create_bots_group for any bot, and
  // can_create_write_only_bots_group for incoming webhooks too.
  const mayCreate =
    inRealmGroup(h, owner, "can_create_bots_group") ||
    (input.bot_type === BotType.INCOMING_WEBHOOK && inRealmGroup(h, owner, "can_create_write_only_bots_group"));
  if (!mayCreate) throw insufficientPermission();
  const short = input.short_name.trim().toLowerCase();
  if (!/^[a-z0-9._-]+$/.test(short)) throw badRequest("Bad name or username");
  const email = `${short}-bot@${h.realmHost()}`;
  const bot_defaults = mergeBotDefaults(undefined, checkBotDefaults(h, owner, input));
  // Zulip's add_bot_backend: an outgoing-webhook bot gets its service, named after the bot unless named.
  const bot_service =
    input.bot_type === BotType.OUTGOING_WEBHOOK
      ? newOutgoingWebhookService(input.service?.service_name || short, input.service?.payload_url ?? "", input.service?.interface_type ?? ServiceInterface.GENERIC)
      : undefined;
  // Read once the caller is known to be allowed: a refused request does not get its file looked at.
  const avatar = await readBotAvatarFiles(input.avatarFiles ?? []);
  return doCreateUser(h, {
    email,
    full_name: input.full_name,
    password: null,
    role: Role.MEMBER,
    bot_type: input.bot_type,
    bot_owner_id: owner.id,
    bot_defaults,
    bot_service,
    avatar,
  });
}

/** Who may change or deactivate `target`: administrators, and a bot's owner. */
function assertCanManage(actor: UserRecord, target: UserRecord): void {
  if (isAdmin(actor) && !actor.is_bot) return;
  if (target.is_bot && target.bot_owner_id === actor.id) return;
  throw insufficientPermission();
}

/** Zulip's rules for changing `target`'s role (the only-owner rule is checked in the commit). */
function checkRoleChange(actor: UserRecord, target: UserRecord, role: number): void {
  if (!ROLES.includes(role)) throw badRequest("Invalid role");
  if (!isAdmin(actor)) throw mustBeAdmin();
  if ((role === Role.OWNER || isOwner(target)) && !isOwner(actor)) throw mustBeOwner();
  if (target.is_bot && role === Role.OWNER) throw badRequest("Bots cannot be organization owners");
}

/** The events of a changed name or role (and, for a human, of gaining or losing the admin role). */
function notifyAccountChanged(tx: Transaction, h: Hearth, before: UserRecord, after: UserRecord): void {
  if (after.full_name !== before.full_name) notifyFullNameChanged(tx, h, after);
  if (after.role !== before.role) {
    notifyRealmUser(tx, h, "update", after, { role: after.role });
    notifySystemGroupMembership(tx, h, before, after);
    tx.afterCommit(() => notifyUserChannelAccessChanged(h, before, after));
  }
  if (!after.is_bot && isAdmin(after) !== isAdmin(before)) notifyBotListChanged(tx, h, after, isAdmin(after));
}

export async function checkUpdateUser(
  h: Hearth,
  actor: UserRecord,
  userId: number,
  changes: { full_name?: string; role?: number },
  alsoInCommit: (tx: Transaction) => void = () => {},
): Promise<void> {
  const target = accessUser(h, userId, { allowDeactivated: true });
  assertCanManage(actor, target);
  const full_name = changes.full_name === undefined ? undefined : checkFullName(changes.full_name);
  const role = changes.role;
  if (role !== undefined) checkRoleChange(actor, target, role);
  await commit(h, (tx) => {
    const current = getUser(h.store, userId)!;
    if (role !== undefined && isOwner(current) && role !== Role.OWNER && current.is_active && countActiveOwners(h) <= 1) {
      throw badRequest("The owner permission cannot be removed from the only organization owner.");
    }
    const next = { ...current, ...(full_name !== undefined ? { full_name } : {}), ...(role !== undefined ? { role } : {}) };
    putUser(h.store, next);
    notifyAccountChanged(tx, h, current, next);
    alsoInCommit(tx);
  });
}

/**
 * Administrators see every bot in realm_bots, others only their own: a user who
 * gains or loses the role gets the other owners' bots added or deleted.
 */
function notifyBotListChanged(tx: Transaction, h: Hearth, user: UserRecord, nowAdmin: boolean): void {
  for (const bot of allUsers(h.store)) {
    if (!bot.is_bot || bot.is_system_bot || bot.bot_owner_id === user.id) continue;
    const event = nowAdmin ? { type: "realm_bot", op: "add", bot: botView(h, bot) } : { type: "realm_bot", op: "delete", bot: { user_id: bot.id } };
    tx.notify(event, [user.id]);
  }
}

export async function doSetActive(h: Hearth, actor: UserRecord, userId: number, active: boolean): Promise<void> {
  const target = accessUser(h, userId, { allowDeactivated: true });
  // Anyone may deactivate their own account (DELETE /users/me).
  if (!(actor.id === target.id && !active)) assertCanManage(actor, target);
  const alreadyThere = () => badRequest(active ? "User is already active" : "User is already deactivated");
  if (target.is_active === active) throw alreadyThere();
  const changed = await commit(h, (tx) => {
    const current = getUser(h.store, userId)!;
    // Checked again here: a concurrent request may have made this change already.
    if (current.is_active === active) throw alreadyThere();
    if (!active && isOwner(current) && !current.is_bot && countActiveOwners(h) <= 1) {
      throw badRequest("Cannot deactivate the only organization owner");
    }
    const updates: UserRecord[] = [{ ...current, is_active: active }];
    if (!active && !current.is_bot) {
      // Zulip deactivates a user's bots with the user.
      for (const u of allUsers(h.store)) if (u.is_bot && u.is_active && u.bot_owner_id === current.id) updates.push({ ...u, is_active: false });
    }
    for (const u of updates) putUser(h.store, u);
    // Zulip revokes the invitations a deactivated user made; reactivation does not restore them.
    const revokedInvites = active ? 0 : revokeInvitesCreatedBy(h.store, current.id);
    if (revokedInvites > 0) notifyInvitesChanged(tx, h, userId);
    for (const u of updates) {
      notifyRealmUser(tx, h, "update", u, { is_active: active });
      // Zulip keeps deactivated bots in realm_bots (with is_active) and updates them in place.
      if (u.is_bot) notifyRealmBot(tx, h, "update", u, { is_active: active });
      notifySystemGroupMembership(tx, h, { ...u, is_active: !active }, u);
      tx.afterCommit(() => notifySubscriberActivityChanged(h, u, active));
    }
    return updates;
  });
  // A deactivated account can no longer poll: free its queues now rather than at idle expiry.
  if (!active) for (const u of changed) for (const queue of h.queues.queuesOf(u.id)) h.queues.remove(queue);
}

/** Who may own a bot: an active human of the organization (Zulip's wording for each refusal). */
function checkNewBotOwner(h: Hearth, ownerId: number): UserRecord {
  const owner = getUser(h.store, ownerId);
  if (!owner || owner.is_system_bot) throw badRequest("Failed to change owner, no such user");
  if (!owner.is_active) throw badRequest("Failed to change owner, user is deactivated");
  if (owner.is_bot) throw badRequest("Failed to change owner, bots can't own other bots");
  return owner;
}

export interface BotChanges extends BotDefaultsInput {
  full_name?: string;
  role?: number;
  bot_owner_id?: number;
  /** The request's files: one is the new avatar (readBotAvatarFiles), read once the caller may change the bot. */
  avatarFiles?: readonly File[];
  /** An outgoing-webhook bot's new URL and its interface (Zulip: both, or the interface defaults to 1). */
  service_payload_url?: string;
  service_interface?: number;
}

/** POST /bots parameters of an outgoing-webhook bot. */
export interface OutgoingWebhookInput {
  payload_url?: string;
  interface_type?: number;
  service_name?: string;
}

/**
 * PATCH /bots/{bot_id} (Zulip's patch_bot_backend): the bot's owner or an administrator
 * changes its name, role, defaults or owner. Everything is checked first and written in
 * one commit, so a refused part leaves the bot as it was. The events are Zulip's:
 * - defaults: one realm_bot update per setting that changed, to the owner and administrators;
 * - owner (do_change_bot_owner): the previous owner's realm_bots lose the bot, the new
 *   owner's gain it (administrators, who see every bot, get an update instead), and
 *   everyone's realm_users get the new `bot_owner_id`.
 */
export async function checkUpdateBot(h: Hearth, actor: UserRecord, botId: number, changes: BotChanges): Promise<UserRecord> {
  const bot = accessBot(h, botId, { allowDeactivated: true });
  assertCanManage(actor, bot);
  const full_name = changes.full_name === undefined ? undefined : checkFullName(changes.full_name);
  const role = changes.role !== undefined && changes.role !== bot.role ? changes.role : undefined;
  if (role !== undefined) checkRoleChange(actor, bot, role);
  const owner = changes.bot_owner_id === undefined ? undefined : checkNewBotOwner(h, changes.bot_owner_id);
  const defaults = checkBotDefaults(h, actor, changes);
  const service = checkServiceChange(bot, changes);
  const avatar = await readBotAvatarFiles(changes.avatarFiles ?? []);
  return commit(h, (tx) => {
    const current = getUser(h.store, botId)!;
    // The new owner may have been deactivated since the check.
    if (owner) checkNewBotOwner(h, owner.id);
    let next: UserRecord = {
      ...current,
      ...(full_name !== undefined ? { full_name } : {}),
      ...(role !== undefined ? { role } : {}),
      ...(owner ? { bot_owner_id: owner.id } : {}),
      bot_defaults: mergeBotDefaults(current.bot_defaults, defaults),
      ...(service && current.bot_service ? { bot_service: { ...current.bot_service, ...service } } : {}),
    };
    if (avatar) next = withUploadedAvatar(h, next, avatar);
    putUser(h.store, next);
    notifyBotChanged(tx, h, current, next, { owner, service: service !== undefined });
    return next;
  });
}

/** The events of checkUpdateBot, in Zulip's order. */
function notifyBotChanged(tx: Transaction, h: Hearth, before: UserRecord, after: UserRecord, change: { owner?: UserRecord; service: boolean }): void {
  notifyAccountChanged(tx, h, before, after);
  if (after.avatar_version !== before.avatar_version) notifyAvatarChange(tx, h, after);
  const was = botDefaultsView(h, before);
  const now = botDefaultsView(h, after);
  for (const key of Object.keys(now) as (keyof typeof now)[]) {
    if (was[key] !== now[key]) notifyRealmBot(tx, h, "update", after, { [key]: now[key] });
  }
  if (change.owner && before.bot_owner_id !== change.owner.id) notifyBotOwnerChanged(tx, h, before, after, change.owner);
  // Zulip's do_update_outgoing_webhook_service announces the service even when unchanged.
  if (change.service) notifyRealmBot(tx, h, "update", after, { services: botServicesView(after) });
}

/**
 * Zulip's patch_bot_backend: a new `service_payload_url` changes an outgoing-webhook
 * bot's service, with `service_interface` (default 1) beside it; without one the
 * service stays as it is.
 */
function checkServiceChange(bot: UserRecord, changes: BotChanges): Pick<OutgoingWebhookService, "base_url" | "interface"> | undefined {
  if (changes.service_payload_url === undefined) return undefined;
  if (bot.bot_type !== BotType.OUTGOING_WEBHOOK || !bot.bot_service) throw badRequest("This bot has no outgoing webhook service.");
  return {
    base_url: checkPayloadUrl(changes.service_payload_url, "service_payload_url"),
    interface: checkInterfaceType(changes.service_interface ?? ServiceInterface.GENERIC),
  };
}

function notifyBotOwnerChanged(tx: Transaction, h: Hearth, before: UserRecord, after: UserRecord, owner: UserRecord): void {
  const updated = new Set(adminIds(h));
  const previous = before.bot_owner_id === null ? undefined : getUser(h.store, before.bot_owner_id);
  if (previous && !isAdmin(previous)) {
    tx.notify({ type: "realm_bot", op: "delete", bot: { user_id: after.id } }, [previous.id]);
    updated.delete(previous.id);
  }
  if (!isAdmin(owner)) {
    tx.notify({ type: "realm_bot", op: "add", bot: botView(h, after) }, [owner.id]);
    updated.delete(owner.id);
  }
  tx.notify({ type: "realm_bot", op: "update", bot: { user_id: after.id, owner_id: owner.id } }, updated);
  notifyRealmUser(tx, h, "update", after, { bot_owner_id: owner.id });
}

/** A new key for a bot its owner or an administrator manages. */
export async function checkRegenerateBotApiKey(h: Hearth, actor: UserRecord, botId: number): Promise<string> {
  return doRegenerateApiKey(h, actor, accessManagedBot(h, actor, botId).id);
}

export async function doRegenerateApiKey(h: Hearth, user: UserRecord, targetId = user.id): Promise<string> {
  const key = generateApiKey();
  await commit(h, (tx) => {
    const current = getUser(h.store, targetId)!;
    const next = { ...current, api_key: key };
    putUser(h.store, next);
    if (next.is_bot) notifyRealmBot(tx, h, "update", next, { api_key: key });
  });
  return key;
}

/** FL 475: an API- or CLI-created user's date_joined becomes the first-login time. */
export async function doRecordFirstLogin(h: Hearth, user: UserRecord): Promise<void> {
  if (!user.joined_pending_first_login) return;
  await commit(h, (tx) => {
    const current = getUser(h.store, user.id)!;
    if (!current.joined_pending_first_login) return;
    const next = { ...current, joined_pending_first_login: false, date_joined: Date.now() / 1000 };
    putUser(h.store, next);
    notifyRealmUser(tx, h, "update", next, { date_joined: isoTimestamp(next.date_joined) });
  });
}

/** `DELETE /users/{id}` and `POST /users/{id}/reactivate`: administrators only (bots go through /bots). */
export async function checkSetUserActive(h: Hearth, actor: UserRecord, userId: number, active: boolean): Promise<void> {
  // As Zulip's deactivate_user_backend: bots are deactivated through /bots, and only an owner deactivates an owner.
  const target = accessUser(h, userId, { allowDeactivated: true, allowBots: active });
  assertAdmin(actor);
  if (!active && isOwner(target) && !isOwner(actor)) throw mustBeOwner();
  await doSetActive(h, actor, userId, active);
}

/**
 * `PATCH /users/{id}` (administrators): name, role and profile values. Everything is
 * checked before anything is written, so a bad profile value leaves the name as it was.
 */
export async function checkAdminUpdateUser(
  h: Hearth,
  actor: UserRecord,
  userId: number,
  changes: { full_name?: string; role?: number; profile_data?: { id: number; value: unknown }[] },
): Promise<void> {
  const { profile_data, ...account } = changes;
  if (account.full_name === undefined && account.role === undefined && profile_data === undefined) throw badRequest("No changes were requested");
  const target = accessUser(h, userId, { allowDeactivated: true });
  if (profile_data !== undefined) assertAdmin(actor);
  const profileChanges = profile_data === undefined ? [] : checkProfileData(h, actor, target, profile_data);
  // One commit for all of it: a refused part leaves the account as it was.
  if (account.full_name !== undefined || account.role !== undefined) {
    await checkUpdateUser(h, actor, target.id, account, (tx) => {
      writeProfileData(h, target, profileChanges);
      notifyProfileData(tx, h, target, profileChanges);
    });
  } else if (profileChanges.length > 0) {
    await doSetProfileData(h, target, profileChanges);
  }
}
