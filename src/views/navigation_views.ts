import type { Hearth } from "../context";
import type { NavigationViewJson } from "../schemas/events";
import { userNavigationViews, type NavigationView } from "../store/navigation_views";

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

/** How a view appears in the API: `name` left out for built-in views. */
export function navigationViewView(v: NavigationView): NavigationViewJson {
  return BUILT_IN_VIEWS.has(v.fragment) ? { fragment: v.fragment, is_pinned: v.is_pinned } : { ...v };
}

export function getNavigationViews(h: Hearth, userId: number): Record<string, unknown>[] {
  return userNavigationViews(h.store, userId).map(navigationViewView);
}
