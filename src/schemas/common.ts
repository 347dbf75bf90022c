import { Type as t } from "@sinclair/typebox";
import type { TProperties, TSchema } from "@sinclair/typebox";

/**
 * Response schemas, written from Zulip's OpenAPI and the product spec. Tests check
 * every response against them; objects stay open (extra fields allowed) because
 * Zulip clients ignore unknown keys, but every documented field is required with
 * its documented type.
 */
export const Nullable = <S extends import("@sinclair/typebox").TSchema>(s: S) => t.Union([s, t.Null()]);

export const SuccessEnvelope = t.Object({
  result: t.Literal("success"),
  msg: t.Literal(""),
  ignored_parameters_unsupported: t.Optional(t.Array(t.String())),
});

export const ErrorEnvelope = t.Object({ result: t.Literal("error"), msg: t.String(), code: t.String() });

export const success = <P extends TProperties>(props: P) => t.Composite([SuccessEnvelope, t.Object(props)]);

/** A group-setting value: a group ID, or anonymous direct members and subgroups. */
export const GroupSettingValue = t.Union([
  t.Integer(),
  t.Object({ direct_members: t.Array(t.Integer()), direct_subgroups: t.Array(t.Integer()) }),
]);

/** Shorthands for the long response and event schemas. */
export const Int = () => t.Integer();
export const Str = () => t.String();
export const Bool = () => t.Boolean();
export const List = <S extends TSchema>(s: S) => t.Array(s);
export const AbsoluteUrl = () => t.String({ pattern: "^https?://" });
