// Hearth's administration page: organization settings, default channels, adding and (de)activating users,
// invitation links, through the same Zulip API every client uses, at its /json/ paths with the
// browser's session: signing in happens at /login (which sends the browser back here), the
// session cookie is HttpOnly, and every write repeats the CSRF token from the `hearth_csrf`
// cookie in X-CSRFToken. The page never sees an API key. Text from the server is only ever
// set with textContent, never parsed as HTML.
"use strict";

const ROLES = [
  [100, "Owner"],
  [200, "Administrator"],
  [300, "Moderator"],
  [400, "Member"],
  [600, "Guest"],
];
const SETTINGS = ["allow_message_editing", "mandatory_topics", "enable_read_receipts", "name_changes_disabled", "presence_disabled"];
const LOGIN_PAGE = "/login?next=/admin/";

const $ = (id) => document.getElementById(id);
let me = null;

/** The session's CSRF token, from the cookie /login set for scripts to read. */
function csrfToken() {
  const cookie = document.cookie.split("; ").find((c) => c.startsWith("hearth_csrf="));
  return cookie ? decodeURIComponent(cookie.slice("hearth_csrf=".length)) : "";
}

/** Headers of every call: the token on writes, and no Basic challenge on a 401. */
function sessionHeaders(method) {
  const headers = { "x-requested-with": "XMLHttpRequest" };
  if (method !== "GET" && method !== "HEAD") headers["x-csrftoken"] = csrfToken();
  return headers;
}

/** Not signed in (or the session ended): to the sign-in page, which sends the browser back. */
function toLogin() {
  location.assign(LOGIN_PAGE);
}

function show(message, isError = false) {
  $("status").textContent = message;
  $("status").className = isError ? "error" : "";
}

/** One API call; resolves with the success body, rejects with Zulip's `msg`. */
async function api(method, path, params = {}) {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) body.set(name, typeof value === "string" ? value : JSON.stringify(value));
  const query = method === "GET" && body.size > 0 ? `?${body}` : "";
  const headers = sessionHeaders(method);
  if (method !== "GET") headers["content-type"] = "application/x-www-form-urlencoded";
  const res = await fetch(`/json${path}${query}`, { method, headers, body: method === "GET" ? undefined : body, credentials: "same-origin" });
  const data = await res.json().catch(() => ({ result: "error", msg: `HTTP ${res.status}` }));
  if (data.result !== "success") {
    if (res.status === 401) toLogin();
    throw new Error(data.msg || `HTTP ${res.status}`);
  }
  return data;
}

async function run(action, done) {
  try {
    await action();
    if (done !== undefined) show(done);
  } catch (e) {
    show(e.message, true);
  }
}

/** POST /logout revokes the session on the server and clears its cookies; then the sign-in page, which leads back here. */
async function logOut() {
  me = null;
  $("admin").hidden = true;
  await fetch("/logout", { method: "POST", headers: sessionHeaders("POST"), credentials: "same-origin", redirect: "manual" }).catch(() => {});
  location.assign(LOGIN_PAGE);
}

async function loadAll() {
  me = await api("GET", "/users/me");
  $("logout").hidden = false;
  $("who").textContent = me.full_name;
  if (me.role > 200) throw new Error("This page is for organization owners and administrators.");
  $("admin").hidden = false;
  $("danger").hidden = me.role !== 100;
  $("backups-section").hidden = me.role !== 100;
  $("who").textContent = me.full_name;
  // Nobody invites to a role above their own (the server refuses it too).
  const inviteRole = $("invite-link").elements.invite_as;
  inviteRole.replaceChildren(...ROLES.filter(([value]) => value >= me.role).map(([value, label]) => new Option(label, String(value), false, value === 400)));
  $("invite-email").elements.invite_as.replaceChildren(...ROLES.filter(([value]) => value >= me.role).map(([value, label]) => new Option(label, String(value), false, value === 400)));
  await Promise.all([loadSettings(), loadUsers(), loadChannels(), loadInvites(), me.role === 100 ? loadBackups() : null, loadEmailSection()]);
}

const megabytes = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const when = (seconds) => new Date(seconds * 1000).toLocaleString();

async function loadBackups() {
  const { schedule, last, backups } = await api("GET", "/hearth/backups");
  $("backup-schedule").textContent = schedule
    ? `Every ${schedule.every_seconds >= 3600 ? `${schedule.every_seconds / 3600} h` : `${schedule.every_seconds} s`} into ${schedule.dir}, keeping the newest ${schedule.keep}.`
    : "No scheduled backups: start the server with --backup-every 24h to take one a day.";
  $("backup-last").textContent = last === null ? "" : last.ok ? `Last backup: ${when(last.at)}, in ${last.seconds.toFixed(1)} s.` : `Last backup FAILED at ${when(last.at)}: ${last.error}`;
  $("backup-last").className = last !== null && !last.ok ? "error" : "";
  $("backups").replaceChildren(
    ...backups.map((backup) => {
      const row = document.createElement("tr");
      for (const text of [backup.name, megabytes(backup.size), when(backup.created)]) {
        const cell = document.createElement("td");
        cell.textContent = text;
        row.append(cell);
      }
      return row;
    }),
  );
}

/** Fetched with the page's session, then saved through a temporary link to the bytes. */
async function downloadBackup() {
  const res = await fetch("/json/hearth/backup", { headers: sessionHeaders("GET"), credentials: "same-origin" });
  if (!res.ok) throw new Error((await res.json().catch(() => ({}))).msg || `HTTP ${res.status}`);
  const name = /filename="([^"]+)"/.exec(res.headers.get("content-disposition") ?? "")?.[1] ?? "hearth-backup.tar.gz";
  const url = URL.createObjectURL(await res.blob());
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  setTimeout(() => {
    link.remove();
    URL.revokeObjectURL(url);
  }, 60_000);
  return name;
}

/** The Email section (administrators): SMTP configuration, the outbox, the last failure, a test email. */
async function loadEmailSection() {
  $("email-section").hidden = me.role > 200;
  if (me.role > 200) return;
  const status = await api("GET", "/hearth/email");
  $("email-config").textContent = status.configured
    ? `Sending through ${status.smtp_server}, from ${status.from}.`
    : "No SMTP server is configured: start Hearth with --smtp-url (or HEARTH_SMTP_URL). Until then no email is sent; invitation links are shown below the invitations to copy and pass on yourself.";
  $("email-queue").textContent = `Waiting to be sent: ${status.queued}. Given up on: ${status.failed}.`;
  $("email-last-error").textContent = status.last_error ? `Last failure (${when(status.last_error_time)}): ${status.last_error}` : "";
  $("email-last-error").className = status.last_error ? "error" : "";
  $("email-test").querySelector("button").disabled = !status.configured;
  const to = $("email-test").elements.to;
  if (!to.value) to.value = me.delivery_email ?? me.email;
}

const roleName = (value) => (ROLES.find(([v]) => v === value) ?? [0, String(value)])[1];

const expiryText = (invite) => (invite.expiry_date === null ? "never" : new Date(invite.expiry_date * 1000).toLocaleString());

/** A read-only field holding an invitation link, selected whole when focused. */
function linkInput(url) {
  const link = document.createElement("input");
  link.readOnly = true;
  link.value = url;
  link.addEventListener("focus", () => link.select());
  return link;
}

/** An invitation's table row: its cells (text or elements), then a "Revoke" button that DELETEs `revokePath`. */
function inviteRow(invite, cells, revokePath, revoked) {
  const row = document.createElement("tr");
  row.dataset.inviteId = String(invite.id);
  for (const content of cells) {
    const td = document.createElement("td");
    td.append(content);
    row.append(td);
  }
  const revoke = document.createElement("button");
  revoke.type = "button";
  revoke.className = "revoke";
  revoke.textContent = "Revoke";
  revoke.addEventListener("click", () => run(async () => {
    await api("DELETE", revokePath);
    await loadInvites();
  }, revoked));
  const actions = document.createElement("td");
  actions.append(revoke);
  row.append(actions);
  return row;
}

async function loadInvites() {
  const { invites } = await api("GET", "/invites");
  const rows = invites
    .filter((invite) => invite.is_multiuse)
    .sort((a, b) => b.invited - a.invited)
    .map((invite) => inviteRow(invite, [linkInput(invite.link_url), roleName(invite.invited_as), expiryText(invite)], `/invites/multiuse/${invite.id}`, "Invitation link revoked."));
  $("invites").replaceChildren(...rows);
  renderEmailInvites(invites);
}

const EMAIL_STATUS = { not_sent: "not emailed (no SMTP server)", queued: "waiting to be sent", failed: "sending failed", sent: "emailed" };

/** Pending email invitations; the link (administrators get it when no email carries it) with a "Copy link" button. */
function renderEmailInvites(invites) {
  const rows = invites
    .filter((invite) => !invite.is_multiuse)
    .sort((a, b) => b.invited - a.invited)
    .map((invite) => {
      const linkCell = document.createDocumentFragment();
      if (invite.link_url) {
        const link = linkInput(invite.link_url);
        link.className = "invite-link";
        const copy = document.createElement("button");
        copy.type = "button";
        copy.className = "copy-link";
        copy.textContent = "Copy link";
        copy.addEventListener("click", () => run(async () => {
          link.select();
          try {
            await navigator.clipboard.writeText(link.value);
          } catch {
            document.execCommand("copy");
          }
        }, `Link for ${invite.email} copied.`));
        linkCell.append(link, copy);
      }
      const cells = [invite.email, roleName(invite.invited_as), expiryText(invite), EMAIL_STATUS[invite.email_status] ?? "", linkCell];
      return inviteRow(invite, cells, `/invites/${invite.id}`, `Invitation for ${invite.email} revoked.`);
    });
  $("email-invites").replaceChildren(...rows);
}

async function loadSettings() {
  const state = await api("POST", "/register", { fetch_event_types: ["realm"], event_types: ["realm"] });
  // Only the state was wanted: the queue goes at once.
  await api("DELETE", "/events", { queue_id: state.queue_id }).catch(() => {});
  const form = $("settings");
  form.elements.name.value = state.realm_name;
  form.elements.description.value = state.realm_description;
  for (const name of SETTINGS) form.elements[name].checked = state[`realm_${name}`] === true;
  form.dataset.loaded = JSON.stringify(currentSettings());
}

function currentSettings() {
  const form = $("settings");
  const values = { name: form.elements.name.value, description: form.elements.description.value };
  for (const name of SETTINGS) values[name] = form.elements[name].checked;
  return values;
}

async function saveSettings() {
  const form = $("settings");
  const before = JSON.parse(form.dataset.loaded || "{}");
  const changed = {};
  for (const [name, value] of Object.entries(currentSettings())) if (before[name] !== value) changed[name] = value;
  if (Object.keys(changed).length === 0) return show("Nothing to save.");
  await api("PATCH", "/realm", changed);
  await loadSettings();
  show("Organization settings saved.");
}

async function loadUsers() {
  const { members } = await api("GET", "/users");
  const rows = members
    .filter((u) => !u.is_bot)
    .sort((a, b) => Number(b.is_active) - Number(a.is_active) || a.full_name.localeCompare(b.full_name))
    .map(userRow);
  $("users").replaceChildren(...rows);
}

function userRow(user) {
  const row = document.createElement("tr");
  row.dataset.userId = String(user.user_id);
  if (!user.is_active) row.className = "inactive";
  const cell = (text) => {
    const td = document.createElement("td");
    td.textContent = text;
    row.append(td);
    return td;
  };
  cell(user.full_name);
  cell(user.delivery_email || user.email);
  const roleCell = cell("");
  const role = document.createElement("select");
  role.name = "role";
  role.disabled = user.user_id === me.user_id || !user.is_active;
  for (const [value, label] of ROLES) role.append(new Option(label, String(value), false, value === user.role));
  role.addEventListener("change", () => run(async () => {
    try {
      await api("PATCH", `/users/${user.user_id}`, { role: Number(role.value) });
    } finally {
      // Refused or not, the list shows what the server holds.
      await loadUsers();
    }
  }, `${user.full_name} is now ${role.selectedOptions[0].text.toLowerCase()}.`));
  roleCell.append(role);
  cell(user.is_active ? "Active" : "Deactivated");
  const actions = cell("");
  if (user.user_id !== me.user_id) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = user.is_active ? "deactivate" : "reactivate";
    button.textContent = user.is_active ? "Deactivate" : "Reactivate";
    button.addEventListener("click", () => run(async () => {
      if (user.is_active) await api("DELETE", `/users/${user.user_id}`);
      else await api("POST", `/users/${user.user_id}/reactivate`);
      await loadUsers();
    }, `${user.full_name} ${user.is_active ? "deactivated" : "reactivated"}.`));
    actions.append(button);
  }
  return row;
}

async function loadChannels() {
  const { streams } = await api("GET", "/streams", { include_all: true, include_default: true, exclude_archived: true });
  const rows = streams
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((channel) => {
      const row = document.createElement("tr");
      row.dataset.channelId = String(channel.stream_id);
      const name = document.createElement("td");
      name.textContent = channel.name;
      const access = document.createElement("td");
      access.textContent = channel.invite_only ? "Private" : "Public";
      const cell = document.createElement("td");
      const box = document.createElement("input");
      box.type = "checkbox";
      box.checked = channel.is_default === true;
      // Zulip: a private channel cannot be a default one.
      box.disabled = channel.invite_only && !box.checked;
      box.addEventListener("change", () => run(async () => {
        try {
          await api(box.checked ? "POST" : "DELETE", "/default_streams", { stream_id: channel.stream_id });
        } finally {
          await loadChannels();
        }
      }, `#${channel.name} is ${box.checked ? "now" : "no longer"} a default channel.`));
      cell.append(box);
      row.append(name, access, cell);
      return row;
    });
  $("channels").replaceChildren(...rows);
}

// Two clicks, no dialog: the first arms the button, the second deactivates.
function armRealmDeactivation(button) {
  if (button.dataset.armed !== "true") {
    button.dataset.armed = "true";
    button.textContent = "Click again to deactivate the organization";
    return;
  }
  run(async () => {
    await api("POST", "/realm/deactivate");
    // Every session went with the organization.
    $("admin").hidden = true;
    $("logout").hidden = true;
  }, "The organization is deactivated.");
}

$("add-user").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.target;
  const name = form.elements.full_name.value.trim();
  run(async () => {
    await api("POST", "/users", { full_name: name, email: form.elements.email.value.trim(), password: form.elements.password.value });
    form.reset();
    await loadUsers();
  }, `${name} added.`);
});
$("invite-link").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.target;
  run(async () => {
    await api("POST", "/invites/multiuse", {
      invite_as: Number(form.elements.invite_as.value),
      invite_expires_in_minutes: JSON.parse(form.elements.expires_in_minutes.value),
      include_realm_default_subscriptions: true,
    });
    await loadInvites();
  }, "Invitation link created.");
});
$("invite-email").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.target;
  run(async () => {
    try {
      await api("POST", "/invites", {
        invitee_emails: form.elements.emails.value,
        invite_as: Number(form.elements.invite_as.value),
        stream_ids: [],
        include_realm_default_subscriptions: true,
      });
      form.reset();
    } finally {
      await Promise.all([loadInvites(), loadEmailSection()]);
    }
  }, "Invited.");
});
$("email-test").addEventListener("submit", (event) => {
  event.preventDefault();
  const to = event.target.elements.to.value.trim();
  show(`Sending a test email to ${to}…`);
  run(async () => {
    try {
      const { response } = await api("POST", "/hearth/email/test", { to });
      show(`Test email sent to ${to}. The SMTP server answered: ${response}`);
    } finally {
      await loadEmailSection();
    }
  });
});
$("settings").addEventListener("submit", (event) => {
  event.preventDefault();
  run(saveSettings);
});
$("logout").addEventListener("click", () => run(logOut));
$("deactivate-realm").addEventListener("click", (event) => armRealmDeactivation(event.target));
$("download-backup").addEventListener("click", () => {
  show("Taking a backup…");
  run(async () => {
    const name = await downloadBackup();
    show(`Backup ${name} downloaded.`);
  });
});

run(loadAll);
