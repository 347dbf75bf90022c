/** Bots (Zulip's zerver/actions/bots.py and add_bot_backend / patch_bot_backend): creating, changing and re-keying them. */
import type { Hearth } from "../context";
import { commit, type Transaction } from "../events/commit";
import { notifyAvatarChange, readBotAvatarFiles, withUploadedAvatar } from "./avatars";
import { accessBot, accessManagedBot } from "../access/users";
import { badRequest, insufficientPermission } from "../errors";
import { notifyRealmBot, notifyRealmUser } from "./user_events";
import { notifyDeliveryEmailChanged } from "./account_emails";
import { type BotDefaults, BotType, getUser, getUserByEmail, isAdmin, type OutgoingWebhookService, putUser, Role, type UserRecord } from "../store/users";
import { botDefaultsView, botServicesView, botView } from "../views/bots";
import { accessChannelByName } from "../access/channels";
import { inRealmGroup } from "../access/groups";
import { checkFullName, doCreateUser } from "./create_user";
import { assertCanManage, checkRoleChange, doRegenerateApiKey, notifyAccountChanged } from "./users";
import { checkInterfaceType, checkPayloadUrl, newOutgoingWebhookService, ServiceInterface } from "./outgoing_webhook_services";

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
  const short = checkShortName(input.short_name);
  const email = botEmail(h, short);
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

function checkShortName(shortName: string): string {
  const short = shortName.trim().toLowerCase();
  if (!/^[a-z0-9._-]+$/.test(short)) throw badRequest("Bad name or username");
  return short;
}

/** Zulip's bot addresses: `<short name>-bot@<realm host>`. */
function botEmail(h: Hearth, short: string): string {
  return `${short}-bot@${h.realmHost()}`;
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
  /** FL 447: a new short name, hence a new address. */
  short_name?: string;
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
  const email = changes.short_name === undefined ? undefined : botEmail(h, checkShortName(changes.short_name));
  if (email !== undefined) checkBotEmailFree(h, bot, email);
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
    if (email !== undefined) checkBotEmailFree(h, current, email);
    let next: UserRecord = {
      ...current,
      ...(full_name !== undefined ? { full_name } : {}),
      ...(email !== undefined ? { email } : {}),
      ...(role !== undefined ? { role } : {}),
      ...(owner ? { bot_owner_id: owner.id } : {}),
      bot_defaults: mergeBotDefaults(current.bot_defaults, defaults),
      ...(service && current.bot_service ? { bot_service: { ...current.bot_service, ...service } } : {}),
    };
    if (avatar) next = withUploadedAvatar(h, next, avatar);
    putUser(h.store, next, current.email);
    notifyBotChanged(tx, h, current, next, { owner, service: service !== undefined });
    return next;
  });
}

/** The events of checkUpdateBot, in Zulip's order. */
function notifyBotChanged(tx: Transaction, h: Hearth, before: UserRecord, after: UserRecord, change: { owner?: UserRecord; service: boolean }): void {
  notifyAccountChanged(tx, h, before, after);
  // Zulip's do_change_user_delivery_email; since FL 474 no realm_bot update carries the address.
  if (after.email !== before.email) notifyDeliveryEmailChanged(tx, h, before, after);
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
  const previous = before.bot_owner_id === null ? undefined : getUser(h.store, before.bot_owner_id);
  if (previous && !isAdmin(previous)) tx.notify({ type: "realm_bot", op: "delete", bot: { user_id: after.id } }, [previous.id]);
  if (!isAdmin(owner)) tx.notify({ type: "realm_bot", op: "add", bot: botView(h, after) }, [owner.id]);
  // Since FL 474 bot objects carry no owner: the others (administrators) hear it from realm_user.
  notifyRealmUser(tx, h, "update", after, { bot_owner_id: owner.id });
}

/** Zulip's words when another account holds the address a new short name gives. */
function checkBotEmailFree(h: Hearth, bot: UserRecord, email: string): void {
  const holder = getUserByEmail(h.store, email);
  if (holder && holder.id !== bot.id) throw badRequest("Username already in use");
}

/** A new key for a bot its owner or an administrator manages. */
export async function checkRegenerateBotApiKey(h: Hearth, actor: UserRecord, botId: number): Promise<string> {
  return doRegenerateApiKey(h, actor, accessManagedBot(h, actor, botId).id);
}
