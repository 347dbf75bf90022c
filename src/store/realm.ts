import type { Store } from "./db";

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

export function getRealm(store: Store): Realm | undefined {
  return store.dbs.meta.get("realm") as Realm | undefined;
}

/** Counts realm writes in this process (see userWriteVersion). */
let realmWrites = 0;
export const realmWriteVersion = () => realmWrites;

export function putRealm(store: Store, realm: Realm): void {
  realmWrites++;
  store.afterCommit(() => realmWrites++);
  store.dbs.meta.put("realm", realm);
}
