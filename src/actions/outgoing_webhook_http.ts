import { lookup as lookupCallback, type LookupAddress } from "node:dns";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type LookupFunction } from "node:net";

/**
 * The HTTP side of an outgoing-webhook call: one POST to a bot's URL, bounded in what
 * it reads, and refused for internal addresses unless the server allows them.
 */

/**
 * What is read of a service's answer: a reply is at most a message (10,000 characters),
 * so a bigger answer only matters as far as the owner's notice quotes it, and a server
 * sending without end must not fill this one's memory. Beyond it the answer is cut
 * (a JSON answer cut short fails as invalid JSON).
 */
const MAX_RESPONSE_BYTES = 1024 * 1024;

/** A call's host is, or resolved when the connection was made to, an internal address (see connectionLookup). */
export class PrivateNetworkRefused extends Error {}

/**
 * The resolver a call's connection uses: it refuses a name that resolves to an
 * internal address, at the moment of connecting, unless private networks are allowed:
 * checking the name before the request would not do, as it could resolve elsewhere by
 * the time the request connects (DNS rebinding). Node's resolver signature, as
 * node:http's `lookup` option takes it. An address written in the URL is never looked
 * up (postOnce checks it with isInternalAddressUrl).
 */
export function connectionLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    const family = options?.family === "IPv4" ? 4 : options?.family === "IPv6" ? 6 : (options?.family ?? 0);
    lookupCallback(hostname, { all: true, family }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, "", 0);
      if (!allowPrivate && addresses.some(isInternalAddress)) return callback(new PrivateNetworkRefused(`${hostname} resolves to an internal address`), "", 0);
      if (options?.all) (callback as unknown as (error: null, all: LookupAddress[]) => void)(null, addresses);
      else callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/**
 * One POST to a bot's URL (node:http, for the connection-time address check of
 * connectionLookup): the status and at most MAX_RESPONSE_BYTES of the answer; the rest
 * is not read. Redirects are not followed.
 */
export function postOnce(url: string, { headers, body }: { headers: Record<string, string>; body: string }, signal: AbortSignal, allowPrivate: boolean): Promise<{ status: number; body: Uint8Array }> {
  return new Promise((resolve, reject) => {
    if (!allowPrivate && isInternalAddressUrl(url)) return reject(new PrivateNetworkRefused(`${url} is an internal address`));
    const target = new URL(url);
    const send = target.protocol === "https:" ? httpsRequest : httpRequest;
    const options = { method: "POST", headers: { ...headers, "content-length": String(Buffer.byteLength(body)) }, lookup: connectionLookup(allowPrivate), signal };
    const request = send(target, options, (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let finished = false;
      const finish = () => {
        if (finished) return;
        finished = true;
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) });
      };
      response.on("data", (chunk: Buffer) => {
        if (finished) return;
        chunks.push(chunk.subarray(0, MAX_RESPONSE_BYTES - size));
        size += Math.min(chunk.length, MAX_RESPONSE_BYTES - size);
        if (size < MAX_RESPONSE_BYTES) return;
        finish();
        response.destroy();
      });
      response.on("end", finish);
      response.on("error", (error) => (finished ? undefined : reject(error)));
      // Cut off before its end (a timeout, the server going away): not an answer.
      response.on("close", () => (finished ? undefined : reject(new Error("The connection closed before the answer ended"))));
    });
    request.on("error", reject);
    request.end(body);
  });
}

/**
 * Whether the URL's host is an address (not a name) that is loopback, private,
 * link-local or otherwise internal: a bot's URL must not let whoever may create bots
 * make the server probe its own network (Zulip sends these calls through Smokescreen,
 * which refuses such addresses). Names are checked as they resolve (connectionLookup).
 */
export function isInternalAddressUrl(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  const family = isIP(host);
  return family !== 0 && isInternalAddress({ address: host, family });
}

function isInternalAddress({ address, family }: { address: string; family: number }): boolean {
  return family === 6 ? isInternalIpv6(address) : isInternalIpv4(address);
}

function isInternalIpv4(address: string): boolean {
  const [a, b] = address.split(".").map(Number);
  return (
    a === 0 || a === 10 || a === 127 || (a === 100 && b >= 64 && b <= 127) || (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 198 && (b === 18 || b === 19)) || a >= 224
  );
}

function isInternalIpv6(address: string): boolean {
  const words = ipv6Words(address.toLowerCase());
  if (!words) return true; // Not an address this check understands: refused rather than risked.
  const [w0, w1, w2, w3, w4, w5, w6, w7] = words;
  const embeddedIpv4 = () => `${w6 >> 8}.${w6 & 0xff}.${w7 >> 8}.${w7 & 0xff}`;
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible, :: and ::1 among them), 64:ff9b::a.b.c.d (NAT64).
  if (w0 === 0 && w1 === 0 && w2 === 0 && w3 === 0 && w4 === 0 && (w5 === 0xffff || w5 === 0)) return w5 === 0 && w6 === 0 ? true : isInternalIpv4(embeddedIpv4());
  if (w0 === 0x64 && w1 === 0xff9b && w2 === 0 && w3 === 0 && w4 === 0 && w5 === 0) return isInternalIpv4(embeddedIpv4());
  // fc00::/7 unique local, fe80::/10 link-local, ff00::/8 multicast.
  return (w0 & 0xfe00) === 0xfc00 || (w0 & 0xffc0) === 0xfe80 || (w0 & 0xff00) === 0xff00;
}

/** The eight 16-bit words of an IPv6 address (`::` expanded, a trailing dotted IPv4 converted), or null. */
function ipv6Words(address: string): number[] | null {
  let text = address.split("%")[0];
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const words = [...head, ...Array(halves.length === 2 ? missing : 0).fill("0"), ...tail].map((w) => (/^[0-9a-f]{1,4}$/.test(w) ? parseInt(w, 16) : NaN));
  return words.some(Number.isNaN) ? null : words;
}
