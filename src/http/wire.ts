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

/** Parses `a=1&b=2` text into `into`; later values win, as with Django's QueryDict. */
export function parseUrlEncoded(text: string, into: Map<string, string>): void {
  if (text === "") return;
  for (const pair of text.split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    const name = decodeComponent(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? "" : decodeComponent(pair.slice(eq + 1));
    into.set(name, value);
  }
}

/**
 * Merges query-string and body parameters on every method (zulip-js sends PATCH and
 * DELETE parameters in the query string, other clients in the body).
 */
export async function readRawParams(request: Request, fromBody = true, maxBodyBytes = Infinity): Promise<RawParams> {
  const params: RawParams = { fields: new Map(), files: new Map() };
  const url = request.url;
  const q = url.indexOf("?");
  if (q !== -1) parseUrlEncoded(url.slice(q + 1).split("#")[0], params.fields);

  // A GET without a declared body has none: asking Bun for `request.body` would make a stream for nothing.
  if (!fromBody || (request.method === "GET" && !request.headers.has("content-length") && !request.headers.has("transfer-encoding"))) return params;
  if (request.body === null) return params;
  const contentType = (request.headers.get("content-type") ?? "").toLowerCase();
  const multipart = contentType.startsWith("multipart/form-data");
  // Other body types (JSON, binary) carry no Zulip form parameters: left unread.
  if (!multipart && !contentType.startsWith("application/x-www-form-urlencoded") && contentType !== "") return params;
  // A capped body is read first, up to its cap, and parsed from memory.
  const body = maxBodyBytes === Infinity ? request : new Response((await readBodyUpTo(request, maxBodyBytes)) as BodyInit, { headers: { "content-type": request.headers.get("content-type") ?? "" } });
  if (multipart) {
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
  } else {
    let text: string;
    try {
      text = utf8.decode(await body.arrayBuffer());
    } catch (e) {
      if (e instanceof ApiError) throw e;
      throw badRequest("Malformed request: body is not valid UTF-8 text");
    }
    parseUrlEncoded(text, params.fields);
  }
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
