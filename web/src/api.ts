/**
 * The client's only way to the server: the public API under /json/, authenticated by
 * the session cookie, with the CSRF token (the hearth_csrf cookie, which script may
 * read and other sites cannot) in the X-CSRFToken header of every call that changes
 * something.
 */

export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export function csrfToken(): string {
  const match = /(?:^|;\s*)hearth_csrf=([^;]*)/.exec(document.cookie);
  return match ? decodeURIComponent(match[1]) : "";
}

/** Values as Zulip's clients send them: strings as they are, anything else as JSON. */
function encode(params: Record<string, unknown>): URLSearchParams {
  const body = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    body.set(key, typeof value === "string" ? value : JSON.stringify(value));
  }
  return body;
}

/** The session ended (logged out elsewhere, expired, password changed): back to the login page. */
export function toLogin(): void {
  location.assign(`/login?next=${encodeURIComponent("/" + location.hash)}`);
}

export async function api<T = any>(method: string, path: string, params: Record<string, unknown> = {}, signal?: AbortSignal): Promise<T> {
  const query = method === "GET" || method === "DELETE";
  const body = encode(params);
  const url = `/json${path}${query && [...body.keys()].length ? `?${body}` : ""}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: method === "GET" ? {} : { "X-CSRFToken": csrfToken() },
      body: query ? undefined : body,
      credentials: "same-origin",
      signal,
    });
  } catch (e: any) {
    if (e?.name === "AbortError") throw e;
    throw new ApiError("Cannot reach the server.", "NETWORK", 0);
  }
  let data: any = null;
  try {
    data = await response.json();
  } catch {
    // Not JSON: a proxy's error page, say.
  }
  if (response.status === 401) {
    toLogin();
    throw new ApiError("Your session has ended.", "UNAUTHORIZED", 401);
  }
  if (!response.ok || data?.result !== "success") {
    throw new ApiError(data?.msg || `The server answered ${response.status}.`, data?.code || "SERVER_ERROR", response.status);
  }
  return data as T;
}

export const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));
