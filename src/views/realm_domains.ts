import type { Hearth } from "../context";
import { getRealm } from "../store/realm";
import { realmSetting } from "../store/realm_settings";
import { allRealmDomains, type RealmDomain } from "../store/realm_domains";

export function getRealmDomains(h: Hearth): RealmDomain[] {
  return allRealmDomains(h.store);
}

export const realmDomainView = (d: RealmDomain) => ({ domain: d.domain, allow_subdomains: d.allow_subdomains });

/**
 * Zulip's email_allowed_for_realm, for every account a person gets (an administrator's
 * POST /users, an invitation link; not bots): when the organization restricts emails to
 * its domains, the address must be in one, and without a `+` alias, which could stand
 * in for anyone's address. null: allowed; callers word the refusal as Zulip does there.
 */
export function emailRefusalForRealm(h: Hearth, email: string): "domain" | "plus" | null {
  if (!realmSetting(getRealm(h.store)?.settings ?? {}, "emails_restricted_to_domains")) return null;
  const at = email.lastIndexOf("@");
  if (email.slice(0, at).includes("+")) return "plus";
  const domain = email.slice(at + 1).toLowerCase();
  const allowed = getRealmDomains(h).some((d) => d.domain === domain || (d.allow_subdomains && domain.endsWith(`.${d.domain}`)));
  return allowed ? null : "domain";
}
