import { valuesOf, type Store } from "./db";
import { StoreCache } from "./cache";

export const ProfileFieldType = {
  SHORT_TEXT: 1,
  LONG_TEXT: 2,
  SELECT: 3,
  DATE: 4,
  URL: 5,
  USER: 6,
  EXTERNAL_ACCOUNT: 7,
  PRONOUNS: 8,
} as const;

export interface CustomProfileField {
  id: number;
  type: number;
  order: number;
  name: string;
  hint: string;
  /** JSON text: choices for SELECT, `{subtype, url_pattern}` for EXTERNAL_ACCOUNT, else "". */
  field_data: string;
  display_in_profile_summary: boolean;
  required: boolean;
  editable_by_user: boolean;
  use_for_user_matching: boolean;
}

export function getProfileFields(store: Store): CustomProfileField[] {
  return valuesOf<CustomProfileField>(store.dbs.profileFields).sort((a, b) => a.order - b.order || a.id - b.id);
}

export function getProfileField(store: Store, id: number): CustomProfileField | undefined {
  return store.dbs.profileFields.get(id) as CustomProfileField | undefined;
}

/** A stored value, with its HTML for the text types that Zulip renders as Markdown. */
export interface ProfileValue {
  value: string;
  rendered_value?: string;
}

/** Each user's values while none is written: every GET /users/me and user object shows them. */
const profileDataCache = new StoreCache<number, ReadonlyMap<number, Readonly<ProfileValue>>>();
/** Moves whenever any user's values are written (for caches derived from them). */
export const profileDataVersion = () => profileDataCache.version;

/** The user's values by field ID (shared: do not change them). */
export function getProfileData(store: Store, userId: number): ReadonlyMap<number, Readonly<ProfileValue>> {
  return profileDataCache.get(store, userId, () => {
    const out = new Map<number, ProfileValue>();
    for (const { key, value } of store.dbs.profileData.getRange({ start: [userId], end: [userId, Infinity] })) {
      out.set((key as number[])[1], typeof value === "string" ? { value } : (value as ProfileValue));
    }
    return out;
  });
}

/** Call only inside `commit`. */
export function putProfileField(store: Store, field: CustomProfileField): void {
  store.dbs.profileFields.put(field.id, field);
}

/** Removes a field and every user's value of it; call only inside `commit`. */
export function removeProfileField(store: Store, fieldId: number, userIds: Iterable<number>): void {
  store.dbs.profileFields.remove(fieldId);
  profileDataCache.invalidate(store);
  for (const userId of userIds) store.dbs.profileData.remove([userId, fieldId]);
}

/** One user's value of one field. */
export function getProfileValue(store: Store, userId: number, fieldId: number): ProfileValue | undefined {
  const value = store.dbs.profileData.get([userId, fieldId]) as ProfileValue | string | undefined;
  return typeof value === "string" ? { value } : value;
}

/** Call only inside `commit`. */
export function putProfileValue(store: Store, userId: number, fieldId: number, value: ProfileValue): void {
  profileDataCache.invalidate(store);
  store.dbs.profileData.put([userId, fieldId], value);
}

/** Call only inside `commit`. */
export function removeProfileValue(store: Store, userId: number, fieldId: number): void {
  profileDataCache.invalidate(store);
  store.dbs.profileData.remove([userId, fieldId]);
}
