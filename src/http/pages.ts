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

/** An HTML page with the security headers; pages with a user in them are not cached. */
export function htmlPage(html: string, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(html, {
    status,
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", ...PAGE_SECURITY_HEADERS, ...headers },
  });
}
