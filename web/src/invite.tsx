/**
 * Inviting teammates, as Zulip's web app offers it from its menu: by email (POST
 * /invites; Hearth emails the link, or says it could not) or as a reusable link (POST
 * /invites/multiuse) to copy. The role choices stop at the inviter's own role, as the
 * server's rule does; who may do either follows the organization's settings
 * (`can_invite_others_to_realm` from POST /register, `create_multiuse_invite_group`
 * resolved against the groups in realm.ts), so the panel offers only what the server
 * will accept.
 */
import { useState } from "preact/hooks";
import { api } from "./api";
import { onEvent, onRegister } from "./panels";
import { inGroupSetting, myRole, realm } from "./realm";
import { useAction } from "./use_action";

/** Roles by Zulip's numbers, highest first; an inviter may give their own role or a lower one. */
const ROLES: [number, string][] = [
  [100, "Organization owner"],
  [200, "Organization administrator"],
  [300, "Moderator"],
  [400, "Member"],
  [600, "Guest"],
];
/** Zulip's expiry choices, in minutes (null: never). */
const EXPIRIES: [string, string][] = [
  ["1440", "1 day"],
  ["4320", "3 days"],
  ["14400", "10 days"],
  ["43200", "30 days"],
  ["never", "Never"],
];

/** Inviting by email: computed by the server (`can_invite_others_to_realm`), per user. */
let mayInviteByEmail = false;
onRegister((state) => {
  mayInviteByEmail = !!state.can_invite_others_to_realm;
});
/** The setting's event, as Zulip's web app recomputes it: a role or group change re-registers nothing. */
onEvent((event) => {
  if (event.type === "realm" && event.op === "update_dict" && "can_invite_users_group" in (event.data ?? {})) {
    mayInviteByEmail = myRole() !== 600 && inGroupSetting(event.data.can_invite_users_group);
  }
});

const mayCreateLinks = () => myRole() !== 600 && inGroupSetting(realm.realm_create_multiuse_invite_group);

/** Whether the header shows the Invite button (guests never may invite, whatever the settings say). */
export function mayInvite(): boolean {
  return mayInviteByEmail || mayCreateLinks();
}

function RoleAndExpiry({ role, setRole, expiry, setExpiry }: { role: string; setRole(v: string): void; expiry: string; setExpiry(v: string): void }) {
  return (
    <>
      <label>Invite as
        <select name="invite_as" value={role} onChange={(e) => setRole(e.currentTarget.value)}>
          {ROLES.filter(([n]) => n >= myRole()).map(([n, label]) => <option key={n} value={String(n)}>{label}</option>)}
        </select>
      </label>
      <label>Expires in
        <select name="invite_expires" value={expiry} onChange={(e) => setExpiry(e.currentTarget.value)}>
          {EXPIRIES.map(([value, label]) => <option key={value} value={value}>{label}</option>)}
        </select>
      </label>
    </>
  );
}

const expiryParam = (expiry: string) => (expiry === "never" ? "null" : expiry);

function InviteByEmail() {
  const [emails, setEmails] = useState("");
  const [role, setRole] = useState("400");
  const [expiry, setExpiry] = useState("14400");
  const [result, setResult] = useState("");
  const [error, busy, run] = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    setResult("");
    void run(async () => {
      await api("POST", "/invites", {
        invitee_emails: emails,
        invite_as: role,
        invite_expires_in_minutes: expiryParam(expiry),
        stream_ids: "[]",
        include_realm_default_subscriptions: "true",
      });
      const sent = emails.split(/[,\n]/).map((a) => a.trim()).filter(Boolean);
      // Whether the email went out or the server has no mail set up: the invitations' own status says.
      const { invites } = await api("GET", "/invites");
      const unsent = (invites ?? []).filter((i: any) => sent.includes(i.email) && i.email_status === "not_sent").length;
      setResult(unsent
        ? `Invitation recorded, but this server cannot send email yet: ask an administrator for the link, or share an invitation link.`
        : `Invitation sent to ${sent.join(", ")}.`);
      setEmails("");
    });
  };
  return (
    <form class="invite-email" onSubmit={submit}>
      <h3>Invite by email</h3>
      <label>Email addresses (one per line, or separated by commas)
        <textarea name="invitee_emails" rows={3} required value={emails} onInput={(e) => setEmails(e.currentTarget.value)} />
      </label>
      <RoleAndExpiry role={role} setRole={setRole} expiry={expiry} setExpiry={setExpiry} />
      <button type="submit" class="primary" disabled={busy}>Invite</button>
      {result && <p class="result" role="status">{result}</p>}
      {error && <p class="error" role="alert">{error}</p>}
    </form>
  );
}

function InviteLink() {
  const [role, setRole] = useState("400");
  const [expiry, setExpiry] = useState("14400");
  const [link, setLink] = useState("");
  const [copied, setCopied] = useState(false);
  const [error, busy, run] = useAction();
  const create = () => {
    setCopied(false);
    void run(async () => {
      const answer = await api("POST", "/invites/multiuse", {
        invite_as: role,
        invite_expires_in_minutes: expiryParam(expiry),
        stream_ids: "[]",
        include_realm_default_subscriptions: "true",
      });
      setLink(answer.invite_link);
    });
  };
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(link);
      setCopied(true);
    } catch {
      // No clipboard permission: the link is selected in its box for the user to copy.
      (document.querySelector("input[name=invite_link]") as HTMLInputElement | null)?.select();
    }
  };
  return (
    <div class="invite-link">
      <h3>Invitation link</h3>
      <p class="hint">Anyone with the link can join until it expires.</p>
      <RoleAndExpiry role={role} setRole={setRole} expiry={expiry} setExpiry={setExpiry} />
      <button type="button" class="primary create-link" disabled={busy} onClick={create}>Create link</button>
      {link && (
        <p class="made-link">
          <input name="invite_link" readOnly value={link} aria-label="Invitation link" onFocus={(e) => e.currentTarget.select()} />
          <button type="button" class="copy-link" onClick={copy}>{copied ? "Copied" : "Copy"}</button>
        </p>
      )}
      {error && <p class="error" role="alert">{error}</p>}
    </div>
  );
}

export function InvitePanel(_: { version: number }) {
  return (
    <div class="invite-panel">
      {mayInviteByEmail && <InviteByEmail />}
      {mayCreateLinks() && <InviteLink />}
    </div>
  );
}
