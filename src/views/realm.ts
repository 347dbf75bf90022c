import type { Hearth } from "../context";
import { getRealm, type Realm } from "../store/realm";
import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION, HEARTH_VERSION } from "../version";

export function requireRealm(h: Hearth): Realm {
  const realm = getRealm(h.store);
  if (!realm) throw new Error("The data folder holds no organization");
  return realm;
}

/** The lower bound register advertises (`server_min_deactivated_realm_deletion_days`; there is no upper bound). */
export const MIN_DEACTIVATED_REALM_DELETION_DAYS = 14;

/** The organization's name, where there is an organization. */
export function realmName(h: Hearth): string | undefined {
  return getRealm(h.store)?.name;
}

/** Served from the embedded admin-ui assets (see src/api/static.ts). */
export const REALM_ICON_PATH = "/static/hearth-icon.svg";

/** Fields of GET /server_settings: every one the Zulip mobile app parses strictly. */
export function serverSettings(h: Hearth): Record<string, unknown> {
  const realm = requireRealm(h);
  return {
    authentication_methods: {
      password: true,
      dev: false,
      email: true,
      ldap: false,
      remoteuser: false,
      github: false,
      azuread: false,
      gitlab: false,
      apple: false,
      google: false,
      saml: false,
      "openid connect": false,
    },
    external_authentication_methods: [],
    zulip_feature_level: ZULIP_FEATURE_LEVEL,
    service_feature_level: ZULIP_FEATURE_LEVEL,
    zulip_version: ZULIP_VERSION,
    zulip_merge_base: ZULIP_MERGE_BASE,
    hearth_version: HEARTH_VERSION,
    push_notifications_enabled: false,
    is_incompatible: false,
    email_auth_enabled: true,
    require_email_format_usernames: true,
    realm_url: h.realmUrl(),
    realm_uri: h.realmUrl(),
    realm_name: realm.name,
    realm_icon: h.realmUrl() + REALM_ICON_PATH,
    realm_description: realm.description,
    realm_web_public_access_enabled: false,
  };
}
