import { isPermutationOf } from "../lib/collections";
import type { Hearth } from "../context";
import { commit, type Transaction } from "../events/commit";
import { assertAdmin } from "../access/roles";
import { badRequest, mustBeAdmin } from "../errors";
import { getProfileData, getProfileField, getProfileFields, getProfileValue, ProfileFieldType, putProfileField, putProfileValue, removeProfileField, removeProfileValue, type CustomProfileField } from "../store/profile_fields";
import { activeUserIds, allUsers, getUser, isAdmin, type UserRecord } from "../store/users";
import { renderDescription } from "../markdown/description";
import { profileFieldsView } from "../views/profile_fields";
import { notifyRealmUser } from "./user_events";

export const MAX_FIELD_NAME_LENGTH = 40;
export const MAX_FIELD_HINT_LENGTH = 80;
const MAX_SHORT_VALUE = 50;
const MAX_LONG_VALUE = 500;
const MAX_IN_SUMMARY = 2;
const EXTERNAL_SUBTYPES = ["github", "twitter", "custom"];

export interface FieldInput {
  name?: string;
  hint?: string;
  field_data?: unknown;
  display_in_profile_summary?: boolean;
  required?: boolean;
  editable_by_user?: boolean;
  use_for_user_matching?: boolean;
}


/** Validates `field_data` for the field type and returns its stored JSON text. */
function checkFieldData(type: number, data: unknown): string {
  if (type === ProfileFieldType.SELECT) {
    if (typeof data !== "object" || data === null || Array.isArray(data) || Object.keys(data).length === 0) {
      throw badRequest("Field must have at least one choice.");
    }
    const texts = new Set<string>();
    for (const [key, choice] of Object.entries(data as Record<string, any>)) {
      if (typeof choice !== "object" || choice === null || typeof choice.text !== "string" || choice.text.trim() === "") {
        throw badRequest(`field_data["${key}"]["text"] is not a string`);
      }
      if (choice.order === undefined || (typeof choice.order !== "string" && typeof choice.order !== "number")) {
        throw badRequest(`field_data["${key}"]["order"] is not a string`);
      }
      if (texts.has(choice.text)) throw badRequest("Field must not have duplicate choices.");
      texts.add(choice.text);
    }
    return JSON.stringify(data);
  }
  if (type === ProfileFieldType.EXTERNAL_ACCOUNT) {
    const d = data as Record<string, unknown> | undefined;
    if (!d || typeof d !== "object" || !EXTERNAL_SUBTYPES.includes(String(d.subtype))) throw badRequest("Invalid external account type");
    if (d.subtype === "custom" && (typeof d.url_pattern !== "string" || !d.url_pattern.includes("%(username)s"))) {
      throw badRequest("Custom external account must define URL pattern");
    }
    return JSON.stringify(d);
  }
  return "";
}

function checkSummaryFlag(h: Hearth, type: number, on: boolean, exceptId?: number): void {
  if (!on) return;
  if (type === ProfileFieldType.LONG_TEXT || type === ProfileFieldType.USER) {
    throw badRequest("Fields of this type cannot be displayed in the profile summary.");
  }
  const shown = getProfileFields(h.store).filter((f) => f.display_in_profile_summary && f.id !== exceptId).length;
  if (shown >= MAX_IN_SUMMARY) throw badRequest(`Only ${MAX_IN_SUMMARY} custom profile fields can be displayed in the profile summary.`);
}

function checkName(h: Hearth, name: string, exceptId?: number): string {
  const n = name.trim();
  if (n === "") throw badRequest("Label cannot be blank.");
  if (n.length > MAX_FIELD_NAME_LENGTH) throw badRequest(`name is too long (limit: ${MAX_FIELD_NAME_LENGTH} characters)`);
  if (getProfileFields(h.store).some((f) => f.id !== exceptId && f.name.toLowerCase() === n.toLowerCase())) {
    throw badRequest("A field with that label already exists.");
  }
  return n;
}

function notifyFields(tx: Transaction, h: Hearth): void {
  tx.notify({ type: "custom_profile_fields", fields: profileFieldsView(h) }, activeUserIds(h));
}

function checkUserMatchingFlag(type: number, useForUserMatching: boolean | undefined): void {
  const canMatch = type === ProfileFieldType.SHORT_TEXT || type === ProfileFieldType.EXTERNAL_ACCOUNT;
  if (useForUserMatching && !canMatch) throw badRequest("Only short text and external account fields can be used for user matching.");
}

export async function doCreateProfileField(h: Hearth, actor: UserRecord, type: number, input: FieldInput): Promise<number> {
  assertAdmin(actor);
  if (!(Object.values(ProfileFieldType) as number[]).includes(type)) throw badRequest("Invalid field type.");
  checkUserMatchingFlag(type, input.use_for_user_matching);
  if (type === ProfileFieldType.EXTERNAL_ACCOUNT && input.name === undefined) {
    // Zulip names non-custom external accounts after their service.
    const subtype = (input.field_data as any)?.subtype;
    if (subtype === "github") input = { ...input, name: "GitHub" };
    else if (subtype === "twitter") input = { ...input, name: "Twitter" };
  }
  const fieldData = checkFieldData(type, input.field_data);
  return commit(h, (tx) => {
    const name = checkName(h, input.name ?? "");
    checkSummaryFlag(h, type, input.display_in_profile_summary ?? false);
    const hint = (input.hint ?? "").trim();
    if (hint.length > MAX_FIELD_HINT_LENGTH) throw badRequest(`hint is too long (limit: ${MAX_FIELD_HINT_LENGTH} characters)`);
    const fields = getProfileFields(h.store);
    const field: CustomProfileField = {
      id: h.store.nextId("profile_field"),
      type,
      order: fields.length === 0 ? 1 : Math.max(...fields.map((f) => f.order)) + 1,
      name,
      hint,
      field_data: fieldData,
      display_in_profile_summary: input.display_in_profile_summary ?? false,
      required: input.required ?? false,
      editable_by_user: input.editable_by_user ?? true,
      use_for_user_matching: input.use_for_user_matching ?? false,
    };
    putProfileField(h.store, field);
    notifyFields(tx, h);
    return field.id;
  });
}


export async function doUpdateProfileField(h: Hearth, actor: UserRecord, id: number, input: FieldInput): Promise<void> {
  assertAdmin(actor);
  await commit(h, (tx) => {
    const cleared: UserRecord[] = [];
    const field = getProfileField(h.store, id);
    if (!field) throw badRequest(`Field id ${id} not found.`);
    const next = { ...field };
    if (input.name !== undefined) next.name = checkName(h, input.name, id);
    if (input.hint !== undefined) {
      next.hint = input.hint.trim();
      if (next.hint.length > MAX_FIELD_HINT_LENGTH) throw badRequest(`hint is too long (limit: ${MAX_FIELD_HINT_LENGTH} characters)`);
    }
    if (input.field_data !== undefined) {
      next.field_data = checkFieldData(field.type, input.field_data);
      // Zulip's remove_custom_profile_field_value_if_required: a removed choice leaves nobody holding it.
      if (field.type === ProfileFieldType.SELECT) {
        const kept = new Set(Object.keys(JSON.parse(next.field_data) as Record<string, unknown>));
        for (const u of allUsers(h.store)) {
          const held = getProfileValue(h.store, u.id, id);
          if (held && !kept.has(held.value)) {
            removeProfileValue(h.store, u.id, id);
            cleared.push(u);
          }
        }
      }
    }
    if (input.display_in_profile_summary !== undefined) {
      checkSummaryFlag(h, field.type, input.display_in_profile_summary, id);
      next.display_in_profile_summary = input.display_in_profile_summary;
    }
    if (input.required !== undefined) next.required = input.required;
    if (input.editable_by_user !== undefined) next.editable_by_user = input.editable_by_user;
    if (input.use_for_user_matching !== undefined) {
      checkUserMatchingFlag(field.type, input.use_for_user_matching);
      next.use_for_user_matching = input.use_for_user_matching;
    }
    putProfileField(h.store, next);
    notifyFields(tx, h);
    // Clients hold each user's values: the cleared ones go as a null value (Zulip sends none, leaving them stale).
    for (const user of cleared) notifyRealmUser(tx, h, "update", user, { custom_profile_field: { id, value: null } });
  });
}

export async function doDeleteProfileField(h: Hearth, actor: UserRecord, id: number): Promise<void> {
  assertAdmin(actor);
  await commit(h, (tx) => {
    if (!getProfileField(h.store, id)) throw badRequest(`Field id ${id} not found.`);
    removeProfileField(h.store, id, [...allUsers(h.store)].map((u) => u.id));
    notifyFields(tx, h);
  });
}

export async function doReorderProfileFields(h: Hearth, actor: UserRecord, order: number[]): Promise<void> {
  assertAdmin(actor);
  await commit(h, (tx) => {
    const fields = getProfileFields(h.store);
    const ids = new Set(fields.map((f) => f.id));
    if (!isPermutationOf(order, ids)) {
      throw badRequest("Invalid order mapping.");
    }
    order.forEach((id, i) => putProfileField(h.store, { ...getProfileField(h.store, id)!, order: i + 1 }));
    notifyFields(tx, h);
  });
}

/** Validates one value and returns its stored text ("" means remove the value; null asks for that of any field type). */
function checkValue(h: Hearth, field: CustomProfileField, value: unknown): string {
  if (value === null) return "";
  const fail = (msg: string) => badRequest(msg);
  if (field.type === ProfileFieldType.USER) {
    if (!Array.isArray(value) || !value.every((v) => Number.isInteger(v))) throw fail(`${field.name} is not a list`);
    for (const id of value as number[]) {
      const u = getUser(h.store, id);
      if (!u || u.is_system_bot) throw fail(`Invalid user ID: ${id}`);
    }
    return value.length === 0 ? "" : JSON.stringify(value);
  }
  if (typeof value !== "string") throw fail(`${field.name} is not a string`);
  const v = value.trim();
  if (v === "") return "";
  switch (field.type) {
    case ProfileFieldType.SHORT_TEXT:
    case ProfileFieldType.PRONOUNS:
    case ProfileFieldType.EXTERNAL_ACCOUNT:
      if (v.length > MAX_SHORT_VALUE) throw fail(`${field.name} is too long (limit: ${MAX_SHORT_VALUE} characters)`);
      return v;
    case ProfileFieldType.LONG_TEXT:
      if (v.length > MAX_LONG_VALUE) throw fail(`${field.name} is too long (limit: ${MAX_LONG_VALUE} characters)`);
      return v;
    case ProfileFieldType.SELECT:
      if (!Object.hasOwn(JSON.parse(field.field_data), v)) throw fail(`'${v}' is not a valid choice for '${field.name}'.`);
      return v;
    case ProfileFieldType.DATE: {
      const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
      const d = m ? new Date(`${v}T00:00:00Z`) : null;
      if (!m || !d || Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== v) throw fail(`${field.name} is not a date`);
      return v;
    }
    case ProfileFieldType.URL: {
      let ok = false;
      try {
        ok = ["http:", "https:"].includes(new URL(v).protocol);
      } catch {}
      if (!ok) throw fail(`${field.name} is not a URL`);
      return v;
    }
  }
  throw fail("Invalid field type.");
}

export interface ProfileDataChange {
  id: number;
  /** Stored text; "" clears the value. */
  value: string;
}

/**
 * Validates profile values before anything is written. Users edit their own fields
 * when `editable_by_user`; administrators edit anyone's.
 */
export function checkProfileData(h: Hearth, actor: UserRecord, target: UserRecord, data: { id: number; value: unknown }[]): ProfileDataChange[] {
  const editingOther = actor.id !== target.id;
  if (editingOther && (!isAdmin(actor) || actor.is_bot)) throw mustBeAdmin();
  return data.map(({ id, value }) => {
    const field = getProfileField(h.store, id);
    if (!field) throw badRequest(`Field id ${id} not found.`);
    if (!editingOther && !field.editable_by_user && !isAdmin(actor)) {
      throw badRequest("You are not allowed to change this field. Contact an administrator to update it.");
    }
    return { id, value: checkValue(h, field, value) };
  });
}

/** Sets (or, with an empty value, clears) checked profile values. */
export async function doSetProfileData(h: Hearth, target: UserRecord, changes: ProfileDataChange[]): Promise<void> {
  await commit(h, (tx) => {
    writeProfileData(h, target, changes);
    notifyProfileData(tx, h, target, changes);
  });
}

/** Inside a commit: stores checked profile values ("" removes one). */
export function writeProfileData(h: Hearth, target: UserRecord, changes: ProfileDataChange[]): void {
  for (const c of changes) {
    const field = getProfileField(h.store, c.id);
    if (!field) throw badRequest(`Field id ${c.id} not found.`);
    if (c.value === "") removeProfileValue(h.store, target.id, c.id);
    else {
      // Short and long text are Markdown in Zulip: their HTML is stored beside them.
      const markdown = field.type === ProfileFieldType.SHORT_TEXT || field.type === ProfileFieldType.LONG_TEXT;
      putProfileValue(h.store, target.id, c.id, markdown ? { value: c.value, rendered_value: renderDescription(c.value) } : { value: c.value });
    }
  }
}

export function notifyProfileData(tx: Transaction, h: Hearth, target: UserRecord, changes: ProfileDataChange[]): void {
  const current = getProfileData(h.store, target.id);
  for (const c of changes) {
    const stored = current.get(c.id);
    notifyRealmUser(tx, h, "update", target, { custom_profile_field: stored ? { id: c.id, ...stored } : { id: c.id, value: null } });
  }
}
