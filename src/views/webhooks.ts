import { statePart } from "./state_parts";

/**
 * Incoming webhook integrations: third-party services post to
 * `/api/v1/external/<name>?api_key=…&stream=…&topic=…` and a bot turns the payload into
 * a message. Each integration is listed in register's `realm_incoming_webhook_bots`.
 */
export interface WebhookIntegration {
  name: string;
  display_name: string;
  all_event_types: string[] | null;
  config_options: { key: string; label: string; validator: string }[];
  url_options: { key: string; label: string; input_type: string }[];
}

export const WEBHOOK_INTEGRATIONS: readonly WebhookIntegration[] = [
  // Zulip's JSON formatter: any JSON payload, shown as a code block.
  { name: "json", display_name: "JSON formatter", all_event_types: null, config_options: [], url_options: [] },
  // Zulip's slack_incoming: Slack's incoming-webhook format, from the many tools that speak it.
  { name: "slack_incoming", display_name: "Slack-compatible webhook", all_event_types: null, config_options: [], url_options: [] },
];

export const realmIncomingWebhookBotsPart = statePart("realm_incoming_webhook_bots", ["realm_incoming_webhook_bots"], () => ({
  realm_incoming_webhook_bots: WEBHOOK_INTEGRATIONS.map((integration) => ({ ...integration })),
}));
