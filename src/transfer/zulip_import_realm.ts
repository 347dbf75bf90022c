import type { Store } from "../store/db";
import { putRealm, REALM_ID, type Realm } from "../store/realm";
import { ensureAvatarSalt } from "../store/avatars";
import { SYSTEM_BOTS } from "../store/system_bots";
import { BotType, EmailVisibility, newUserRecord, putUser, Role, ROLES } from "../store/users";
import { putChannel, type ChannelRecord } from "../store/channels";
import { putSubscription } from "../store/subscriptions";
import { addStoredGroupMember, putUserGroup, USER_GROUP_SETTINGS, type GroupSettingValue, type UserGroupSettingName } from "../store/user_groups";
import { SYSTEM_GROUP_IDS } from "../store/realm_settings";
import { putProfileField, putProfileValue, ProfileFieldType } from "../store/profile_fields";
import { putRealmDomain } from "../store/realm_domains";
import { setDefaultChannel } from "../store/default_channels";
import { putUserTopic } from "../store/user_topics";
import { putAlertWords, putMutedUser } from "../store/personal";
import { CHANNEL_GROUP_SETTINGS, type ChannelGroupSettingName } from "../schemas/channels";
import { renderDescription } from "../markdown/description";
import { createMissingSystemGroups } from "../actions/user_groups";
import { RecipientType, REALM_GROUP_SETTINGS, TransferError } from "./zulip_format";

/**
 * The organization's tables of a Zulip export (realm.json) written into a new Hearth
 * store, in one transaction. Zulip's IDs are mapped to new Hearth IDs (`IdMaps`),
 * which the message pass then uses. Passwords do not travel in an export: every
 * account gets a new API key and no password (an owner sets them, README).
 */

type Row = Record<string, any>;

export interface IdMaps {
  users: Map<number, number>;
  channels: Map<number, number>;
  /** Zulip recipient ID → what it addresses. */
  recipients: Map<number, { type: number; typeId: number }>;
  /** Zulip group-DM (huddle) ID → the Hearth user IDs in it. */
  huddleMembers: Map<number, number[]>;
  /** Zulip realm emoji ID (a reaction's emoji_code) → the Hearth one. */
  emoji: Map<number, number>;
  /** The organization's accounts imported (Zulip's system bots, mapped onto Hearth's, not counted). */
  userCount: number;
}

const rows = (data: Row, key: string): Row[] => (Array.isArray(data[key]) ? data[key] : []);

export function importRealmTables(store: Store, data: Row): IdMaps {
  const realmRow = rows(data, "zerver_realm")[0];
  if (!realmRow) throw new TransferError("realm.json has no zerver_realm row.");
  const maps: IdMaps = { users: new Map(), channels: new Map(), recipients: new Map(), huddleMembers: new Map(), emoji: new Map(), userCount: 0 };
  const realm: Realm = {
    id: REALM_ID,
    name: String(realmRow.name || realmRow.string_id || "Imported organization").slice(0, 40),
    description: typeof realmRow.description === "string" ? realmRow.description : "",
    date_created: Math.floor(Number(realmRow.date_created) || Date.now() / 1000),
    deactivated: false,
    external_url: null,
    settings: {},
  };
  putRealm(store, realm);
  ensureAvatarSalt(store);
  createMissingSystemGroups(store);
  const systemBotIds = new Map<string, number>();
  for (const bot of SYSTEM_BOTS) {
    const id = store.nextId("user");
    putUser(store, newUserRecord(id, { email: bot.email, full_name: bot.full_name, is_bot: true, bot_type: BotType.GENERIC, is_system_bot: true }));
    systemBotIds.set(bot.email, id);
  }
  for (const bot of rows(data, "zerver_userprofile_crossrealm")) {
    const id = systemBotIds.get(String(bot.email).toLowerCase());
    if (id !== undefined) maps.users.set(bot.id, id);
  }

  // Users (mirror dummies are the accounts an export keeps without their consent or a login).
  const users = [...rows(data, "zerver_userprofile"), ...rows(data, "zerver_userprofile_mirrordummy")].sort((a, b) => a.id - b.id);
  maps.userCount = users.length;
  const seenEmails = new Set<string>();
  for (const u of users) {
    const email = String(u.delivery_email ?? u.email ?? "").trim();
    if (!email.includes("@") || seenEmails.has(email.toLowerCase())) throw new TransferError(`User ${u.id} has a missing or repeated email address.`);
    seenEmails.add(email.toLowerCase());
    maps.users.set(u.id, store.nextId("user"));
  }
  for (const u of users) {
    const role = ROLES.includes(u.role) ? u.role : Role.MEMBER;
    putUser(
      store,
      newUserRecord(maps.users.get(u.id)!, {
        email: String(u.delivery_email ?? u.email).trim(),
        full_name: String(u.full_name ?? "").slice(0, 60) || "Imported user",
        role,
        is_active: Boolean(u.is_active) && !u.is_mirror_dummy,
        is_bot: Boolean(u.is_bot),
        bot_type: u.is_bot ? (u.bot_type ?? BotType.GENERIC) : null,
        bot_owner_id: u.bot_owner != null ? (maps.users.get(u.bot_owner) ?? null) : null,
        timezone: typeof u.timezone === "string" ? u.timezone : "",
        date_joined: Number(u.date_joined) || Date.now() / 1000,
        email_address_visibility: Number(u.email_address_visibility) || EmailVisibility.EVERYONE,
        is_imported_stub: Boolean(u.is_mirror_dummy),
      }),
    );
  }

  for (const r of rows(data, "zerver_recipient")) maps.recipients.set(r.id, { type: r.type, typeId: r.type_id });
  const groupValue = importGroups(store, data, maps);

  for (const s of rows(data, "zerver_stream")) {
    const id = store.nextId("channel");
    maps.channels.set(s.id, id);
    const description = typeof s.description === "string" ? s.description : "";
    const groups = {} as Record<ChannelGroupSettingName, GroupSettingValue>;
    for (const setting of CHANNEL_GROUP_SETTINGS) groups[setting] = groupValue(s[setting], CHANNEL_GROUP_DEFAULTS[setting]);
    const channel: ChannelRecord = {
      id,
      name: String(s.name).slice(0, 60),
      description,
      rendered_description: renderDescription(description),
      date_created: Math.floor(Number(s.date_created) || Date.now() / 1000),
      creator_id: s.creator != null ? (maps.users.get(s.creator) ?? null) : null,
      invite_only: Boolean(s.invite_only),
      is_web_public: false,
      history_public_to_subscribers: s.invite_only ? Boolean(s.history_public_to_subscribers) : true,
      message_retention_days: typeof s.message_retention_days === "number" ? s.message_retention_days : null,
      default_push_notifications: false,
      topics_policy: "inherit",
      folder_id: null,
      is_archived: Boolean(s.deactivated),
      first_message_id: null,
      last_message_at: null,
      groups,
    };
    putChannel(store, channel);
  }
  for (const setting of REALM_GROUP_SETTINGS) if (realmRow[setting] != null) realm.settings[setting] = groupValue(realmRow[setting], SYSTEM_GROUP_IDS["role:nobody"]);
  for (const key of ["new_stream_announcements_stream", "signup_announcements_stream", "zulip_update_announcements_stream", "moderation_request_channel"]) {
    const channel = maps.channels.get(realmRow[key]);
    if (channel !== undefined) realm.settings[`${key}_id`] = channel;
  }
  putRealm(store, realm);

  // Subscriptions: channel ones become Hearth subscriptions; those to a group DM name its members.
  for (const sub of rows(data, "zerver_subscription")) {
    const recipient = maps.recipients.get(sub.recipient);
    const userId = maps.users.get(sub.user_profile);
    if (!recipient || userId === undefined) continue;
    if (recipient.type === RecipientType.DIRECT_MESSAGE_GROUP) {
      const members = maps.huddleMembers.get(recipient.typeId) ?? [];
      members.push(userId);
      maps.huddleMembers.set(recipient.typeId, members);
    }
    if (recipient.type !== RecipientType.STREAM) continue;
    const channelId = maps.channels.get(recipient.typeId);
    if (channelId === undefined) continue;
    putSubscription(store, {
      channel_id: channelId,
      user_id: userId,
      active: sub.active !== false,
      color: typeof sub.color === "string" ? sub.color : "#c2c2c2",
      is_muted: Boolean(sub.is_muted),
      pin_to_top: Boolean(sub.pin_to_top),
      desktop_notifications: sub.desktop_notifications ?? null,
      email_notifications: sub.email_notifications ?? null,
      wildcard_mentions_notify: sub.wildcard_mentions_notify ?? null,
      push_notifications: sub.push_notifications ?? null,
      audible_notifications: sub.audible_notifications ?? null,
    });
  }
  importPersonalTables(store, data, maps, realm);
  return maps;
}

const g = SYSTEM_GROUP_IDS;
/** A new channel's group settings in Zulip, for exports without groups (third-party converters). */
const CHANNEL_GROUP_DEFAULTS: Record<ChannelGroupSettingName, number> = {
  can_add_subscribers_group: g["role:nobody"],
  can_administer_channel_group: g["role:nobody"],
  can_create_topic_group: g["role:everyone"],
  can_delete_any_message_group: g["role:nobody"],
  can_delete_own_message_group: g["role:nobody"],
  can_move_messages_out_of_channel_group: g["role:nobody"],
  can_move_messages_within_channel_group: g["role:nobody"],
  can_remove_subscribers_group: g["role:administrators"],
  can_resolve_topics_group: g["role:nobody"],
  can_send_message_group: g["role:everyone"],
  can_subscribe_group: g["role:nobody"],
};

/**
 * User groups: system groups map by name onto Hearth's (their members follow roles),
 * the others become Hearth groups with their direct members and subgroups, and a
 * group without a name (an anonymous setting value) becomes the setting's
 * members-and-subgroups form. Returns the mapper of group-setting values.
 */
function importGroups(store: Store, data: Row, maps: IdMaps): (oldId: unknown, fallback: number) => GroupSettingValue {
  const named = new Map<number, Row>(rows(data, "zerver_namedusergroup").map((r) => [r.id ?? r.usergroup_ptr, r]));
  const groupIds = new Map<number, number>();
  for (const [oldId, r] of named) {
    if (r.is_system_group) {
      const id = (SYSTEM_GROUP_IDS as Record<string, number>)[r.name];
      if (id !== undefined) groupIds.set(oldId, id);
    } else groupIds.set(oldId, store.nextId("user_group"));
  }
  const members = new Map<number, number[]>();
  for (const m of rows(data, "zerver_usergroupmembership")) {
    const userId = maps.users.get(m.user_profile);
    if (userId === undefined) continue;
    members.set(m.user_group, [...(members.get(m.user_group) ?? []), userId]);
  }
  const subgroups = new Map<number, number[]>();
  for (const m of rows(data, "zerver_groupgroupmembership")) {
    const id = groupIds.get(m.subgroup);
    if (id !== undefined) subgroups.set(m.supergroup, [...(subgroups.get(m.supergroup) ?? []), id]);
  }
  const value = (oldId: unknown, fallback: number): GroupSettingValue => {
    if (typeof oldId !== "number") return fallback;
    const mapped = groupIds.get(oldId);
    if (mapped !== undefined) return mapped;
    if (named.has(oldId)) return fallback;
    return { direct_members: [...new Set(members.get(oldId) ?? [])].sort((a, b) => a - b), direct_subgroups: subgroups.get(oldId) ?? [] };
  };
  for (const [oldId, r] of named) {
    if (r.is_system_group) continue;
    const id = groupIds.get(oldId)!;
    const settings = {} as Record<UserGroupSettingName, GroupSettingValue>;
    for (const setting of USER_GROUP_SETTINGS) settings[setting] = value(r[setting], setting === "can_mention_group" ? g["role:everyone"] : g["role:nobody"]);
    putUserGroup(store, {
      id,
      name: String(r.name),
      description: typeof r.description === "string" ? r.description : "",
      is_system_group: false,
      direct_subgroup_ids: subgroups.get(oldId) ?? [],
      creator_id: r.creator != null ? (maps.users.get(r.creator) ?? null) : null,
      date_created: r.date_created != null ? Math.floor(r.date_created) : null,
      deactivated: Boolean(r.deactivated),
      settings,
    });
    for (const userId of new Set(members.get(oldId) ?? [])) addStoredGroupMember(store, id, userId);
  }
  return value;
}

/** Profile fields, domains, default channels, linkifiers, topic visibility, muted users, alert words. */
function importPersonalTables(store: Store, data: Row, maps: IdMaps, realm: Realm): void {
  const fieldIds = new Map<number, number>();
  const userFields = new Set<number>();
  for (const f of rows(data, "zerver_customprofilefield")) {
    const id = store.nextId("profile_field");
    fieldIds.set(f.id, id);
    if (f.field_type === ProfileFieldType.USER) userFields.add(f.id);
    putProfileField(store, {
      id,
      type: Number(f.field_type) || ProfileFieldType.SHORT_TEXT,
      order: Number(f.order) || 0,
      name: String(f.name),
      hint: typeof f.hint === "string" ? f.hint : "",
      field_data: typeof f.field_data === "string" ? f.field_data : "",
      display_in_profile_summary: Boolean(f.display_in_profile_summary),
      required: Boolean(f.required),
      editable_by_user: f.editable_by_user !== false,
      use_for_user_matching: false,
    });
  }
  for (const v of rows(data, "zerver_customprofilefieldvalue")) {
    const fieldId = fieldIds.get(v.field);
    const userId = maps.users.get(v.user_profile);
    if (fieldId === undefined || userId === undefined) continue;
    let value = String(v.value ?? "");
    if (userFields.has(v.field)) {
      try {
        value = JSON.stringify((JSON.parse(value) as number[]).map((id) => maps.users.get(id)).filter((id) => id !== undefined));
      } catch {
        continue;
      }
    }
    putProfileValue(store, userId, fieldId, v.rendered_value ? { value, rendered_value: v.rendered_value } : { value });
  }
  for (const d of rows(data, "zerver_realmdomain")) putRealmDomain(store, { id: store.nextId("realm_domain"), domain: String(d.domain).toLowerCase(), allow_subdomains: Boolean(d.allow_subdomains) });
  for (const d of rows(data, "zerver_defaultstream")) {
    const channelId = maps.channels.get(d.stream);
    if (channelId !== undefined) setDefaultChannel(store, channelId, true);
  }
  const linkifiers = rows(data, "zerver_realmfilter")
    .sort((a, b) => (a.order ?? 0) - (b.order ?? 0))
    .map((l) => ({ id: store.nextId("linkifier"), pattern: String(l.pattern), url_template: String(l.url_template ?? ""), example_input: null, reverse_template: null, alternative_url_templates: [] }));
  if (linkifiers.length > 0) putRealm(store, { ...realm, settings: { ...realm.settings, linkifiers } });
  for (const t of rows(data, "zerver_usertopic")) {
    const userId = maps.users.get(t.user_profile);
    const channelId = maps.channels.get(t.stream);
    if (userId === undefined || channelId === undefined || !t.visibility_policy) continue;
    putUserTopic(store, userId, { stream_id: channelId, topic_name: String(t.topic_name), visibility_policy: t.visibility_policy, last_updated: Math.floor(Number(t.last_updated) || Date.now() / 1000) });
  }
  for (const m of rows(data, "zerver_muteduser")) {
    const userId = maps.users.get(m.user_profile);
    const muted = maps.users.get(m.muted_user);
    if (userId !== undefined && muted !== undefined) putMutedUser(store, userId, muted, Math.floor(Number(m.date_muted) || Date.now() / 1000));
  }
  const words = new Map<number, string[]>();
  for (const w of rows(data, "zerver_alertword")) {
    const userId = maps.users.get(w.user_profile);
    if (userId !== undefined) words.set(userId, [...(words.get(userId) ?? []), String(w.word)]);
  }
  for (const [userId, list] of words) putAlertWords(store, userId, list);
}
