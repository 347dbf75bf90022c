/** Hearth's own release, reported beside the Zulip compatibility fields. */
export const HEARTH_VERSION = "0.1.0";

/**
 * The Zulip API level Hearth answers as (`zulip_feature_level`, also sent as the
 * spec's `service_feature_level`): 508, the product spec's level (POST /messages'
 * `message_url`). Every obligation up to it is met or answered as a Zulip server with
 * that feature switched off does (docs/feature-levels.md). Levels 509 and above are
 * not claimed: the Zulip mobile app rejects the 510 message flag below 510.
 */
export const ZULIP_FEATURE_LEVEL = 508;

/**
 * The Zulip release whose API level we claim; clients parse "major.minor" from it.
 * Level 508 belongs to Zulip 13.0's development series (12.1 ended at 500, and no
 * release has carried 508 yet), so the version is a 13.0 development one, as a
 * server built from Zulip's main branch then reported it.
 */
export const ZULIP_VERSION = "13.0-dev+git";
export const ZULIP_MERGE_BASE = "13.0-dev+git";
