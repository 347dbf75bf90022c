import type { Hearth } from "../context";
import { ApiError, badRequest } from "../errors";
import type { UserRecord } from "../store/users";
import { commit } from "../events/commit";

/** A sidebar view (FL 390): built-in views have no name; custom views must have one. */
export interface NavigationView {
  fragment: string;
  is_pinned: boolean;
  name: string | null;
}

/** The web app's built-in views, by URL fragment. */
export const BUILT_IN_VIEWS: ReadonlySet<string> = new Set([
  "inbox",
  "recent",
  "feed",
  "drafts",
  "scheduled",
  "reminders",
  "channels/subscribed",
  "narrow/is/mentioned",
  "narrow/is/starred",
  "narrow/has/reaction/sender/me",
]);

export const MAX_VIEW_NAME_LENGTH = 100;
/** Fragments are index keys, which LMDB caps at 1978 bytes: 400 characters of up to 4 bytes fit. */
export const MAX_FRAGMENT_LENGTH = 400;

const viewMissing = () => new ApiError("Navigation view does not exist.", "NOT_FOUND", 404);

/** A user's view by fragment; a fragment longer than any view may have names none (and would not fit in a key). */
function getNavigationView(h: Hearth, userId: number, fragment: string): NavigationView | undefined {
  if (fragment.length > MAX_FRAGMENT_LENGTH) return undefined;
  return h.store.dbs.navigationViews.get([userId, fragment]) as NavigationView | undefined;
}

/** How a view appears in the API: `name` left out for built-in views. */
export function navigationViewView(v: NavigationView): Record<string, unknown> {
  return BUILT_IN_VIEWS.has(v.fragment) ? { fragment: v.fragment, is_pinned: v.is_pinned } : { ...v };
}

export function getNavigationViews(h: Hearth, userId: number): Record<string, unknown>[] {
  return [...h.store.dbs.navigationViews.getRange({ start: [userId], end: [userId + 1] })].map((e) => navigationViewView(e.value as NavigationView));
}

function checkName(fragment: string, name: string | undefined): string | null {
  const builtIn = BUILT_IN_VIEWS.has(fragment);
  if (name === undefined) {
    if (!builtIn) throw badRequest("Custom views must have a valid name.");
    return null;
  }
  if (builtIn) throw badRequest("Built-in views cannot have a custom name.");
  const n = name.trim();
  if (n === "") throw badRequest("name cannot be blank.");
  if (n.length > MAX_VIEW_NAME_LENGTH) throw badRequest(`name is too long (limit: ${MAX_VIEW_NAME_LENGTH} characters)`);
  return n;
}

export async function doAddNavigationView(h: Hearth, user: UserRecord, fragment: string, isPinned: boolean, name: string | undefined): Promise<void> {
  const f = fragment.trim();
  if (f === "") throw badRequest("fragment cannot be blank");
  if (f.length > MAX_FRAGMENT_LENGTH) throw badRequest(`fragment is too long (limit: ${MAX_FRAGMENT_LENGTH} characters)`);
  const view: NavigationView = { fragment: f, is_pinned: isPinned, name: checkName(f, name) };
  await commit(h, (tx) => {
    if (getNavigationView(h, user.id, f)) throw badRequest("Navigation view already exists.");
    h.store.dbs.navigationViews.put([user.id, f], view);
    tx.notify({ type: "navigation_view", op: "add", navigation_view: navigationViewView(view) }, [user.id]);
  });
}

export async function doUpdateNavigationView(h: Hearth, user: UserRecord, fragment: string, changes: { is_pinned?: boolean; name?: string }): Promise<void> {
  if (changes.is_pinned === undefined && changes.name === undefined) throw badRequest("At least one of is_pinned and name must be provided.");
  const name = changes.name === undefined ? undefined : checkName(fragment, changes.name);
  const data: Record<string, unknown> = {};
  if (changes.is_pinned !== undefined) data.is_pinned = changes.is_pinned;
  if (name !== undefined) data.name = name;
  await commit(h, (tx) => {
    const current = getNavigationView(h, user.id, fragment);
    if (!current) throw viewMissing();
    h.store.dbs.navigationViews.put([user.id, fragment], { ...current, ...data });
    tx.notify({ type: "navigation_view", op: "update", fragment, data }, [user.id]);
  });
}

export async function doRemoveNavigationView(h: Hearth, user: UserRecord, fragment: string): Promise<void> {
  await commit(h, (tx) => {
    if (!getNavigationView(h, user.id, fragment)) throw viewMissing();
    h.store.dbs.navigationViews.remove([user.id, fragment]);
    tx.notify({ type: "navigation_view", op: "remove", fragment }, [user.id]);
  });
}
