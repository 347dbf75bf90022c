/** Hearth's own release, reported beside the Zulip compatibility fields. */
export const HEARTH_VERSION = "0.1.0";

/**
 * The Zulip API level Hearth answers as (`zulip_feature_level`, also sent as the
 * spec's `service_feature_level`). The Zulip mobile app refuses servers below 277
 * and shows an "unsupported server" banner below 371; from 468 it expects the E2EE
 * push-device endpoints, so the level must stay below that until they exist.
 */
export const ZULIP_FEATURE_LEVEL = 371;

/** Zulip release whose API level we claim; clients parse "major.minor" from it. */
export const ZULIP_VERSION = "10.0";
export const ZULIP_MERGE_BASE = "10.0";
