import { valuesOf, type Store } from "./db";

/** An allowed email domain for new accounts (used when `emails_restricted_to_domains` is on). */
export interface RealmDomain {
  id: number;
  domain: string;
  allow_subdomains: boolean;
}

export function allRealmDomains(store: Store): RealmDomain[] {
  return valuesOf<RealmDomain>(store.dbs.realmDomains);
}

/** `domain` lower-cased, as stored. */
export function getRealmDomain(store: Store, domain: string): RealmDomain | undefined {
  return store.dbs.realmDomains.get(domain) as RealmDomain | undefined;
}

/** Call only inside `commit`. */
export function putRealmDomain(store: Store, realmDomain: RealmDomain): void {
  store.dbs.realmDomains.put(realmDomain.domain, realmDomain);
}

/** Call only inside `commit`. */
export function removeRealmDomain(store: Store, domain: string): void {
  store.dbs.realmDomains.remove(domain);
}
