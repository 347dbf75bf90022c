/**
 * The web chat client (web/) at `/`: the page shell, and its script and stylesheet
 * under /web/ by content-hashed names, cached for good. The page is served only to
 * a signed-in member (the session cookie); anyone else is sent to the login page.
 * Everything the client does afterwards goes through the public API under /json/.
 */
import { Elysia } from "elysia";
import type { Hearth } from "../context";
import { jsonResponse } from "../http/route";
import { htmlPage, WEB_CLIENT_CONTENT_SECURITY_POLICY } from "../http/pages";
import { sessionUserOf } from "../auth/session";
import { webBundle, type WebBundle } from "../../web/bundle";

export const WEB_CLIENT_ASSET_PREFIX = "/web";

const escapeAttribute = (text: string) => text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

export function appShell(bundle: WebBundle): string {
  const asset = (name: string) => escapeAttribute(`${WEB_CLIENT_ASSET_PREFIX}/${name}`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Hearth</title>
<link rel="icon" href="/static/hearth-icon.svg">
<link rel="stylesheet" href="${asset(bundle.cssName)}">
<script type="module" src="${asset(bundle.jsName)}"></script>
</head>
<body>
<div id="app">Loading…</div>
<noscript>Hearth's web client needs JavaScript.</noscript>
</body>
</html>
`;
}

interface Served {
  body: string;
  gzipped: Blob;
  type: string;
}

/** Each file once, plain and gzipped (the script shrinks to a third). */
const servedFiles = new WeakMap<WebBundle, Map<string, Served>>();
function filesOf(bundle: WebBundle): Map<string, Served> {
  let files = servedFiles.get(bundle);
  if (!files) {
    files = new Map([
      [bundle.jsName, { body: bundle.js, gzipped: new Blob([Bun.gzipSync(bundle.js)]), type: "text/javascript; charset=utf-8" }],
      [bundle.cssName, { body: bundle.css, gzipped: new Blob([Bun.gzipSync(bundle.css)]), type: "text/css; charset=utf-8" }],
    ]);
    servedFiles.set(bundle, files);
  }
  return files;
}

const notFound = () => jsonResponse({ result: "error", msg: "Not Found", code: "NOT_FOUND" }, 404);

export function webClientRoutes(h: Hearth) {
  return new Elysia({ name: "web-client" })
    .get("/", async ({ request }) => {
      if (!sessionUserOf(h, request)) return new Response(null, { status: 302, headers: { location: "/login?next=/", "Cache-Control": "no-store" } });
      const bundle = await webBundle();
      // The page security headers: no inline script or style, never framed.
      return htmlPage(appShell(bundle), 200, { "Content-Security-Policy": WEB_CLIENT_CONTENT_SECURITY_POLICY });
    })
    .get(`${WEB_CLIENT_ASSET_PREFIX}/:name`, async ({ params, request }) => {
      const file = filesOf(await webBundle()).get(params.name);
      if (!file) return notFound();
      const gzip = /\bgzip\b/.test(request.headers.get("accept-encoding") ?? "");
      return new Response(gzip ? file.gzipped : file.body, {
        headers: {
          "content-type": file.type,
          "cache-control": "public, max-age=31536000, immutable",
          "x-content-type-options": "nosniff",
          vary: "Accept-Encoding",
          ...(gzip ? { "content-encoding": "gzip" } : {}),
        },
      });
    });
}
