import { badRequest } from "../errors";

/** A `{…_id}` path segment: a positive integer, else Zulip's "Invalid …" error. */
export function pathId(raw: string, what: string): number {
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw badRequest(`Invalid ${what}`);
  return Number(raw);
}

/**
 * A wildcard path tail (`/navigation_views/*`), which the router leaves encoded;
 * malformed percent-encoding is a 400, never a URIError.
 */
export function decodePathTail(raw: string, what: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw badRequest(`Invalid ${what}`);
  }
}
