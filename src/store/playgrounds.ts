import { valuesOf, type Store } from "./db";

/** A code playground: where a code block of a language can be opened (Zulip's RealmPlayground). */
export interface RealmPlayground {
  id: number;
  name: string;
  pygments_language: string;
  url_template: string;
}

export function allPlaygrounds(store: Store): RealmPlayground[] {
  return valuesOf<RealmPlayground>(store.dbs.realmPlaygrounds);
}

export function getPlayground(store: Store, id: number): RealmPlayground | undefined {
  return store.dbs.realmPlaygrounds.get(id) as RealmPlayground | undefined;
}

/** Call only inside `commit`. */
export function putPlayground(store: Store, playground: RealmPlayground): void {
  store.dbs.realmPlaygrounds.put(playground.id, playground);
}

/** Call only inside `commit`. */
export function removePlayground(store: Store, id: number): void {
  store.dbs.realmPlaygrounds.remove(id);
}
