import { isIP } from "node:net";
import type { Hearth } from "../context";

/** Proxies trusted by default: one on the same machine (nginx or Caddy in front of Hearth). */
export const DEFAULT_TRUSTED_PROXIES = ["127.0.0.1", "::1"];

/** The trusted proxies from HEARTH_TRUSTED_PROXIES (comma-separated addresses; empty: none), else the default. */
export function trustedProxiesFromEnv(value = process.env.HEARTH_TRUSTED_PROXIES): string[] {
  if (value === undefined) return DEFAULT_TRUSTED_PROXIES;
  return value
    .split(",")
    .map((address) => plainAddress(address.trim()))
    .filter((address) => isIP(address) !== 0);
}

/** An IPv4 address as itself, also when written IPv4-mapped (`::ffff:10.0.0.1`, as dual-stack sockets report it). */
function plainAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1] : address;
}

/**
 * The client's address, for the limits on failed authentications. Behind a reverse
 * proxy every request comes from the proxy, so one client's bad keys would lock
 * everyone out: a request from a trusted proxy is taken to come from the last address
 * its `X-Forwarded-For` names that is not itself a trusted proxy (the first hop no
 * trusted proxy vouches for; anything left of it a client could have written). From
 * anywhere else the header is ignored.
 */
export function clientAddress(h: Hearth, request: Request, server: { requestIP(request: Request): { address: string } | null } | null | undefined): string {
  const peer = server?.requestIP(request)?.address;
  if (!peer) return "unknown";
  const trusted = h.config.trustedProxies ?? DEFAULT_TRUSTED_PROXIES;
  const isTrusted = (address: string) => trusted.includes(plainAddress(address));
  if (!isTrusted(peer)) return plainAddress(peer);
  const forwarded = request.headers.get("x-forwarded-for");
  if (!forwarded) return plainAddress(peer);
  const hops = forwarded.split(",").map((hop) => plainAddress(hop.trim()));
  for (let i = hops.length - 1; i >= 0; i--) {
    // A malformed hop is where trust ends: the request is counted against the proxy's address.
    if (isIP(hops[i]) === 0) return plainAddress(peer);
    if (!isTrusted(hops[i])) return hops[i];
  }
  return hops[0];
}

/**
 * Whether the browser reached Hearth over HTTPS, for the `Secure` flag of cookies:
 * the organization's external URL says so, or the request itself came over TLS, or a
 * trusted proxy (the same list as for addresses) reports it in X-Forwarded-Proto.
 */
export function requestIsHttps(h: Hearth, request: Request, server: { requestIP(request: Request): { address: string } | null } | null | undefined): boolean {
  if (h.realmUrl().startsWith("https:") || request.url.startsWith("https:")) return true;
  const proto = request.headers.get("x-forwarded-proto");
  if (!proto) return false;
  const peer = server?.requestIP(request)?.address;
  const trusted = h.config.trustedProxies ?? DEFAULT_TRUSTED_PROXIES;
  return peer !== undefined && trusted.includes(plainAddress(peer)) && proto.split(",")[0].trim().toLowerCase() === "https";
}
