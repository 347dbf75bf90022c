import { staticPlugin } from "@elysiajs/static";
import { Elysia } from "elysia";
import { escapeRegExp } from "../lib/text";
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import type { Hearth } from "../context";
import { HEARTH_VERSION } from "../version";
import { ADMIN_UI_ASSETS } from "../../admin-ui/assets";
import { PAGE_SECURITY_HEADERS } from "../http/pages";

export const STATIC_PREFIX = "/static";

/** Inside the data folder: one sub-folder per Hearth version holding the unpacked assets. */
export const UNPACKED_ASSETS_FOLDER = "assets";

/** Files embedded by `bun build --compile` live in the executable's virtual file system. */
function isEmbedded(path: string): boolean {
  return path.startsWith("/$bunfs/") || path.startsWith("B:/~BUN/");
}

function isRealFile(path: string): boolean {
  return !isEmbedded(path) && existsSync(path) && statSync(path).isFile();
}

/**
 * The folder the static plugin serves `assets` (public name → file) from. Running
 * from source, the files already sit in one folder under their public names, so
 * that folder is served and edits show on restart. In the compiled binary they are
 * embedded under hashed names, and the plugin can only list a real folder, so they
 * are unpacked into `<data>/assets/<version>/` (rewritten only when they differ, and
 * older versions' folders removed, so upgrades neither serve stale files nor pile up).
 */
export function resolveAssetFolder(assets: Readonly<Record<string, string>>, dataDir: string): string {
  // Public names may have folders ("js/app.js"): the source folder is what precedes them.
  const folders = new Set(
    Object.entries(assets).map(([name, path]) => (isRealFile(path) && path.endsWith(sep + name) ? path.slice(0, -name.length - 1) : null)),
  );
  const [sourceFolder] = folders;
  if (folders.size === 1 && sourceFolder) return sourceFolder;
  return unpackAssets(assets, join(dataDir, UNPACKED_ASSETS_FOLDER), HEARTH_VERSION);
}

export function unpackAssets(assets: Readonly<Record<string, string>>, parent: string, version: string): string {
  const folder = join(parent, version);
  try {
    writeAssets(assets, parent, folder);
  } catch (e: any) {
    throw new Error(`Could not unpack the web assets into ${folder}: ${e?.message ?? e}`);
  }
  return folder;
}

function writeAssets(assets: Readonly<Record<string, string>>, parent: string, folder: string): void {
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  for (const [name, source] of Object.entries(assets)) {
    const bytes = readFileSync(source);
    const target = join(folder, name);
    if (existsSync(target) && readFileSync(target).equals(bytes)) continue;
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
    // Written aside and renamed, so a crash never leaves a truncated asset behind.
    const partial = `${target}.partial-${process.pid}`;
    writeFileSync(partial, bytes);
    renameSync(partial, target);
  }
  // Files a previous build of this version had and this one has not.
  const listed = (relative: string) => Object.keys(assets).some((name) => name === relative || name.startsWith(relative + sep));
  for (const relative of readdirSync(folder, { recursive: true }) as string[]) {
    if (!listed(relative)) rmSync(join(folder, relative), { recursive: true, force: true });
  }
  for (const name of readdirSync(parent)) {
    if (join(parent, name) !== folder) rmSync(join(parent, name), { recursive: true, force: true });
  }
}


/**
 * Serves the admin-ui assets under /static/. `alwaysStatic` makes the plugin add one
 * route per listed file at startup instead of a wildcard route that joins the request
 * path onto the folder, so no request path, however encoded (`..`, `%2e%2e%2f`), can
 * name a file outside the list. Any other file in the folder (in development, e.g.
 * admin-ui/assets.ts) is ignored.
 *
 * The plugin resolves once its routes exist; `startServer` awaits `app.modules`
 * before listening.
 */
export function staticAssetRoutes(h: Hearth) {
  // Synchronous, so a failure stops startup: Elysia only logs a rejected plugin.
  const folder = resolveAssetFolder(ADMIN_UI_ASSETS, h.config.dataDir);
  const published = Object.keys(ADMIN_UI_ASSETS)
    .filter((name) => name !== ADMIN_PAGE_FILE)
    .map((name) => escapeRegExp(join(folder, name)));
  const unpublished = new RegExp(`^(?!(?:${published.join("|")})$)`);
  const files = staticPlugin({
    assets: folder,
    prefix: STATIC_PREFIX,
    alwaysStatic: true,
    ignorePatterns: [unpublished],
    indexHTML: false,
    headers: ADMIN_PAGE_HEADERS,
  });
  // The administration page (admin-ui/admin.html) is a static page that talks to the API.
  // Served here rather than by the plugin, which leaves its `headers` off HTML files:
  // the page itself is what must not be framed.
  const adminPage = join(folder, ADMIN_PAGE_FILE);
  const servePage = () => new Response(Bun.file(adminPage), { headers: { "content-type": "text/html; charset=utf-8", ...ADMIN_PAGE_HEADERS } });
  const toAdminPage = () => new Response(null, { status: 302, headers: { location: ADMIN_PAGE_PATH } });
  return new Elysia({ name: "static-assets" }).use(files).get(ADMIN_PAGE_PATH, servePage).get("/admin", toAdminPage).get("/admin/", toAdminPage);
}

/** The admin page loads only its own files and may not be framed (its buttons deactivate users: clickjacking): the shared page headers. */
const ADMIN_PAGE_HEADERS = PAGE_SECURITY_HEADERS;
const ADMIN_PAGE_FILE = "admin.html";

const ADMIN_PAGE_PATH = `${STATIC_PREFIX}/${ADMIN_PAGE_FILE}`;
