/** The client_capabilities of POST /register; each changes what the queue receives. */
export interface ClientCapabilities {
  notification_settings_null: boolean;
  bulk_message_deletion: boolean;
  user_avatar_url_field_optional: boolean;
  stream_typing_notifications: boolean;
  user_settings_object: boolean;
  linkifier_url_template: boolean;
  user_list_incomplete: boolean;
  include_deactivated_groups: boolean;
  archived_channels: boolean;
  empty_topic_name: boolean;
  simplified_presence_events: boolean;
  individual_emoji_changes: boolean;
}

export const CAPABILITY_NAMES = [
  "notification_settings_null",
  "bulk_message_deletion",
  "user_avatar_url_field_optional",
  "stream_typing_notifications",
  "user_settings_object",
  "linkifier_url_template",
  "user_list_incomplete",
  "include_deactivated_groups",
  "archived_channels",
  "empty_topic_name",
  "simplified_presence_events",
  "individual_emoji_changes",
] as const satisfies readonly (keyof ClientCapabilities)[];

export function parseCapabilities(raw: Record<string, unknown> | undefined): ClientCapabilities {
  const caps = {} as ClientCapabilities;
  for (const name of CAPABILITY_NAMES) caps[name] = raw?.[name] === true;
  return caps;
}
