import type { Hearth } from "../context";
import type { CustomProfileFieldJson } from "../schemas/events";
import { getProfileData, getProfileFields, ProfileFieldType, type CustomProfileField } from "../store/profile_fields";

/** A field as GET /realm/profile_fields and register show it. */
export function profileFieldView(f: CustomProfileField): CustomProfileFieldJson {
  const view: CustomProfileFieldJson & { use_for_user_matching?: true } = {
    id: f.id,
    type: f.type as CustomProfileFieldJson["type"],
    order: f.order,
    name: f.name,
    hint: f.hint,
    field_data: f.field_data,
    display_in_profile_summary: f.display_in_profile_summary,
    required: f.required,
    editable_by_user: f.editable_by_user,
  };
  // Zulip includes this key only when true.
  if (f.use_for_user_matching) view.use_for_user_matching = true;
  return view;
}

/** The organization's fields, in their order (GET /realm/profile_fields). */
export function profileFieldsView(h: Hearth): CustomProfileFieldJson[] {
  return getProfileFields(h.store).map(profileFieldView);
}

/** `custom_profile_field_types` of register: every type with its ID and display name. */
export const PROFILE_FIELD_TYPES: Record<string, { id: number; name: string }> = {
  SHORT_TEXT: { id: ProfileFieldType.SHORT_TEXT, name: "Text (short)" },
  LONG_TEXT: { id: ProfileFieldType.LONG_TEXT, name: "Text (long)" },
  SELECT: { id: ProfileFieldType.SELECT, name: "List of options" },
  DATE: { id: ProfileFieldType.DATE, name: "Date picker" },
  URL: { id: ProfileFieldType.URL, name: "Link" },
  USER: { id: ProfileFieldType.USER, name: "Person picker" },
  EXTERNAL_ACCOUNT: { id: ProfileFieldType.EXTERNAL_ACCOUNT, name: "External account" },
  PRONOUNS: { id: ProfileFieldType.PRONOUNS, name: "Pronouns" },
};

/** `profile_data` of a user object: `{ "<field id>": { value } }` for every field with a value. */
export function profileDataView(h: Hearth, userId: number): Record<string, { value: string; rendered_value?: string }> {
  const out: Record<string, { value: string; rendered_value?: string }> = {};
  for (const [id, stored] of getProfileData(h.store, userId)) out[String(id)] = { ...stored };
  return out;
}
