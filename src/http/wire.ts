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
export async function readRawParams(request: Request, fromBody = true): Promise<RawParams> {
  const params: RawParams = { fields: new Map(), files: new Map() };
  const url = request.url;
  const q = url.indexOf("?");
  if (q !== -1) parseUrlEncoded(url.slice(q + 1).split("#")[0], params.fields);

  if (request.body === null || !fromBody) return params;
  const contentType = (request.headers.get("content-type") ?? "").toLowerCase();
  if (contentType.startsWith("multipart/form-data")) {
    let form: FormData;
    try {
      form = await request.formData();
    } catch {
      throw badRequest("Malformed multipart request body");
    }
    for (const [name, value] of form.entries()) {
      if (typeof value === "string") params.fields.set(name, value);
      else params.files.set(name, value as File);
    }
  } else if (contentType.startsWith("application/x-www-form-urlencoded") || contentType === "") {
    let text: string;
    try {
      text = utf8.decode(await request.arrayBuffer());
    } catch (e) {
      if (e instanceof ApiError) throw e;
      throw badRequest("Malformed request: body is not valid UTF-8 text");
    }
    parseUrlEncoded(text, params.fields);
  }
  // Other body types (JSON, binary) carry no Zulip form parameters.
  return params;
}
