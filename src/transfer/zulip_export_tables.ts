import type { Store } from "../store/db";
import { getRealm, REALM_ID } from "../store/realm";
import { realmSetting, SYSTEM_GROUP_IDS } from "../store/realm_settings";
import { allUsers, EmailVisibility, Role, type UserRecord } from "../store/users";
import { allChannels } from "../store/channels";
import { everSubscribedIds, getSubscription } from "../store/subscriptions";
import { allUserGroups, storedGroupMemberIds, USER_GROUP_SETTINGS, type GroupSettingValue } from "../store/user_groups";
import { getProfileData, getProfileFields } from "../store/profile_fields";
import { allRealmEmoji } from "../store/realm_emoji";
import { allRealmDomains } from "../store/realm_domains";
import { defaultChannelIds } from "../store/default_channels";
import { getUserTopics } from "../store/user_topics";
import { getAlertWords, getMutedUsers, allUserStatuses } from "../store/personal";
import { allPresence } from "../store/presence";
import { allPlaygrounds } from "../store/playgrounds";
import { allScheduled } from "../store/scheduled_messages";
import { CHANNEL_GROUP_SETTINGS } from "../schemas/channels";
import type { Linkifier } from "../views/linkifiers";
import { RecipientType, REALM_CHANNEL_SETTINGS, REALM_GROUP_SETTINGS, ROLE_GROUP, ROLE_GROUP_CHAIN } from "./zulip_format";

/**
 * The tables of `realm.json` built from a Hearth store, as rows of Zulip's models the
 * way `model_to_dict` writes them: a foreign key under its bare field name, datetimes
 * as float seconds. Only fields of the 12.x models are written (the importer passes a
 * row to the model's constructor, which refuses unknown ones); every foreign key the
 * importer remaps is present, null where there is none. IDs are Hearth's own where it
 * has them (unique per table, which is all the importer needs: it renumbers them).
 */

type Row = Record<string, unknown>;

/** Recipient IDs: one per user (personal), per channel and per group conversation. */
export class Recipients {
  private next = 1;
  readonly rows: Row[] = [];
  readonly personal = new Map<number, number>();
  readonly stream = new Map<number, number>();
  /** conversation key → { huddle id, recipient id, members } */
  readonly huddles = new Map<string, { huddleId: number; recipientId: number; members: number[] }>();

  add(type: number, typeId: number): number {
    const id = this.next++;
    this.rows.push({ id, type, type_id: typeId });
    return id;
  }

  huddleFor(key: string, members: number[]): number {
    let h = this.huddles.get(key);
    if (!h) {
      const huddleId = this.huddles.size + 1;
      h = { huddleId, recipientId: this.add(RecipientType.DIRECT_MESSAGE_GROUP, huddleId), members };
      this.huddles.set(key, h);
    }
    return h.recipientId;
  }
}

/** Group-setting values to UserGroup IDs: anonymous groups become UserGroup rows without a name. */
export class Groups {
  readonly usergroup: Row[] = [];
  readonly named: Row[] = [];
  readonly userMembers: Row[] = [];
  readonly groupMembers: Row[] = [];
  private nextAnonymous: number;

  constructor(private readonly store: Store) {
    let max = 0;
    for (const g of allUserGroups(store)) max = Math.max(max, g.id);
    this.nextAnonymous = max + 1;
  }

  ref(value: GroupSettingValue | undefined, fallback: number): number {
    if (value === undefined) return fallback;
    if (typeof value === "number") return value;
    const id = this.nextAnonymous++;
    this.usergroup.push({ id, realm: REALM_ID });
    for (const userId of value.direct_members) this.addUser(id, userId);
    for (const sub of value.direct_subgroups) this.addSubgroup(id, sub);
    return id;
  }

  addUser(groupId: number, userId: number): void {
    this.userMembers.push({ id: this.userMembers.length + 1, user_group: groupId, user_profile: userId });
  }

  addSubgroup(supergroup: number, subgroup: number): void {
    this.groupMembers.push({ id: this.groupMembers.length + 1, supergroup, subgroup });
  }

  /** Every named group, system ones with Zulip's role memberships and subgroup chain. */
  buildNamed(users: UserRecord[]): void {
    const systemIdByName = SYSTEM_GROUP_IDS as Record<string, number>;
    for (const g of allUserGroups(this.store)) {
      this.usergroup.push({ id: g.id, realm: REALM_ID });
      const row: Row = {
        id: g.id,
        usergroup_ptr: g.id,
        realm_for_sharding: REALM_ID,
        name: g.name,
        description: g.description,
        is_system_group: g.is_system_group,
        deactivated: g.deactivated,
        date_created: g.date_created,
        creator: g.creator_id,
      };
      for (const setting of USER_GROUP_SETTINGS) row[setting] = this.ref(g.settings[setting], SYSTEM_GROUP_IDS["role:nobody"]);
      this.named.push(row);
      if (!g.is_system_group) {
        for (const userId of storedGroupMemberIds(this.store, g.id)) this.addUser(g.id, userId);
        for (const sub of g.direct_subgroup_ids) this.addSubgroup(g.id, sub);
      }
    }
    for (let i = 0; i + 1 < ROLE_GROUP_CHAIN.length; i++) this.addSubgroup(systemIdByName[ROLE_GROUP_CHAIN[i + 1]], systemIdByName[ROLE_GROUP_CHAIN[i]]);
    for (const u of users) {
      if (u.is_system_bot) continue;
      const group = ROLE_GROUP[u.role];
      if (group) this.addUser(systemIdByName[group], u.id);
      if (u.role === Role.MEMBER) this.addUser(systemIdByName["role:fullmembers"], u.id);
    }
  }
}

/** The address Zulip shows through the API: the real one only when everyone may see it. */
function apiEmail(u: UserRecord, host: string): string {
  return u.is_bot || u.email_address_visibility === EmailVisibility.EVERYONE ? u.email : `user${u.id}@${host}`;
}

export function realmHost(store: Store): string {
  const url = getRealm(store)?.external_url;
  if (url) {
    try {
      return new URL(url).hostname;
    } catch {
      // fall through
    }
  }
  return "localhost";
}

export function userRow(u: UserRecord, host: string): Row {
  const defaults = u.bot_defaults;
  return {
    id: u.id,
    realm: REALM_ID,
    email: apiEmail(u, host),
    delivery_email: u.email,
    full_name: u.full_name,
    role: u.role,
    is_active: u.is_active,
    is_bot: u.is_bot,
    bot_type: u.is_bot ? u.bot_type : null,
    bot_owner: u.bot_owner_id,
    is_mirror_dummy: u.is_imported_stub,
    date_joined: u.date_joined,
    // Every DateTimeField the importer converts back (export.py's DATE_FIELDS) must be a key, null or not.
    last_login: null,
    last_reminder: null,
    timezone: u.timezone,
    avatar_source: u.avatar_source,
    avatar_version: u.avatar_version,
    email_address_visibility: u.email_address_visibility,
    translate_emoticons: Boolean(u.settings.translate_emoticons ?? false),
    default_sending_stream: defaults?.sending_channel_id ?? null,
    default_events_register_stream: defaults?.events_register_channel_id ?? null,
    default_all_public_streams: defaults?.all_public_streams ?? false,
    last_active_message_id: null,
    user_permissions: [],
    groups: [],
  };
}

/** Everything of realm.json but the message-derived tables (reactions, huddles), which the message pass fills. */
export function buildRealmTables(store: Store, recipients: Recipients, clientId: (name: string) => number): Record<string, unknown> {
  const realm = getRealm(store)!;
  const host = realmHost(store);
  const users = [...allUsers(store)];
  const realmUsers = users.filter((u) => !u.is_system_bot);
  const groups = new Groups(store);
  groups.buildNamed(realmUsers);

  const realmRow: Row = {
    id: REALM_ID,
    string_id: "",
    name: realm.name,
    description: realm.description,
    date_created: realm.date_created,
    deactivated: false,
    invite_required: Boolean(realmSetting(realm.settings, "invite_required")),
    emails_restricted_to_domains: Boolean(realmSetting(realm.settings, "emails_restricted_to_domains")),
    waiting_period_threshold: Number(realmSetting(realm.settings, "waiting_period_threshold")),
    allow_message_editing: Boolean(realmSetting(realm.settings, "allow_message_editing")),
  };
  for (const setting of REALM_CHANNEL_SETTINGS) {
    const id = realmSetting(realm.settings, `${setting}_id`) as number;
    realmRow[setting] = typeof id === "number" && id > 0 ? id : null;
  }
  for (const setting of REALM_GROUP_SETTINGS) {
    realmRow[setting] = groups.ref(realmSetting(realm.settings, setting) as GroupSettingValue | undefined, SYSTEM_GROUP_IDS["role:nobody"]);
  }

  const subscriptions: Row[] = [];
  const addSub = (userId: number, recipient: number, extra: Row = {}) =>
    subscriptions.push({ id: subscriptions.length + 1, user_profile: userId, recipient, active: true, is_user_active: true, color: "#c2c2c2", is_muted: false, pin_to_top: false, desktop_notifications: null, audible_notifications: null, push_notifications: null, email_notifications: null, wildcard_mentions_notify: null, ...extra });
  for (const u of realmUsers) {
    const id = recipients.add(RecipientType.PERSONAL, u.id);
    recipients.personal.set(u.id, id);
    addSub(u.id, id);
  }
  // System bots live in Zulip's internal realm: the importer maps them by email to its own.
  const crossrealm: Row[] = [];
  for (const u of users.filter((u) => u.is_system_bot)) {
    const id = recipients.add(RecipientType.PERSONAL, u.id);
    recipients.personal.set(u.id, id);
    recipients.rows.pop(); // not a row of this realm: only named in zerver_userprofile_crossrealm
    crossrealm.push({ email: u.email, id: u.id, recipient_id: id });
  }

  const streams: Row[] = [];
  for (const c of allChannels(store)) {
    const row: Row = {
      id: c.id,
      realm: REALM_ID,
      name: c.name,
      description: c.description,
      rendered_description: c.rendered_description,
      invite_only: c.invite_only,
      history_public_to_subscribers: c.history_public_to_subscribers,
      is_web_public: c.is_web_public,
      deactivated: c.is_archived,
      date_created: c.date_created,
      message_retention_days: c.message_retention_days,
      creator: c.creator_id,
      folder: null,
    };
    for (const setting of CHANNEL_GROUP_SETTINGS) row[setting] = groups.ref(c.groups[setting], SYSTEM_GROUP_IDS["role:nobody"]);
    streams.push(row);
    const recipient = recipients.add(RecipientType.STREAM, c.id);
    recipients.stream.set(c.id, recipient);
    for (const userId of everSubscribedIds(store, c.id)) {
      const s = getSubscription(store, c.id, userId)!;
      addSub(userId, recipient, {
        active: s.active,
        color: s.color,
        is_muted: s.is_muted,
        pin_to_top: s.pin_to_top,
        desktop_notifications: s.desktop_notifications,
        audible_notifications: s.audible_notifications,
        push_notifications: s.push_notifications,
        email_notifications: s.email_notifications,
        wildcard_mentions_notify: s.wildcard_mentions_notify,
      });
    }
  }

  const fields = getProfileFields(store);
  const fieldValues: Row[] = [];
  const userTopics: Row[] = [];
  const mutedUsers: Row[] = [];
  const alertWords: Row[] = [];
  for (const u of realmUsers) {
    for (const [fieldId, v] of getProfileData(store, u.id)) {
      fieldValues.push({ id: fieldValues.length + 1, user_profile: u.id, field: fieldId, value: v.value, rendered_value: v.rendered_value ?? null });
    }
    for (const t of getUserTopics(store, u.id)) {
      const recipient = recipients.stream.get(t.stream_id);
      if (recipient === undefined) continue;
      userTopics.push({ id: userTopics.length + 1, user_profile: u.id, stream: t.stream_id, recipient, topic_name: t.topic_name, last_updated: t.last_updated, visibility_policy: t.visibility_policy });
    }
    for (const m of getMutedUsers(store, u.id)) mutedUsers.push({ id: mutedUsers.length + 1, user_profile: u.id, muted_user: m.id, date_muted: m.timestamp });
    for (const word of getAlertWords(store, u.id)) alertWords.push({ id: alertWords.length + 1, user_profile: u.id, realm: REALM_ID, word });
  }

  const emojiNames = new Map([...allRealmEmoji(store)].map((e) => [e.id, e.name]));
  const linkifiers = (realm.settings.linkifiers as Linkifier[] | undefined) ?? [];
  const personalIds = new Set(realmUsers.map((u) => u.id));
  const scheduled: Row[] = [];
  for (const s of allScheduled(store)) {
    // Reminders and delivered or failed items do not carry over (Zulip's exporter keeps pending ones only).
    if (s.kind !== "message" || s.delivered_message_id !== null || s.failed || !personalIds.has(s.owner_id)) continue;
    const to = Array.isArray(s.to) ? s.to : [];
    let recipient: number | undefined;
    if (s.type === "stream") recipient = recipients.stream.get(s.to as number);
    else if (to.length === 1) recipient = recipients.personal.get(to[0]);
    if (recipient === undefined) continue; // a group conversation: its recipient exists only once a message was sent
    scheduled.push({
      id: s.id,
      sender: s.owner_id,
      recipient,
      sending_client: clientId(s.client),
      stream: s.type === "stream" ? s.to : null,
      realm: REALM_ID,
      delivered_message: null,
      subject: s.topic,
      content: s.content,
      rendered_content: s.rendered_content,
      scheduled_timestamp: s.deliver_at,
      request_timestamp: s.deliver_at,
      read_by_sender: s.read_by_sender,
      has_attachment: false,
      delivered: false,
      failed: false,
      delivery_type: 1,
    });
  }

  return {
    zerver_realm: [realmRow],
    zerver_userprofile: realmUsers.filter((u) => !u.is_imported_stub).map((u) => userRow(u, host)),
    zerver_userprofile_mirrordummy: realmUsers.filter((u) => u.is_imported_stub).map((u) => userRow(u, host)),
    zerver_userprofile_crossrealm: crossrealm,
    zerver_stream: streams,
    zerver_subscription: subscriptions,
    zerver_usergroup: groups.usergroup,
    zerver_namedusergroup: groups.named,
    zerver_usergroupmembership: groups.userMembers,
    zerver_groupgroupmembership: groups.groupMembers,
    zerver_realmauthenticationmethod: [{ id: 1, realm: REALM_ID, name: "Email" }],
    zerver_defaultstream: defaultChannelIds(store).map((stream, i) => ({ id: i + 1, realm: REALM_ID, stream })),
    zerver_realmemoji: [...allRealmEmoji(store)].map((e) => ({ id: e.id, realm: REALM_ID, author: e.author_id, name: e.name, file_name: emojiFileName(e.id, e.content_type), is_animated: e.content_type === "image/gif", deactivated: e.deactivated })),
    zerver_realmdomain: allRealmDomains(store).map((d) => ({ id: d.id, realm: REALM_ID, domain: d.domain, allow_subdomains: d.allow_subdomains })),
    zerver_realmfilter: linkifiers.map((l, order) => ({ id: l.id, realm: REALM_ID, pattern: l.pattern, url_template: l.url_template, order })),
    zerver_realmplayground: allPlaygrounds(store).map((p) => ({ id: p.id, realm: REALM_ID, name: p.name, pygments_language: p.pygments_language, url_template: p.url_template })),
    zerver_customprofilefield: fields.map((f) => ({ id: f.id, realm: REALM_ID, name: f.name, hint: f.hint, order: f.order, field_type: f.type, field_data: f.field_data, display_in_profile_summary: f.display_in_profile_summary, required: f.required, editable_by_user: f.editable_by_user })),
    zerver_customprofilefieldvalue: fieldValues,
    zerver_userpresence: [...allPresence(store)].filter(([id]) => personalIds.has(id)).map(([id, p], i) => ({ id: i + 1, user_profile: id, realm: REALM_ID, last_active_time: p.last_active_time, last_connected_time: p.last_connected_time, last_update_id: p.last_update_id })),
    zerver_userstatus: [...allUserStatuses(store)].filter(([id, st]) => personalIds.has(id) && (st.reaction_type !== "realm_emoji" || emojiNames.get(Number(st.emoji_code)) === st.emoji_name)).map(([id, s], i) => ({ id: i + 1, user_profile: id, client: clientId("website"), timestamp: Math.floor(Date.now() / 1000), status_text: s.status_text, emoji_name: s.emoji_name, emoji_code: s.emoji_code, reaction_type: s.reaction_type || "unicode_emoji" })),
    zerver_useractivity: [],
    zerver_useractivityinterval: [],
    zerver_usertopic: userTopics,
    zerver_muteduser: mutedUsers,
    zerver_alertword: alertWords,
    zerver_scheduledmessage: scheduled,
  };
}

const EMOJI_EXTENSIONS: Record<string, string> = { "image/png": "png", "image/gif": "gif", "image/jpeg": "jpg", "image/webp": "webp" };

/** The file name of a custom emoji's image (Zulip's RealmEmoji.file_name). */
export function emojiFileName(id: number, contentType: string): string {
  return `${id}.${EMOJI_EXTENSIONS[contentType] ?? "png"}`;
}
