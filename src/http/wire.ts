import { ApiError, badRequest } from "../errors";

/**
 * Zulip's wire format, read without interpretation: every parameter stays the raw
 * string the client sent (lists and objects are JSON text inside a field), so a
 * message whose text looks like JSON is never decoded by accident. Only the
 * parameter parser decides, per declared parameter, whether to JSON-decode.
 */
export interface RawParams {
  fields: Map<string, string>;
  files: Map<string, File>;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function decodeComponent(text: string): string {
  // Most names and many values need no decoding (queue IDs, numbers, booleans).
  if (text.indexOf("%") === -1 && text.indexOf("+") === -1) return text;
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    throw badRequest("Malformed request: parameters are not valid UTF-8 text");
  }
}

/**
 * Parses `a=1&b=2` text into `into`; later values win, as with Django's QueryDict.
 * One scan, without splitting: a send's body passes here, and a long-poll's query.
 */
export function parseUrlEncoded(text: string, into: Map<string, string>): void {
  const length = text.length;
  let eq = text.indexOf("="); // the next "=" at or after `at` (-1: none left), kept so the scan stays linear
  for (let at = 0; at < length; ) {
    let end = text.indexOf("&", at);
    if (end === -1) end = length;
    if (end > at) {
      if (eq !== -1 && eq < at) eq = text.indexOf("=", at);
      if (eq === -1 || eq >= end) into.set(decodeComponent(text.slice(at, end)), "");
      else into.set(decodeComponent(text.slice(at, eq)), decodeComponent(text.slice(eq + 1, end)));
    }
    at = end + 1;
  }
}

/**
 * Merges query-string and body parameters on every method (zulip-js sends PATCH and
 * DELETE parameters in the query string, other clients in the body). A request whose
 * parameters are all in its URL is answered without a promise (most GETs): the route
 * then answers synchronously.
 */
export function readRawParams(request: Request, fromBody = true, maxBodyBytes = Infinity): RawParams | Promise<RawParams> {
  const params: RawParams = { fields: new Map(), files: new Map() };
  const url = request.url;
  const q = url.indexOf("?");
  if (q !== -1) {
    const hash = url.indexOf("#", q);
    parseUrlEncoded(hash === -1 ? url.slice(q + 1) : url.slice(q + 1, hash), params.fields);
  }
  // Bun's server hands a GET no body, even one sent with a length or chunked (a
  // Request cannot be made with one either): nothing to ask Bun for, not even headers.
  if (!fromBody || request.method === "GET") return params;
  return readBodyParams(request, params, maxBodyBytes);
}

async function readBodyParams(request: Request, params: RawParams, maxBodyBytes: number): Promise<RawParams> {
  const declaredType = request.headers.get("content-type") ?? "";
  const contentType = declaredType.toLowerCase();
  const multipart = contentType.startsWith("multipart/form-data");
  // Other body types (JSON, binary) carry no Zulip form parameters: left unread.
  if (!multipart && !contentType.startsWith("application/x-www-form-urlencoded") && contentType !== "") return params;
  if (multipart) {
    if (request.body === null) return params;
    // A capped body is read first, up to its cap, and parsed from memory.
    const body = maxBodyBytes === Infinity ? request : new Response((await readBodyUpTo(request, maxBodyBytes)) as BodyInit, { headers: { "content-type": declaredType } });
    let form: FormData;
    try {
      form = await body.formData();
    } catch {
      throw badRequest("Malformed multipart request body");
    }
    for (const [name, value] of form.entries()) {
      if (typeof value === "string") params.fields.set(name, value);
      else params.files.set(name, value as File);
    }
    return params;
  }
  // Read whole without `request.body`, whose stream Bun makes only when asked: no body reads as empty.
  const bytes = maxBodyBytes === Infinity ? await request.arrayBuffer() : await readBodyUpTo(request, maxBodyBytes);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw badRequest("Malformed request: body is not valid UTF-8 text");
  }
  parseUrlEncoded(text, params.fields);
  return params;
}

/** Over a request's body cap: what Zulip's nginx answers (413), as an API error. */
const bodyTooLarge = () => new ApiError("Request body too large", "BAD_REQUEST", 413);

/**
 * A request's body, refused (bodyTooLarge) past `limit` bytes: the declared length is
 * checked first, and a chunked body is read only up to the limit. Without it, any
 * client, signed in or not, could make the server hold 64 MiB (Bun's cap) per request.
 */
export async function readBodyUpTo(request: Request, limit: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && !(Number(declared) <= limit)) throw bodyTooLarge();
  if (!request.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw bodyTooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
