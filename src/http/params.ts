import { Kind, type Static, type TSchema, Type as t } from "@sinclair/typebox";
import { Value, type ValueError } from "@sinclair/typebox/value";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { badRequest, missingArgument } from "../errors";
import type { RawParams } from "./wire";

/**
 * Declared API parameters, Zulip style (`typed_endpoint`): each has a TypeBox schema
 * for the decoded value and says how the wire text is decoded:
 * - "string": the raw text is the value (message content, topic names…);
 * - "json": the text is JSON (integers, booleans, lists, objects; Zulip's `Json[...]`);
 * - "jsonOrString": JSON if it parses, else the raw text (Zulip's `to`, which is a
 *   channel ID, a JSON list, or a bare channel name).
 * For JSON parameters the literal `null` counts as absent (clients send it for
 * "no value").
 */
type Decoding = "string" | "json" | "jsonOrString";

export class Param<S extends TSchema = TSchema, Required extends boolean = boolean> {
  constructor(
    readonly schema: S,
    readonly decoding: Decoding,
    readonly required: Required,
    readonly defaultValue: Static<S> | undefined = undefined,
    readonly aliases: readonly string[] = [],
    readonly validate?: (value: Static<S>, name: string) => void,
    readonly nullIsValue = false,
  ) {}

  optional(): Param<S, false> {
    return new Param(this.schema, this.decoding, false, undefined, this.aliases, this.validate, this.nullIsValue);
  }
  /** Absent means `value`; the parsed type is then never undefined. */
  default(value: Static<S>): Param<S, true> {
    return new Param(this.schema, this.decoding, true, value, this.aliases, this.validate, this.nullIsValue);
  }
  /** Legacy names accepted for the same parameter (e.g. `subject` for `topic`). */
  alias(...names: string[]): Param<S, Required> {
    return new Param(this.schema, this.decoding, this.required, this.defaultValue, [...this.aliases, ...names], this.validate, this.nullIsValue);
  }
  /** Extra validation after the type check; throw an ApiError to reject. */
  check(fn: (value: Static<S>, name: string) => void): Param<S, Required> {
    return new Param(this.schema, this.decoding, this.required, this.defaultValue, this.aliases, fn, this.nullIsValue);
  }
  /**
   * JSON `null` is a value here, not "absent" (e.g. `folder_id=null` takes a channel
   * out of its folder); the schema must then accept null.
   */
  nullMeansNull(): Param<S, Required> {
    return new Param(this.schema, this.decoding, this.required, this.defaultValue, this.aliases, this.validate, true);
  }
}

export const param = {
  string: (options?: Parameters<typeof t.String>[0]) => new Param(t.String(options), "string", true),
  // Safe integers only: `1e300` is an integer to JSON, but no client can read it back as one.
  int: () => new Param(t.Integer({ minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }), "json", true),
  bool: () => new Param(t.Boolean(), "json", true),
  json: <S extends TSchema>(schema: S) => new Param(schema, "json", true),
  jsonOrString: <S extends TSchema>(schema: S) => new Param(schema, "jsonOrString", true),
  /** One of fixed strings, sent raw (e.g. `op=add`). */
  oneOf: <const V extends readonly string[]>(values: V) =>
    new Param(t.Union(values.map((v) => t.Literal(v))) as unknown as ReturnType<typeof t.String> & { static: V[number] }, "string", true),
};

export type ParamSpecs = Record<string, Param<any, any>>;
export type ParamValues<P extends ParamSpecs> = {
  [K in keyof P]: P[K] extends Param<infer S, infer R> ? (R extends true ? Static<S> : Static<S> | undefined) : never;
};

export interface ParsedParams<P extends ParamSpecs> {
  values: ParamValues<P>;
  /** Names the client sent that this endpoint does not support. */
  ignored: string[];
}

function describeKind(schema: TSchema): string {
  switch (schema[Kind]) {
    case "Integer":
      return "an integer";
    case "Number":
      return "a number";
    case "Boolean":
      return "a boolean";
    case "String":
      return "a string";
    case "Array":
      return "a list";
    case "Object":
    case "Record":
      return "a dict";
    default:
      return "valid";
  }
}

/** Turns a TypeBox error into Zulip's wording: `user_ids[1] is not an integer`. */
function describeError(name: string, error: ValueError): string {
  const where =
    name +
    error.path
      .split("/")
      .filter(Boolean)
      .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `["${part}"]`))
      .join("");
  const schema = error.schema;
  const kind = schema[Kind];
  if (kind === "String" && typeof error.value === "string") {
    if (schema.maxLength !== undefined && error.value.length > schema.maxLength) {
      return `${where} is too long (limit: ${schema.maxLength} characters)`;
    }
    if (schema.minLength !== undefined && error.value.length < schema.minLength) {
      return `${where} is too short`;
    }
  }
  if ((kind === "Integer" || kind === "Number") && typeof error.value === "number") {
    return `Invalid ${where}`;
  }
  if (kind === "Union" || kind === "Literal") return `Invalid ${where}`;
  if (error.path.split("/").filter(Boolean).length > 0 && kind === "Object") return `${where} is missing a required field`;
  const expected = describeKind(schema);
  return expected === "valid" ? `Invalid ${where}` : `${where} is not ${expected}`;
}

/**
 * Whether `text` could be JSON by its first character (JSON's whitespace, a value's
 * opening). A bare channel name in `to` fails this, and is taken as text without
 * JSON.parse's exception, which cost a send more than the parse itself.
 */
function mayBeJson(text: string): boolean {
  if (text.length === 0) return false;
  const c = text.charCodeAt(0);
  // A word starting with t, f or n is JSON only as a literal: `anchor=newest` would
  // otherwise throw inside JSON.parse on every read of the newest messages.
  if (c === 0x74) return text.startsWith("true");
  if (c === 0x66) return text.startsWith("false");
  if (c === 0x6e) return text.startsWith("null");
  // space \t \n \r { [ " - digits
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x7b || c === 0x5b || c === 0x22 || c === 0x2d || (c >= 0x30 && c <= 0x39);
}

export function decodeParam(name: string, spec: Param, raw: string): unknown {
  if (spec.decoding === "string") return raw;
  if (spec.decoding === "jsonOrString" && !mayBeJson(raw)) return raw;
  try {
    return JSON.parse(raw);
  } catch {
    if (spec.decoding === "jsonOrString") return raw;
    // Zulip also accepts bare words for boolean and integer parameters only as JSON.
    throw badRequest(`Argument "${name}" is not valid JSON.`, { var_name: name });
  }
}

/**
 * TypeBox's compiled checkers, by schema: several times faster than `Value.Check`,
 * and every request checks its parameters (long-polls many times a second).
 */
const compiledChecks = new WeakMap<TSchema, (value: unknown) => boolean>();
function check(schema: TSchema, value: unknown): boolean {
  let compiled = compiledChecks.get(schema);
  if (!compiled) {
    const checker = TypeCompiler.Compile(schema);
    compiledChecks.set(schema, (compiled = (v) => checker.Check(v)));
  }
  return compiled(value);
}

/** An endpoint's specs as a list, and every name (and alias) it accepts: computed once per endpoint, since every request (long-polls many times a second) walks them. */
const compiledSpecs = new WeakMap<ParamSpecs, { entries: [string, Param<any, any>][]; names: Set<string> }>();
function specsOf(specs: ParamSpecs): { entries: [string, Param<any, any>][]; names: Set<string> } {
  let compiled = compiledSpecs.get(specs);
  if (!compiled) {
    const entries = Object.entries(specs) as [string, Param<any, any>][];
    const names = new Set<string>();
    for (const [name, spec] of entries) {
      names.add(name);
      for (const a of spec.aliases) names.add(a);
    }
    compiledSpecs.set(specs, (compiled = { entries, names }));
  }
  return compiled;
}

export function parseParams<P extends ParamSpecs>(specs: P, raw: RawParams, pathParams: string[] = []): ParsedParams<P> {
  const values: Record<string, unknown> = {};
  const { entries, names: known } = specsOf(specs);
  // An endpoint without parameters called without any (most GETs): nothing to parse or report.
  if (entries.length === 0 && raw.fields.size === 0) return { values: values as ParamValues<P>, ignored: [] };
  for (const [name, spec] of entries) {
    let wireName = name;
    let text = raw.fields.get(name);
    for (const a of spec.aliases) {
      if (text !== undefined) break;
      text = raw.fields.get(a);
      wireName = a;
    }
    let value: unknown = text === undefined ? undefined : decodeParam(wireName, spec, text);
    if (value === null && spec.decoding !== "string" && !spec.nullIsValue) value = undefined;
    if (value === undefined) {
      // Defaults that are lists or objects are copied: handlers may change them.
      if (spec.defaultValue !== undefined) value = typeof spec.defaultValue === "object" && spec.defaultValue !== null ? structuredClone(spec.defaultValue) : spec.defaultValue;
      else if (spec.required) throw missingArgument(name);
      values[name] = value;
      continue;
    }
    if (!check(spec.schema, value)) {
      const first = Value.Errors(spec.schema, value).First();
      throw badRequest(first ? describeError(wireName, first) : `Invalid ${wireName}`);
    }
    spec.validate?.(value as never, wireName);
    values[name] = value;
  }
  // Form fields only: uploaded files are read by the endpoints that take them, and
  // Zulip never lists a file here.
  const ignored: string[] = [];
  for (const n of raw.fields.keys()) if (!known.has(n) && !pathParams.includes(n)) ignored.push(n);
  return { values: values as ParamValues<P>, ignored };
}
