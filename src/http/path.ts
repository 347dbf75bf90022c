import { badRequest } from "../errors";

/** A `{…_id}` path segment: a positive integer, else Zulip's "Invalid …" error. */
export function pathId(raw: string, what: string): number {
  if (!/^\d{1,15}$/.test(raw)) throw badRequest(`Invalid ${what}`);
  return Number(raw);
}
