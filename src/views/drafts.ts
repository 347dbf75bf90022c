import type { Hearth } from "../context";
import { userDrafts, type Draft } from "../store/drafts";

/** The user's drafts, most recently edited first (Zulip's order). */
export function getDrafts(h: Hearth, userId: number): Draft[] {
  return userDrafts(h.store, userId).sort((a, b) => b.timestamp - a.timestamp || b.id - a.id);
}
