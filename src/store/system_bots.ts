import type { Store } from "./db";
import { getUserByEmail, type UserRecord } from "./users";
/** Zulip's cross-realm system bots live on this internal domain. */
export const SYSTEM_BOTS = [
  { key: "notification", email: "notification-bot@zulip.com", full_name: "Notification Bot" },
  { key: "email_gateway", email: "emailgateway@zulip.com", full_name: "Email Gateway" },
  { key: "welcome", email: "welcome-bot@zulip.com", full_name: "Welcome Bot" },
] as const;

export type SystemBotKey = (typeof SYSTEM_BOTS)[number]["key"];

/** The organization's copy of a system bot (created along with it). */
export function getSystemBot(store: Store, key: SystemBotKey): UserRecord | undefined {
  return getUserByEmail(store, SYSTEM_BOTS.find((b) => b.key === key)!.email);
}
