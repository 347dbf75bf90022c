/** Creating accounts (Zulip's zerver/actions/create_user.py): the checks of a name and an address, and the one transaction that makes an account. */
import type { Hearth } from "../context";
import { commit, type Transaction } from "../events/commit";
import { withUploadedAvatar } from "./avatars";
import type { UploadedAvatar } from "../store/avatars";
import { assertAdmin } from "../access/roles";
import { badRequest } from "../errors";
import { generateApiKey, hashPassword } from "../lib/credentials";
import { passwordLengthAllowed } from "../store/realm_settings";
import { getSystemBot } from "../store/system_bots";
import { notifyRealmBot, notifyRealmUser } from "./user_events";
import { EmailVisibility, getUserByEmail, putUser, Role, ROLES, type BotDefaults, type OutgoingWebhookService, type UserRecord } from "../store/users";
import { notifySystemGroupMembership } from "./user_groups";
import { joinGroupsInTransaction, notifyGroupsJoined } from "./user_group_members";
import { realmUserDefaults } from "../views/settings";
import { getRealm } from "../store/realm";
import { emailRefusalForRealm } from "../views/realm_domains";
import { sendSystemBotDm } from "./message_send";
import { notifyDefaultChannelsJoined, subscribeToDefaultChannelsInTransaction } from "./subscriptions";

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
  /** More writes in the creation transaction, after the account's (an email invitation marked accepted). */
  alsoInTransaction?: (tx: Transaction, user: UserRecord) => void;
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
      tx.afterCommit(() => notifyDefaultChannelsJoined(tx, h, record, defaultChannels));
      notifyGroupsJoined(tx, h, record, groups);
    }
    input.alsoInTransaction?.(tx, record);
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
