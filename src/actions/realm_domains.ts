import type { Hearth } from "../context";
import { commit } from "../events/commit";
import { assertOwner } from "../access/roles";
import { badRequest } from "../errors";
import { activeUserIds, type UserRecord } from "../store/users";
import { realmDomainView } from "../views/realm_domains";
import { getRealmDomain, putRealmDomain, removeRealmDomain, type RealmDomain } from "../store/realm_domains";

/** Zulip's domain rules: letters, digits, `-` and `.`, at least one dot; lower-cased. */
export function checkDomain(raw: string): string {
  const domain = raw.trim().toLowerCase();
  if (domain === "") throw badRequest("Domain can't be empty.");
  // DNS names are at most 253 characters (and LMDB keys must stay short).
  if (domain.length > 253) throw badRequest(`Invalid domain: ${raw}`);
  if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(domain) || domain.split(".").some((part) => part.startsWith("-") || part.endsWith("-"))) {
    throw badRequest(`Invalid domain: ${raw}`);
  }
  return domain;
}


const domainMissing = (domain: string) => badRequest(`No entry found for domain ${domain}.`);

export async function doAddRealmDomain(h: Hearth, user: UserRecord, rawDomain: string, allowSubdomains: boolean): Promise<RealmDomain> {
  assertOwner(user);
  const domain = checkDomain(rawDomain);
  return commit(h, (tx) => {
    if (getRealmDomain(h.store, domain)) throw badRequest(`The domain ${domain} is already a part of your organization.`);
    const d: RealmDomain = { id: h.store.nextId("realm_domain"), domain, allow_subdomains: allowSubdomains };
    putRealmDomain(h.store, d);
    tx.notify({ type: "realm_domains", op: "add", realm_domain: realmDomainView(d) }, activeUserIds(h));
    return d;
  });
}

export async function doChangeRealmDomain(h: Hearth, user: UserRecord, rawDomain: string, allowSubdomains: boolean): Promise<void> {
  assertOwner(user);
  const domain = rawDomain.trim().toLowerCase();
  await commit(h, (tx) => {
    const current = getRealmDomain(h.store, domain);
    if (!current) throw domainMissing(domain);
    putRealmDomain(h.store, { ...current, allow_subdomains: allowSubdomains });
    tx.notify({ type: "realm_domains", op: "change", realm_domain: { domain, allow_subdomains: allowSubdomains } }, activeUserIds(h));
  });
}

export async function doRemoveRealmDomain(h: Hearth, user: UserRecord, rawDomain: string): Promise<void> {
  assertOwner(user);
  const domain = rawDomain.trim().toLowerCase();
  await commit(h, (tx) => {
    if (!getRealmDomain(h.store, domain)) throw domainMissing(domain);
    removeRealmDomain(h.store, domain);
    tx.notify({ type: "realm_domains", op: "remove", domain }, activeUserIds(h));
  });
}
