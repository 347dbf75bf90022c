import { createHash } from "node:crypto";
import type { Hearth } from "../context";
import { getAvatarSalt } from "../store/avatars";
import { getRealm, type Realm } from "../store/realm";
import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION, HEARTH_VERSION } from "../version";

export function requireRealm(h: Hearth): Realm {
  const realm = getRealm(h.store);
  if (!realm) throw new Error("The data folder holds no organization");
  return realm;
}

/**
 * register's `realm_uuid` (FL 466): stable for the data folder, derived from its avatar
 * salt (a secret made once per folder) so no second value has to be stored; a one-way
 * hash, so it tells nothing of the salt. Shaped as a version 4 UUID.
 */
export function realmUuid(h: Hearth): string {
  const b = createHash("sha256").update(`hearth realm uuid:${getAvatarSalt(h.store) ?? ""}`).digest().subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = b.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
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
      discord: false, // FL 488
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
