import type { Hearth } from "../context";
import { allPlaygrounds, type RealmPlayground } from "../store/playgrounds";

/** The organization's code playgrounds (register's `realm_playgrounds`, and its event). */
export function getPlaygrounds(h: Hearth): RealmPlayground[] {
  return allPlaygrounds(h.store);
}
