/**
 * Zulip's validators (zerver/lib/validator.py) for JSON that clients and services send:
 * each returns the value typed, or throws a ValidationError worded as Zulip's and naming
 * the value as Zulip does (e.g. `poll data["key"] is not a string`). Callers turn it into
 * their own error (a widget's "Widgets: …", a webhook's 400).
 */
export class ValidationError extends Error {}

export type Check<T = unknown> = (value: unknown, name: string) => T;

export const isDict = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export const checkString: Check<string> = (v, name) => {
  if (typeof v !== "string") throw new ValidationError(`${name} is not a string`);
  return v;
};

export const checkBool: Check<boolean> = (v, name) => {
  if (typeof v !== "boolean") throw new ValidationError(`${name} is not a boolean`);
  return v;
};

export const checkList: Check<unknown[]> = (v, name) => {
  if (!Array.isArray(v)) throw new ValidationError(`${name} is not a list`);
  return v;
};

export const checkInt: Check<number> = (v, name) => {
  if (!Number.isInteger(v)) throw new ValidationError(`${name} is not an integer`);
  return v as number;
};

export const checkDictValue: Check<Record<string, unknown>> = (v, name) => {
  if (!isDict(v)) throw new ValidationError(`${name} is not a dict`);
  return v;
};

/**
 * Zulip's check_url (Django's URLValidator): an http, https, ftp or ftps URL whose host
 * is a domain name with a top-level domain, `localhost`, or an IP address.
 */
export const checkUrl: Check<string> = (v, name) => {
  const text = checkString(v, name);
  let url: URL | null = null;
  try {
    url = /\s/.test(text) ? null : new URL(text);
  } catch {
    url = null;
  }
  const host = url?.hostname.replace(/^\[|\]$/g, "") ?? "";
  const validHost = host === "localhost" || /^(\d{1,3}\.){3}\d{1,3}$/.test(host) || host.includes(":") || /\.([a-z]{2,63}|xn--[a-z0-9-]{1,59})\.?$/i.test(host);
  if (!url || !["http:", "https:", "ftp:", "ftps:"].includes(url.protocol) || !validHost) throw new ValidationError(`${name} is not a URL`);
  return text;
};

/** Zulip's check_string_in. */
export const checkStringIn = (allowed: readonly string[]): Check<string> => (v, name) => {
  if (!allowed.includes(checkString(v, name))) throw new ValidationError(`Invalid ${name}`);
  return v as string;
};

/** Zulip's check_int_in. */
export const checkIntIn = (allowed: readonly number[]): Check<number> => (v, name) => {
  if (!allowed.includes(checkInt(v, name))) throw new ValidationError(`Invalid ${name}`);
  return v as number;
};

/** Zulip's check_int_range. */
export const checkIntRange = (low: number, high: number): Check<number> => (v, name) => {
  const n = checkInt(v, name);
  if (n < low) throw new ValidationError(`${name} is too small`);
  if (n > high) throw new ValidationError(`${name} is too large`);
  return n;
};

/** A key a dict must have (check_dict's required keys). */
export function requiredKey(dict: Record<string, unknown>, key: string, name: string): unknown {
  if (!(key in dict)) throw new ValidationError(`${key} key is missing from ${name}`);
  return dict[key];
}

/** Zulip's check_dict (`extraAllowed`) and check_dict_only: the keys given, each passing its check. */
export function checkDict(value: unknown, name: string, fields: Record<string, Check>, extraAllowed: boolean): Record<string, unknown> {
  const dict = checkDictValue(value, name);
  for (const [key, check] of Object.entries(fields)) check(requiredKey(dict, key, name), `${name}["${key}"]`);
  if (!extraAllowed) {
    const extra = Object.keys(dict).filter((key) => !(key in fields));
    if (extra.length > 0) throw new ValidationError(`Unexpected arguments: ${extra.join(", ")}`);
  }
  return dict;
}
