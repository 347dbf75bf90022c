import type { Hearth } from "../context";
import { commit, type Transaction } from "../events/commit";
import { assertAdmin } from "../access/roles";
import { badRequest } from "../errors";
import { hashPassword } from "../lib/credentials";
import { passwordLengthAllowed, realmSetting } from "../store/realm_settings";
import { activeUserIds, allUsers, EmailVisibility, getUser, isAdmin, putUser, type UserRecord } from "../store/users";
import { apiEmail } from "../views/users";
import { canSeeRealEmail } from "../access/users";
import { canonicalSettingValue, AVAILABLE_NOTIFICATION_SOUNDS, LANGUAGE_NAMES, realmUserDefaults, USER_SETTINGS, userSetting, userSettingsDefaultsView } from "../views/settings";
import { getRealm, putRealm } from "../store/realm";
import { requireRealm } from "../views/realm";
import { checkFullName } from "./create_user";
import { notifyFullNameChanged, notifyRealmUser } from "./user_events";
import { removeAllDrafts } from "../store/drafts";
import { removeUserSessions } from "../store/sessions";
import { checkStartEmailChange } from "./account_emails";

export interface SettingsChanges {
  settings: Record<string, unknown>;
  full_name?: string;
  timezone?: string;
  email_address_visibility?: number;
  email?: string;
  old_password?: string;
  new_password?: string;
}

function isValidTimezone(zone: string): boolean {
  if (zone === "") return true;
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Value rules beyond each setting's type, shared by PATCH /settings and the organization defaults. */
function checkSettingValue(name: string, value: unknown): void {
  if (name === "default_language" && !Object.hasOwn(LANGUAGE_NAMES, String(value))) throw badRequest("Invalid default_language");
  // Zulip's check_settings_values: more than nothing, at most a week.
  if (name === "email_notifications_batching_period_seconds" && (Number(value) <= 0 || Number(value) > 7 * 24 * 3600)) {
    throw badRequest(`Invalid email batching period: ${String(value)} seconds`);
  }
  if (name === "notification_sound" && value !== "none" && !AVAILABLE_NOTIFICATION_SOUNDS.includes(String(value))) {
    throw badRequest("Invalid notification sound '" + String(value) + "'");
  }
}

/**
 * Writes `settings` onto `next` (a copy of the stored user, inside a commit): only
 * values that differ, defaults dropped. Returns what changed.
 */
export function applySettings(next: UserRecord, settings: Record<string, unknown>): [string, unknown][] {
  const changed: [string, unknown][] = [];
  for (const [name, given] of Object.entries(settings)) {
    const value = canonicalSettingValue(name, given);
    if (userSetting(next, name) === value) continue;
    if (value === USER_SETTINGS[name].default) delete next.settings[name];
    else next.settings[name] = value;
    changed.push([name, value]);
  }
  return changed;
}

/**
 * One `user_settings` update per changed setting, to the user. Since FL 439 no client
 * gets the legacy `update_display_settings` / `update_global_notifications` forms.
 */
export function notifySettingChanges(tx: Transaction, _h: Hearth, user: UserRecord, changed: [string, unknown][]): void {
  for (const [property, value] of changed) {
    const languageName = property === "default_language" ? { language_name: LANGUAGE_NAMES[String(value)] } : {};
    tx.notify({ type: "user_settings", op: "update", property, value, ...languageName }, [user.id]);
  }
}

/**
 * `PATCH /settings`: the user's own settings, name, time zone, email visibility and
 * password. Only values that actually change are written and announced (Zulip's
 * json_change_settings does the same), each as one `user_settings` update event to
 * the user's own queues; name, time zone and email visibility also reach everyone
 * through `realm_user` updates.
 */
export async function checkUpdateSettings(
  h: Hearth,
  user: UserRecord,
  changes: SettingsChanges,
  /** Whether a password is the user's: the HTTP side's rate-limited check (src/auth/login.ts). */
  isCurrentPassword: (password: string) => Promise<boolean>,
): Promise<void> {
  const realm = requireRealm(h);
  // Zulip compares the stripped address with the current one as written: a change of case is a change too.
  const newEmail = changes.email === undefined || changes.email.trim() === user.email ? undefined : changes.email.trim();
  for (const [name, value] of Object.entries(changes.settings)) {
    checkSettingValue(name, value);
  }
  const fullName = changes.full_name === undefined ? undefined : checkFullName(changes.full_name);
  if (fullName !== undefined && fullName !== user.full_name && realmSetting(realm.settings, "name_changes_disabled") === true && !isAdmin(user)) {
    throw badRequest("Name changes are disabled in this organization.");
  }
  if (changes.timezone !== undefined && !isValidTimezone(changes.timezone)) throw badRequest("Invalid timezone");
  const visibility = changes.email_address_visibility;
  if (visibility !== undefined && !Object.values(EmailVisibility).includes(visibility as any)) {
    throw badRequest("Invalid email_address_visibility");
  }
  let passwordHash: string | undefined;
  if (changes.new_password !== undefined) {
    if (changes.old_password === undefined) throw badRequest("Please fill out all fields.");
    if (!(await isCurrentPassword(changes.old_password))) throw badRequest("Wrong password!");
    if (!passwordLengthAllowed(changes.new_password)) {
      throw badRequest("New password is too weak!");
    }
    passwordHash = await hashPassword(changes.new_password);
  }
  // The address changes only once the link sent to it is followed (src/actions/account_emails.ts).
  if (newEmail !== undefined) await checkStartEmailChange(h, user, newEmail);

  await commit(h, (tx) => {
    const current = getUser(h.store, user.id)!;
    const next: UserRecord = { ...current, settings: { ...current.settings } };
    const changed = applySettings(next, changes.settings);
    if (changes.timezone !== undefined && changes.timezone !== current.timezone) {
      next.timezone = changes.timezone;
      changed.push(["timezone", changes.timezone]);
    }
    if (visibility !== undefined && visibility !== current.email_address_visibility) {
      next.email_address_visibility = visibility;
      changed.push(["email_address_visibility", visibility]);
    }
    if (fullName !== undefined) next.full_name = fullName;
    if (passwordHash !== undefined) {
      next.password_hash = passwordHash;
      // A new password signs every browser out, the one that changed it included
      // (a stolen session must not outlive it). API keys stay: Zulip's do too.
      removeUserSessions(h.store, user.id);
    }
    // Zulip's do_change_user_setting: turning synchronization off deletes the stored
    // drafts, without drafts events (the clients keep their own copies).
    if (changed.some(([name, value]) => name === "enable_drafts_synchronization" && value === false)) removeAllDrafts(h.store, user.id);
    // A request that changes nothing writes nothing.
    if (changed.length > 0 || next.full_name !== current.full_name || passwordHash !== undefined) putUser(h.store, next);
    notifySettingsUpdated(tx, h, current, next, changed);
  });
}

function notifySettingsUpdated(tx: Transaction, h: Hearth, before: UserRecord, after: UserRecord, changed: [string, unknown][]): void {
  notifySettingChanges(tx, h, after, changed);
  // The deprecated user_status `away` mirrors presence_enabled (FL 148): everyone hears of it.
  const presenceChange = changed.find(([property]) => property === "presence_enabled");
  if (presenceChange) tx.notify({ type: "user_status", user_id: after.id, away: presenceChange[1] === false }, activeUserIds(h));
  if (after.full_name !== before.full_name) notifyFullNameChanged(tx, h, after);
  if (after.timezone !== before.timezone) notifyRealmUser(tx, h, "update", after, { timezone: after.timezone });
  if (after.email_address_visibility !== before.email_address_visibility) notifyEmailVisibilityChanged(tx, h, before, after);
}

/**
 * Zulip's send_delivery_email_update_events and send_user_email_update_event: the
 * viewers who may now see the real address get it as `delivery_email`, those who no
 * longer may get null, and when the API email itself changes (between the real
 * address and the placeholder) everyone gets it as `new_email`.
 */
function notifyEmailVisibilityChanged(tx: Transaction, h: Hearth, before: UserRecord, after: UserRecord): void {
  const nowVisible: number[] = [];
  const nowHidden: number[] = [];
  for (const viewer of allUsers(h.store)) {
    if (!viewer.is_active || viewer.is_system_bot) continue;
    const could = canSeeRealEmail(viewer, before);
    const can = canSeeRealEmail(viewer, after);
    if (could !== can) (can ? nowVisible : nowHidden).push(viewer.id);
  }
  if (nowVisible.length > 0) tx.notify({ type: "realm_user", op: "update", person: { user_id: after.id, delivery_email: after.email } }, nowVisible);
  if (nowHidden.length > 0) tx.notify({ type: "realm_user", op: "update", person: { user_id: after.id, delivery_email: null } }, nowHidden);
  const newEmail = apiEmail(h, after);
  if (newEmail !== apiEmail(h, before)) tx.notify({ type: "realm_user", op: "update", person: { user_id: after.id, new_email: newEmail } }, activeUserIds(h));
}

/**
 * `PATCH /realm/user_settings_defaults` (administrators): what new accounts start
 * with; existing accounts keep theirs. One `realm_user_settings_defaults` update
 * event per changed setting, to everyone.
 */
export async function checkUpdateUserSettingsDefaults(h: Hearth, actor: UserRecord, changes: Record<string, unknown>): Promise<void> {
  assertAdmin(actor);
  if (changes.email_address_visibility !== undefined && !Object.values(EmailVisibility).includes(changes.email_address_visibility as never)) {
    throw badRequest("Invalid email_address_visibility");
  }
  for (const [name, value] of Object.entries(changes)) checkSettingValue(name, value);
  await commit(h, (tx) => {
    const realm = getRealm(h.store)!;
    const defaults = { ...realmUserDefaults(realm.settings) };
    const current = userSettingsDefaultsView(realm.settings);
    const changed: [string, unknown][] = [];
    for (const [name, given] of Object.entries(changes)) {
      const value = canonicalSettingValue(name, given);
      if (current[name] === value) continue;
      defaults[name] = value;
      changed.push([name, value]);
    }
    if (changed.length > 0) putRealm(h.store, { ...realm, settings: { ...realm.settings, user_settings_defaults: defaults } });
    for (const [property, value] of changed) {
      // Checked against the setting's type above.
      tx.notify({ type: "realm_user_settings_defaults", op: "update", property, value: value as string | number | boolean }, activeUserIds(h));
    }
  });
}
