import type { Hearth } from "../context";
import { ApiError, badRequest } from "../errors";
import type { UserRecord } from "../store/users";
import { commit } from "../events/commit";
import { getNavigationView, MAX_FRAGMENT_LENGTH, putNavigationView, removeNavigationView, type NavigationView } from "../store/navigation_views";
import { BUILT_IN_VIEWS, navigationViewView } from "../views/navigation_views";

export const MAX_VIEW_NAME_LENGTH = 100;

const viewMissing = () => new ApiError("Navigation view does not exist.", "NOT_FOUND", 404);

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
    if (getNavigationView(h.store, user.id, f)) throw badRequest("Navigation view already exists.");
    putNavigationView(h.store, user.id, view);
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
    const current = getNavigationView(h.store, user.id, fragment);
    if (!current) throw viewMissing();
    putNavigationView(h.store, user.id, { ...current, ...data });
    tx.notify({ type: "navigation_view", op: "update", fragment, data }, [user.id]);
  });
}

export async function doRemoveNavigationView(h: Hearth, user: UserRecord, fragment: string): Promise<void> {
  await commit(h, (tx) => {
    if (!getNavigationView(h.store, user.id, fragment)) throw viewMissing();
    removeNavigationView(h.store, user.id, fragment);
    tx.notify({ type: "navigation_view", op: "remove", fragment }, [user.id]);
  });
}
