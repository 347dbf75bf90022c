import { escapeHtml } from "../lib/text";
/**
 * Headers for every HTML page Hearth serves (the sign-in page, the admin page, the
 * web client): scripts and styles only from Hearth's own files, never inline, so an
 * injected tag runs nothing; no framing (clickjacking); no referrer beyond the origin;
 * no MIME sniffing.
 */
export const PAGE_CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; " +
  "frame-ancestors 'none'; base-uri 'self'; form-action 'self'; object-src 'none'";

/**
 * The chat page shows the server's rendered messages, which need two things more:
 * style attributes (KaTeX sizes formulas with them; the HTML is the server's own
 * rendering, so no message can add a <style> element or a script) and images from
 * https URLs (inline previews of image links, which Zulip's apps load directly too).
 */
export const WEB_CLIENT_CONTENT_SECURITY_POLICY = PAGE_CONTENT_SECURITY_POLICY.replace(
  "style-src 'self';",
  "style-src 'self'; style-src-attr 'unsafe-inline';",
).replace("img-src 'self' data: blob:;", "img-src 'self' data: blob: https:;");

export const PAGE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "Content-Security-Policy": PAGE_CONTENT_SECURITY_POLICY,
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "same-origin",
  "X-Content-Type-Options": "nosniff",
};

/**
 * A server-rendered form page outside the app (sign-in, joining by an invitation,
 * password reset, email confirmations): Hearth's page headers and its one small
 * stylesheet. These pages carry a secret in their URL (an invitation key, a signed
 * token), so they send no referrer at all: a link followed from one must not leak it.
 */
export function formPage(title: string, siteName: string, body: string, status = 200): Response {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · ${escapeHtml(siteName)}</title>
<link rel="icon" href="/static/hearth-icon.svg"><link rel="stylesheet" href="/static/login.css"></head>
<body><main class="login"><h1>${escapeHtml(title)}</h1>
${body}
</main></body></html>`;
  return htmlPage(html, status, { "Referrer-Policy": "no-referrer" });
}

/** An HTML page with the security headers; pages with a user in them are not cached. */
export function htmlPage(html: string, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(html, {
    status,
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", ...PAGE_SECURITY_HEADERS, ...headers },
  });
}
