/** Zulip's cross-realm system bots live on this internal domain. */
export const SYSTEM_BOTS = [
  { key: "notification", email: "notification-bot@zulip.com", full_name: "Notification Bot" },
  { key: "email_gateway", email: "emailgateway@zulip.com", full_name: "Email Gateway" },
  { key: "welcome", email: "welcome-bot@zulip.com", full_name: "Welcome Bot" },
] as const;
