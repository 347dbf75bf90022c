import { valuesOf, type Store } from "./db";

/** A sidebar view (FL 390): built-in views have no name; custom views must have one. */
export interface NavigationView {
  fragment: string;
  is_pinned: boolean;
  name: string | null;
}

/** Fragments are index keys, which LMDB caps at 1978 bytes: 400 characters of up to 4 bytes fit. */
export const MAX_FRAGMENT_LENGTH = 400;

/** A user's view by fragment; a fragment longer than any view may have names none (and would not fit in a key). */
export function getNavigationView(store: Store, userId: number, fragment: string): NavigationView | undefined {
  if (fragment.length > MAX_FRAGMENT_LENGTH) return undefined;
  return store.dbs.navigationViews.get([userId, fragment]) as NavigationView | undefined;
}

export function userNavigationViews(store: Store, userId: number): NavigationView[] {
  return valuesOf<NavigationView>(store.dbs.navigationViews, userId);
}

/** Call inside `commit`. */
export function putNavigationView(store: Store, userId: number, view: NavigationView): void {
  store.dbs.navigationViews.put([userId, view.fragment], view);
}

/** Call inside `commit`. */
export function removeNavigationView(store: Store, userId: number, fragment: string): void {
  store.dbs.navigationViews.remove([userId, fragment]);
}
