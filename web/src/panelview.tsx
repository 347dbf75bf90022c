/** The panel over the feed (channels, personal settings), closed with its button or Escape. */
import { ChannelsPanel } from "./channels";
import { InvitePanel, mayInvite } from "./invite";
import { panel, type PanelName } from "./panels";
import { ProfileCard } from "./profile";
import { SettingsPanel } from "./settings";

const TITLES = { channels: "Channels", settings: "Personal settings", invite: "Invite teammates" };

export function PanelButtons() {
  const toggle = (name: PanelName) => (panel.value = panel.value === name ? null : name);
  return (
    <>
      <button type="button" class="open-channels" aria-pressed={panel.value === "channels"} onClick={() => toggle("channels")}>Channels</button>
      <button type="button" class="open-settings" aria-pressed={panel.value === "settings"} onClick={() => toggle("settings")}>Settings</button>
      {mayInvite() && <button type="button" class="open-invite" aria-pressed={panel.value === "invite"} onClick={() => toggle("invite")}>Invite</button>}
    </>
  );
}

export function Panels({ version }: { version: number }) {
  const name = panel.value;
  if (!name) return <ProfileCard />;
  return (
    <section class={`panel panel-${name}`} role="dialog" aria-label={TITLES[name]} onKeyDown={(e) => e.key === "Escape" && (panel.value = null)}>
      <header>
        <h2>{TITLES[name]}</h2>
        <button type="button" class="close" aria-label="Close" onClick={() => (panel.value = null)}>✕</button>
      </header>
      {name === "channels" ? <ChannelsPanel version={version} /> : name === "invite" ? <InvitePanel version={version} /> : <SettingsPanel version={version} />}
    </section>
  );
}
