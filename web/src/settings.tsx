export function SettingsPanel(_: { version: number }) {
  return <div class="settings-panel" />;
}
