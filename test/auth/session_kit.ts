import { expect } from "bun:test";
import { readResponse, type ApiResponse, type Params, encodeValue } from "../kit";

/**
 * A browser's sign-in, by hand: POST /login as a form, the cookies kept from its
 * Set-Cookie headers and sent back on every request, the CSRF token read from the
 * `hearth_csrf` cookie as the page's script would.
 */
export class CookieSession {
  readonly cookies = new Map<string, string>();

  constructor(readonly baseUrl: string) {}

  get csrfToken(): string | undefined {
    return this.cookies.get("hearth_csrf");
  }

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  /** Keeps the cookies of a response (a Max-Age=0 one deletes). */
  absorb(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";").map((p) => p.trim());
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq);
      if (attributes.some((a) => /^max-age=0$/i.test(a))) this.cookies.delete(name);
      else this.cookies.set(name, pair.slice(eq + 1));
    }
  }

  /** A raw request with the cookies (and nothing else unless given). */
  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0 && !headers.has("cookie")) headers.set("cookie", this.cookieHeader());
    const res = await fetch(this.baseUrl + path, { ...init, headers, redirect: "manual" });
    this.absorb(res);
    return res;
  }

  /** POST /login as a form; the response (303 on success, the page again on failure). */
  login(username: string, password: string, next?: string, headers: Record<string, string> = {}): Promise<Response> {
    const form = new URLSearchParams({ username, password, ...(next === undefined ? {} : { next }) });
    return this.fetch("/login", { method: "POST", body: form.toString(), headers: { "content-type": "application/x-www-form-urlencoded", ...headers } });
  }

  async loginOk(username: string, password: string): Promise<void> {
    const res = await this.login(username, password);
    expect(res.status).toBe(303);
    expect(this.cookies.get("hearth_session")).toBeTruthy();
  }

  /** A /json/ call, with X-CSRFToken unless `csrf` is false (or another token). */
  async json(method: string, path: string, params: Params = {}, csrf: boolean | string = true): Promise<ApiResponse> {
    const url = new URL(this.baseUrl + "/json" + path);
    const headers: Record<string, string> = {};
    if (csrf !== false) headers["x-csrftoken"] = csrf === true ? (this.csrfToken ?? "") : csrf;
    let body: string | undefined;
    const entries = Object.entries(params);
    if (method === "GET") for (const [k, v] of entries) url.searchParams.set(k, encodeValue(v));
    else {
      body = new URLSearchParams(entries.map(([k, v]) => [k, encodeValue(v)])).toString();
      headers["content-type"] = "application/x-www-form-urlencoded";
    }
    const res = await this.fetch(url.pathname + url.search, { method, headers, body });
    return readResponse(res);
  }
}
