/**
 * Personal settings: name, avatar, password, time format, theme and notification
 * preferences. Values shown come from the events (`user_settings`, `realm_user`), so
 * a change made elsewhere shows here too.
 */
import { useState } from "preact/hooks";
import { api, csrfToken, errorText } from "./api";
import { Avatar } from "./message";
import { notificationPermission, requestNotifications } from "./notify";
import { onEvent, onRegister, prefs } from "./panels";
import { changed, rev, S } from "./state";
import { useAction } from "./use_action";

/** color_scheme: 1 follows the system, 2 is dark, 3 is light (Zulip's values). */
export function applyTheme(): void {
  const theme = prefs.color_scheme === 2 ? "dark" : prefs.color_scheme === 3 ? "light" : "";
  if (theme) document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
}

onRegister((state) => {
  Object.assign(prefs, state.user_settings ?? {});
  applyTheme();
});
onEvent((event) => {
  if (event.type === "user_settings" && event.op === "update") {
    prefs[event.property] = event.value;
    if (event.property === "color_scheme") applyTheme();
  } else if (event.type === "realm_user" && event.op === "update" && event.person.user_id === S.me.user_id && event.person.full_name) {
    S.me.full_name = event.person.full_name;
  }
});

const Problem = ({ text }: { text: string }) => (text ? <p class="error" role="alert">{text}</p> : null);

function NameForm() {
  const [name, setName] = useState(S.me.full_name);
  const [error, busy, run] = useAction();
  return (
    <form class="name-form" onSubmit={(e) => { e.preventDefault(); void run(() => api("PATCH", "/settings", { full_name: name.trim() })); }}>
      <label>Full name <input name="full_name" required value={name} onInput={(e) => setName(e.currentTarget.value)} /></label>
      <button type="submit" disabled={busy}>Save name</button>
      <Problem text={error} />
    </form>
  );
}

async function uploadAvatar(file: File): Promise<void> {
  const body = new FormData();
  body.append("file", file);
  const response = await fetch("/json/users/me/avatar", { method: "POST", body, headers: { "X-CSRFToken": csrfToken() }, credentials: "same-origin" });
  const data = await response.json().catch(() => null);
  if (!response.ok || data?.result !== "success") throw new Error(data?.msg || `The server answered ${response.status}.`);
}

/** Reading `rev` re-renders these when the state changes (they have no props that would). */
function AvatarForm() {
  void rev.value;
  const [error, busy, run] = useAction();
  const me = S.users.get(S.me.user_id);
  return (
    <div class="avatar-form">
      <Avatar userId={S.me.user_id} url={me?.avatar_url} name={S.me.full_name} size={64} />
      <label>Avatar <input type="file" name="avatar" accept="image/*" disabled={busy} onChange={(e) => {
        const file = e.currentTarget.files?.[0];
        if (file) void run(() => uploadAvatar(file));
      }} /></label>
      <Problem text={error} />
    </div>
  );
}

function PasswordForm() {
  const [old, setOld] = useState("");
  const [fresh, setFresh] = useState("");
  const [error, busy, run] = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    // A new password ends every session, this one too: sign in again with it.
    if (await run(() => api("PATCH", "/settings", { old_password: old, new_password: fresh }))) location.assign("/login?next=/");
  };
  return (
    <form class="password-form" onSubmit={submit}>
      <h3>Password</h3>
      <label>Current password <input type="password" name="old_password" autocomplete="current-password" required value={old} onInput={(e) => setOld(e.currentTarget.value)} /></label>
      <label>New password <input type="password" name="new_password" autocomplete="new-password" required value={fresh} onInput={(e) => setFresh(e.currentTarget.value)} /></label>
      <button type="submit" disabled={busy}>Change password</button>
      <p class="hint">Changing it signs you out everywhere.</p>
      <Problem text={error} />
    </form>
  );
}

/** A setting saved as soon as it changes; the event brings the new value back. */
function Setting({ name, label, patch }: { name: string; label: string; patch(params: Record<string, unknown>): void }) {
  return (
    <label class="check">
      <input type="checkbox" name={name} checked={!!prefs[name]} onChange={(e) => patch({ [name]: e.currentTarget.checked })} /> {label}
    </label>
  );
}

function Preferences() {
  void rev.value;
  const [error, setError] = useState("");
  const patch = (params: Record<string, unknown>) => {
    setError("");
    void api("PATCH", "/settings", params).catch((err) => setError(errorText(err)));
  };
  const permission = notificationPermission();
  return (
    <div class="preferences">
      <h3>Display</h3>
      <label>Time format
        <select name="twenty_four_hour_time" value={String(prefs.twenty_four_hour_time)} onChange={(e) => patch({ twenty_four_hour_time: e.currentTarget.value === "true" })}>
          <option value="false">1:30 PM</option>
          <option value="true">13:30</option>
        </select>
      </label>
      <label>Theme
        <select name="color_scheme" value={String(prefs.color_scheme)} onChange={(e) => patch({ color_scheme: Number(e.currentTarget.value) })}>
          <option value="1">Follow the system</option>
          <option value="3">Light</option>
          <option value="2">Dark</option>
        </select>
      </label>
      <h3>Notifications</h3>
      <p class="notify-permission">
        {permission === "granted" ? "Browser notifications are on for this browser."
          : permission === "denied" ? "This browser blocks notifications from Hearth; allow them in its site settings."
          : permission === "unsupported" ? "This browser cannot show notifications."
          : <button type="button" class="enable-notifications" onClick={() => void requestNotifications().then(changed)}>Enable browser notifications</button>}
      </p>
      <Setting name="enable_desktop_notifications" label="Notify me of direct messages and mentions" patch={patch} />
      <Setting name="enable_followed_topic_desktop_notifications" label="Notify me of messages in topics I follow" patch={patch} />
      <Setting name="pm_content_in_desktop_notifications" label="Show the message's text in notifications" patch={patch} />
      <Setting name="enable_sounds" label="Play a sound for direct messages and mentions" patch={patch} />
      <Setting name="enable_followed_topic_audible_notifications" label="Play a sound for topics I follow" patch={patch} />
      <Problem text={error} />
    </div>
  );
}

export function SettingsPanel(_: { version: number }) {
  return (
    <div class="settings-panel">
      <h3>Profile</h3>
      <NameForm />
      <AvatarForm />
      <PasswordForm />
      <Preferences />
    </div>
  );
}
