import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { PASSWORD, expectError, expectSuccess, readResponse, startTestServer, type TestServer } from "../kit";
import { CookieSession } from "./session_kit";
import { sessionUserOf } from "../../src/auth/session";

// Every sign-in hashes a password (argon2, deliberately slow): on a busy machine a test takes seconds.
setDefaultTimeout(30_000);

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ env: { HEARTH_LOGIN_FAILURES_PER_USER: "3" } });
});
afterAll(() => s.stop());

const setCookieLines = (res: Response) => res.headers.getSetCookie();
const cookieLine = (res: Response, name: string) => setCookieLines(res).find((l) => l.startsWith(`${name}=`)) ?? "";
const attributes = (line: string) => line.split(";").slice(1).map((a) => a.trim().toLowerCase());

describe("GET /login", () => {
  test("a form without script, with the page security headers, keeping ?next= escaped", async () => {
    const res = await fetch(`${s.url}/login?next=${encodeURIComponent('/admin/?a="><b>')}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const csp = res.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("referrer-policy")).toBeTruthy();
    const html = await res.text();
    expect(html).toContain('<form method="post" action="/login">');
    expect(html).toContain('name="username"');
    expect(html).toContain('type="password"');
    expect(html).not.toContain("<script");
    expect(html).not.toContain("<b>");
    // The next path survives, as text the browser gives back unchanged.
    const next = /name="next" value="([^"]*)"/.exec(html)![1];
    expect(next.startsWith("/admin/?a=")).toBe(true);
    expect(next).not.toContain('"');
    // Without a mail server there is no reset email to offer.
    expect(html).not.toContain('href="/accounts/password/reset/"');
  });

  test("its stylesheet is served from the site", async () => {
    const res = await fetch(`${s.url}/static/login.css`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("main.login");
  });
});

describe("POST /login", () => {
  test("the right password sets the session and CSRF cookies and goes to next", async () => {
    const browser = new CookieSession(s.url);
    const res = await browser.login(s.users.hamlet.email, PASSWORD, "/admin/");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/admin/");
    const session = attributes(cookieLine(res, "hearth_session"));
    expect(session).toContain("httponly");
    expect(session).toContain("samesite=lax");
    expect(session).toContain("path=/");
    expect(session).not.toContain("secure");
    const csrf = attributes(cookieLine(res, "hearth_csrf"));
    expect(csrf).not.toContain("httponly");
    expect(csrf).toContain("samesite=lax");
    expect(csrf).toContain("path=/");
    expect(browser.csrfToken!.length).toBeGreaterThanOrEqual(32);
    // Signed in, /login sends the browser on.
    const again = await browser.fetch("/login?next=/x");
    expect(again.status).toBe(303);
    expect(again.headers.get("location")).toBe("/x");
  });

  test("cookies are Secure when a trusted proxy says the browser came over HTTPS", async () => {
    const browser = new CookieSession(s.url);
    const res = await browser.login(s.users.hamlet.email, PASSWORD, undefined, { "x-forwarded-proto": "https" });
    expect(res.status).toBe(303);
    expect(attributes(cookieLine(res, "hearth_session"))).toContain("secure");
    expect(attributes(cookieLine(res, "hearth_csrf"))).toContain("secure");
  });

  test("next is only ever a path on this site", async () => {
    for (const [next, expected] of [
      ["//evil.example/x", "/"],
      ["https://evil.example/", "/"],
      ["/\\evil.example", "/"],
      ["javascript:alert(1)", "/"],
      ["", "/"],
      ["/#narrow/channel/1-general", "/#narrow/channel/1-general"],
      ["/admin/", "/admin/"],
    ]) {
      const res = await new CookieSession(s.url).login(s.users.hamlet.email, PASSWORD, next);
      expect({ next, location: res.headers.get("location") }).toEqual({ next, location: expected });
    }
  });

  test("a wrong password shows the page again with a readable error, status 401, and no cookie", async () => {
    const browser = new CookieSession(s.url);
    const res = await browser.login("<i>nobody</i>@zulip.test", "wrong", "/admin/");
    expect(res.status).toBe(401);
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(setCookieLines(res)).toEqual([]);
    const html = await res.text();
    expect(html).toContain("Your username or password is incorrect");
    expect(html).toContain("&lt;i&gt;nobody&lt;/i&gt;@zulip.test");
    expect(html).not.toContain("<i>");
    expect(html).toContain('name="next" value="/admin/"');
  });

  test("a form posted from another site is refused (login CSRF)", async () => {
    const crossSite: Record<string, string>[] = [{ origin: "http://evil.example" }, { origin: "null" }, { "sec-fetch-site": "cross-site" }];
    for (const headers of crossSite) {
      const res = await new CookieSession(s.url).login(s.users.hamlet.email, PASSWORD, "/", headers);
      expect(res.status).toBe(403);
      expect(setCookieLines(res)).toEqual([]);
    }
    const sameOrigin = await new CookieSession(s.url).login(s.users.hamlet.email, PASSWORD, "/", { origin: s.url, "sec-fetch-site": "same-origin" });
    expect(sameOrigin.status).toBe(303);
  });

  test("failures count against the same limit as fetch_api_key, both ways", async () => {
    const email = "limited@zulip.test";
    expectSuccess(await s.as("desdemona").post("/users", { email, password: "a long enough password", full_name: "Limited" }));
    // Two wrong passwords through the API, one through the page: the account's 3 are used up.
    expectError(await s.anonymous().post("/fetch_api_key", { username: email, password: "wrong" }), 401, "AUTHENTICATION_FAILED");
    expectError(await s.anonymous().post("/fetch_api_key", { username: email, password: "wrong" }), 401, "AUTHENTICATION_FAILED");
    expect((await new CookieSession(s.url).login(email, "wrong")).status).toBe(401);
    // Now even the right password is refused on the page (429, with Retry-After) and by the API.
    const limited = await new CookieSession(s.url).login(email, "a long enough password");
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(setCookieLines(limited)).toEqual([]);
    expectError(await s.anonymous().post("/fetch_api_key", { username: email, password: "a long enough password" }), 429, "RATE_LIMIT_HIT");
  });
});

describe("/json/ with the session cookie", () => {
  test("serves every API route with the same answers as /api/v1", async () => {
    const browser = new CookieSession(s.url);
    await browser.loginOk(s.users.hamlet.email, PASSWORD);
    const viaJson = expectSuccess(await browser.json("GET", "/users/me"));
    const viaApi = expectSuccess(await s.as("hamlet").get("/users/me"));
    expect(viaJson).toEqual(viaApi);
    // A path parameter and query parameters too.
    const user = expectSuccess(await browser.json("GET", `/users/${s.users.iago.id}`, { include_custom_profile_fields: true }));
    expect(user.user.user_id).toBe(s.users.iago.id);
  });

  test("a write needs X-CSRFToken equal to the session's token", async () => {
    const browser = new CookieSession(s.url);
    await browser.loginOk(s.users.hamlet.email, PASSWORD);
    const csrfFailed = { result: "error", msg: "CSRF verification failed.", code: "CSRF_FAILED" };
    const missing = await browser.json("POST", "/users/me/status", { status_text: "no token" }, false);
    expect({ status: missing.status, body: missing.body }).toEqual({ status: 403, body: csrfFailed });
    const wrong = await browser.json("POST", "/users/me/status", { status_text: "wrong token" }, "x".repeat(32));
    expect({ status: wrong.status, body: wrong.body }).toEqual({ status: 403, body: csrfFailed });
    // Another session's token is not this one's.
    const other = new CookieSession(s.url);
    await other.loginOk(s.users.hamlet.email, PASSWORD);
    expect((await browser.json("POST", "/users/me/status", { status_text: "other token" }, other.csrfToken!)).status).toBe(403);
    // Nothing was written.
    const before = expectSuccess(await s.as("hamlet").get(`/users/${s.users.hamlet.id}/status`));
    expect(before.status.status_text).toBeUndefined();
    expectSuccess(await browser.json("POST", "/users/me/status", { status_text: "with the token" }));
    const after = expectSuccess(await s.as("hamlet").get(`/users/${s.users.hamlet.id}/status`));
    expect(after.status.status_text).toBe("with the token");
  });

  test("without a session: 401, also with a valid Basic header; /api/v1 ignores the cookie", async () => {
    const unauthorized = { result: "error", msg: "Not logged in: API authentication or user session required", code: "UNAUTHORIZED" };
    const none = await readResponse(await fetch(`${s.url}/json/users/me`));
    expect({ status: none.status, body: none.body }).toEqual({ status: 401, body: unauthorized });
    // A browser must not pop up its Basic dialog over a page's call.
    expect(none.headers.get("www-authenticate") ?? "").not.toMatch(/basic/i);
    const hamlet = s.users.hamlet;
    const basic = "Basic " + Buffer.from(`${hamlet.email}:${hamlet.apiKey}`).toString("base64");
    const withBasic = await readResponse(await fetch(`${s.url}/json/users/me`, { headers: { authorization: basic } }));
    expect({ status: withBasic.status, body: withBasic.body }).toEqual({ status: 401, body: unauthorized });
    const bogus = await readResponse(await fetch(`${s.url}/json/users/me`, { headers: { cookie: "hearth_session=not-a-session" } }));
    expect(bogus.status).toBe(401);
    const browser = new CookieSession(s.url);
    await browser.loginOk(hamlet.email, PASSWORD);
    const apiWithCookie = await readResponse(await browser.fetch("/api/v1/users/me"));
    expect(apiWithCookie.status).toBe(401);
  });

  test("sessionUserOf finds the signed-in user of a request", async () => {
    const browser = new CookieSession(s.url);
    await browser.loginOk(s.users.hamlet.email, PASSWORD);
    const h = s.server.h;
    expect(sessionUserOf(h, new Request(`${s.url}/`, { headers: { cookie: browser.cookieHeader() } }))?.id).toBe(s.users.hamlet.id);
    expect(sessionUserOf(h, new Request(`${s.url}/`))).toBeNull();
    expect(sessionUserOf(h, new Request(`${s.url}/`, { headers: { cookie: "hearth_session=nope" } }))).toBeNull();
  });
});

describe("POST /logout", () => {
  test("needs the CSRF token, then revokes the session and clears both cookies", async () => {
    const browser = new CookieSession(s.url);
    await browser.loginOk(s.users.hamlet.email, PASSWORD);
    const refused = await browser.fetch("/logout", { method: "POST" });
    expect(refused.status).toBe(403);
    expectSuccess(await browser.json("GET", "/users/me"));
    const saved = browser.cookieHeader();
    const res = await browser.fetch("/logout", { method: "POST", headers: { "x-csrftoken": browser.csrfToken! } });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/login");
    for (const name of ["hearth_session", "hearth_csrf"]) expect(attributes(cookieLine(res, name))).toContain("max-age=0");
    expect(browser.cookies.size).toBe(0);
    // The old cookie no longer opens anything.
    const after = await readResponse(await fetch(`${s.url}/json/users/me`, { headers: { cookie: saved } }));
    expect(after.status).toBe(401);
  });

  test("a form's csrf_token field does too", async () => {
    const browser = new CookieSession(s.url);
    await browser.loginOk(s.users.hamlet.email, PASSWORD);
    const form = new URLSearchParams({ csrf_token: browser.csrfToken! }).toString();
    const res = await browser.fetch("/logout", { method: "POST", body: form, headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(res.status).toBe(303);
    expect((await browser.json("GET", "/users/me")).status).toBe(401);
  });
});
