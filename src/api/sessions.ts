import { Elysia } from "elysia";
import type { Server } from "bun";
import type { Hearth, UserRecord } from "../context";
import { ApiError } from "../errors";
import { ApiRoutes, errorResponse } from "../http/route";
import { readRawParams } from "../http/wire";
import { clientAddress, requestIsHttps } from "../http/client_address";
import { htmlPage } from "../http/pages";
import { checkPasswordLogin } from "../auth/login";
import { CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE, csrfFailed, csrfTokenMatches, sessionIdleMs, sessionOf, sessionUserOf } from "../auth/session";
import { doCreateSession, doRevokeOwnSession, doRevokeSession } from "../actions/sessions";
import { doRecordFirstLogin } from "../actions/users";
import { getSessionViews } from "../views/sessions";
import { realmName } from "../views/realm";
import { escapeHtml } from "../lib/text";

/** A login form is small; anything larger is not one. */
const FORM_BYTES = 64 * 1024;
/**
 * How long the browser keeps the cookies: 400 days, the most browsers allow. The
 * server's idle expiry (serve --session-idle) is what ends a session; a cookie that
 * outlives its session is refused like any unknown one.
 */
const COOKIE_MAX_AGE = 400 * 86400;

/**
 * Where to go after signing in: a path on this site (one leading `/`, not `//` or
 * `/\`, which browsers read as another host), else `/`.
 */
export function safeNextPath(next: string | undefined | null): string {
  if (!next || !next.startsWith("/") || next.startsWith("//") || next.startsWith("/\\") || /[\u0000-\u001f\u007f\\]/.test(next)) return "/";
  try {
    const url = new URL(next, "http://hearth.invalid");
    if (url.origin !== "http://hearth.invalid") return "/";
    return url.pathname + url.search + url.hash;
  } catch {
    return "/";
  }
}

/**
 * Login CSRF: a form POST from another site would sign the browser into the
 * attacker's account. Browsers send Origin (and Sec-Fetch-Site) with every POST; one
 * naming another origin is refused. A request without either (curl, a test) cannot
 * come from a cross-site page.
 */
export function fromThisSite(h: Hearth, request: Request): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none") return false;
  const origin = request.headers.get("origin");
  if (origin === null) return true;
  // A page with `Referrer-Policy: no-referrer` (the form pages) posts `Origin: null`;
  // then only the browser's Sec-Fetch-Site can say the form was this site's.
  if (origin === "null") return site === "same-origin";
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  return url.host === request.headers.get("host") || url.origin === new URL(h.realmUrl()).origin;
}

function cookie(name: string, value: string, options: { httpOnly: boolean; secure: boolean; maxAge: number }): string {
  return [`${name}=${value}`, "Path=/", "SameSite=Lax", `Max-Age=${options.maxAge}`, options.httpOnly ? "HttpOnly" : "", options.secure ? "Secure" : ""]
    .filter(Boolean)
    .join("; ");
}

function loginPage(h: Hearth, form: { username?: string; next: string; error?: string }): string {
  const title = `Sign in · ${realmName(h) ?? "Hearth"}`;
  const error = form.error ? `<p class="error" role="alert">${escapeHtml(form.error)}</p>` : "";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="/static/hearth-icon.svg">
<link rel="stylesheet" href="/static/login.css">
</head>
<body>
<main class="login">
<h1><img src="/static/hearth-icon.svg" alt="" width="32" height="32"> ${escapeHtml(realmName(h) ?? "Hearth")}</h1>
${error}
<form method="post" action="/login">
<input type="hidden" name="next" value="${escapeHtml(form.next)}">
<label for="username">Email</label>
<input id="username" name="username" type="email" autocomplete="username" required autofocus value="${escapeHtml(form.username ?? "")}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>
${h.email.mailer ? `<p class="aside"><a href="/accounts/password/reset/">Forgot your password?</a></p>` : `<p class="aside">Forgot your password? Ask whoever runs this server: they can set a new one (<code>hearth set-password</code>).</p>`}
</main>
</body>
</html>
`;
}

/**
 * A new browser session for `user` (signed in by a password, or by the account just
 * made from an invitation): its two cookies, session and CSRF token.
 */
export async function startSessionCookies(h: Hearth, user: UserRecord, request: Request, server: Server<unknown> | null): Promise<string[]> {
  const ip = clientAddress(h, request, server);
  const { secret, session } = await doCreateSession(h, user, { userAgent: request.headers.get("user-agent") ?? "", ip }, sessionIdleMs(h));
  const secure = requestIsHttps(h, request, server);
  return [
    cookie(SESSION_COOKIE, secret, { httpOnly: true, secure, maxAge: COOKIE_MAX_AGE }),
    cookie(CSRF_COOKIE, session.csrf_token, { httpOnly: false, secure, maxAge: COOKIE_MAX_AGE }),
  ];
}

/** The failure as the page shows it: Zulip's message, its status, and Retry-After when rate limited. */
function failedLogin(h: Hearth, error: ApiError, username: string, next: string): Response {
  return htmlPage(loginPage(h, { username, next, error: error.message }), error.httpStatus, error.headers);
}

function clearCookies(secure: boolean): string[] {
  return [cookie(SESSION_COOKIE, "", { httpOnly: true, secure, maxAge: 0 }), cookie(CSRF_COOKIE, "", { httpOnly: false, secure, maxAge: 0 })];
}

function redirect(location: string, cookies: string[] = []): Response {
  const headers = new Headers({ location, "cache-control": "no-store" });
  for (const c of cookies) headers.append("set-cookie", c);
  return new Response(null, { status: 303, headers });
}

/**
 * Browser sign-in: GET/POST /login, POST /logout (server-rendered, no script), and
 * the caller's session list, GET and DELETE /hearth/sessions (also under /json/).
 */
export function sessionRoutes(h: Hearth) {
  const pages = new Elysia({ name: "sessions" })
    .get("/login", ({ request }) => {
      const next = safeNextPath(new URL(request.url).searchParams.get("next"));
      if (sessionUserOf(h, request)) return redirect(next);
      return htmlPage(loginPage(h, { next }));
    })
    .post(
      "/login",
      async (ctx: any) => {
        const request: Request = ctx.request;
        try {
          const fields = (await readRawParams(request, true, FORM_BYTES)).fields;
          const username = fields.get("username") ?? "";
          const next = safeNextPath(fields.get("next"));
          if (!fromThisSite(h, request)) return failedLogin(h, new ApiError("This sign-in form came from another site.", "CSRF_FAILED", 403), username, next);
          const ip = clientAddress(h, request, ctx.server);
          let user: UserRecord;
          try {
            user = await checkPasswordLogin(h, username, fields.get("password") ?? "", ip, request.headers.get("user-agent") ?? "");
          } catch (error) {
            if (error instanceof ApiError) return failedLogin(h, error, username, next);
            throw error;
          }
          await doRecordFirstLogin(h, user);
          return redirect(next, await startSessionCookies(h, user, request, ctx.server));
        } catch (error) {
          return errorResponse(error, request);
        }
      },
      { parse: "none" } as any,
    )
    .post(
      "/logout",
      async (ctx: any) => {
        const request: Request = ctx.request;
        try {
          const secure = requestIsHttps(h, request, ctx.server);
          const active = sessionOf(h, request);
          if (active) {
            const token = request.headers.get(CSRF_HEADER) ?? (await readRawParams(request, true, FORM_BYTES)).fields.get("csrf_token") ?? null;
            if (!csrfTokenMatches(active.session, token)) throw csrfFailed();
            await doRevokeSession(h, active.session);
          }
          return redirect("/login", clearCookies(secure));
        } catch (error) {
          return errorResponse(error, request);
        }
      },
      { parse: "none" } as any,
    );
  const api = new ApiRoutes(h)
    .get("/hearth/sessions", {}, ({ user, request }) => ({
      sessions: getSessionViews(h, user.id, sessionOf(h, request)?.session.id ?? null, sessionIdleMs(h)),
    }))
    .delete("/hearth/sessions/:session_id", {}, async ({ user, path }) => {
      await doRevokeOwnSession(h, user, path.session_id);
      return {};
    });
  return [pages, api];
}
