/**
 * Every file served under /static/, by its public name. Importing each one
 * `with { type: "file" }` is what makes `bun build --compile` embed it: the value is
 * then a path inside the executable (`/$bunfs/…`, with a hashed file name), and
 * the real file's path when running from source. src/api/static.ts serves them.
 */
import hearthIcon from "./hearth-icon.svg" with { type: "file" };

export const ADMIN_UI_ASSETS: Readonly<Record<string, string>> = {
  // The organization icon (REALM_ICON_PATH, advertised as realm_icon).
  "hearth-icon.svg": hearthIcon,
};
