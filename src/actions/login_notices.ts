import { createHash } from "node:crypto";
import type { Hearth } from "../context";
import { commit } from "../events/commit";
import { loginClientSeen, putLoginClient } from "../store/account_emails";
import { getUser, type UserRecord } from "../store/users";
import { realmName } from "../views/realm";
import { userSetting } from "../views/settings";
import { queueEmail } from "./email";

/**
 * The notice of a password login from a client the account never logged in from
 * (Zulip emails one on every login; this server only on a client it has not seen,
 * known by its User-Agent), honouring the user's `enable_login_emails`. Not for the
 * first login of a new account (Zulip's JUST_CREATED_THRESHOLD, a minute): that one
 * only records the client.
 */

const JUST_CREATED_SECONDS = 60;

export interface LoginClient {
  ip: string;
  userAgent: string;
}

/** Up to 300 characters on one line: what the User-Agent header said, as the email shows it. */
const describedAgent = (agent: string) => agent.replace(/[\u0000-\u001f\u007f]+/g, " ").trim().slice(0, 300) || "an unknown client";

const clientKey = (agent: string) => createHash("sha256").update(agent.trim()).digest("base64url").slice(0, 22);

/** After a successful password login: records the client, and emails the notice when it is new. */
export async function doNoteLogin(h: Hearth, user: UserRecord, client: LoginClient): Promise<void> {
  const key = clientKey(client.userAgent);
  // Most logins come from a known client: a read, no write.
  if (loginClientSeen(h.store, user.id, key)) return;
  const now = Date.now() / 1000;
  await commit(h, (tx) => {
    if (loginClientSeen(h.store, user.id, key)) return;
    putLoginClient(h.store, user.id, key, Math.floor(now));
    const current = getUser(h.store, user.id) ?? user;
    const justCreated = current.joined_pending_first_login || now - current.date_joined < JUST_CREATED_SECONDS;
    if (justCreated || userSetting(current, "enable_login_emails") !== true) return;
    const org = realmName(h) ?? "Hearth";
    const text = [
      `Your account ${current.email} on ${org} (${h.realmUrl()}) was just signed in to from a client it had not been used from before.`,
      "",
      `Time: ${new Date(now * 1000).toISOString().replace(/\.\d+Z$/, " UTC").replace("T", " ")}`,
      `Client: ${describedAgent(client.userAgent)}`,
      `IP address: ${client.ip}`,
      "",
      "If this was you, there is nothing to do.",
      `If it was not, change your password at once (${h.realmUrl()}/accounts/password/reset/) and tell an administrator of the organization.`,
      "",
      `You can turn these emails off in your notification settings: ${h.realmUrl()}/#settings/notifications`,
    ].join("\n");
    queueEmail(h, tx, { to: current.email, subject: `New login to ${org}`, text: text + "\n", kind: "login_notice", autoSubmitted: true });
  });
}
