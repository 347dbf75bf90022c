/**
 * Every file served under /static/, by its public name. Importing each one
 * `with { type: "file" }` is what makes `bun build --compile` embed it: the value is
 * then a path inside the executable (`/$bunfs/…`, with a hashed file name), and
 * the real file's path when running from source. src/api/static.ts serves them.
 */
import hearthIcon from "./hearth-icon.svg" with { type: "file" };
// Bun's types read an .html import as a page bundle, and TypeScript a .js one as a
// module; `type: "file"` makes each the file's path.
import adminHtml from "./admin.html" with { type: "file" };
// @ts-expect-error -- a browser script embedded as a file, not a module of this program
import adminJs from "./admin.js" with { type: "file" };
import adminCss from "./admin.css" with { type: "file" };
import loginCss from "./login.css" with { type: "file" };

export const ADMIN_UI_ASSETS: Readonly<Record<string, string>> = {
  // The organization icon (REALM_ICON_PATH, advertised as realm_icon).
  "hearth-icon.svg": hearthIcon,
  // The administration page (ADMIN_PAGE_PATH; /admin redirects there).
  "admin.html": adminHtml as unknown as string,
  "admin.js": adminJs as string,
  "admin.css": adminCss,
  // The sign-in page's style (src/api/sessions.ts renders the page).
  "login.css": loginCss,
};
