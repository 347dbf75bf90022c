import type { Store } from "./db";
import { StoreCache } from "./cache";

/** The organization; one per data folder. */
export interface Realm {
  id: number;
  name: string;
  description: string;
  /** Unix seconds. */
  date_created: number;
  deactivated: boolean;
  /** Unix seconds after which a deactivated organization's data is deleted; null keeps it. */
  scheduled_deletion_date?: number | null;
  /** Set once the deletion ran: nothing is left to reactivate. */
  data_deleted?: boolean;
  /** Set at `init --external-url`; `serve --external-url` overrides it at run time. */
  external_url: string | null;
  /** Organization settings changed through the API; absent keys take REALM_DEFAULTS. */
  settings: Record<string, unknown>;
}

export const REALM_ID = 1;

/** Every user view reads the realm (its URL for avatars, its host for emails). */
const realmCache = new StoreCache<"realm", Realm | undefined>();

export function getRealm(store: Store): Realm | undefined {
  return realmCache.get(store, "realm", () => store.dbs.meta.get("realm") as Realm | undefined);
}
export const realmWriteVersion = () => realmCache.version;

export function putRealm(store: Store, realm: Realm): void {
  realmCache.invalidate(store);
  store.dbs.meta.put("realm", realm);
}
