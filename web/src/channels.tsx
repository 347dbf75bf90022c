/**
 * Channels: a panel to browse every channel one may see (description, subscribers,
 * subscribe / unsubscribe) and to create one; and per subscription, from the sidebar,
 * mute, pin and colour. Everything shown follows the events, not the answers.
 */
import { useState } from "preact/hooks";
import { api, errorText } from "./api";
import { hashOf } from "./feedview";
import type { Sub } from "./model";
import { onEvent, panel } from "./panels";
import { changed, rev, S } from "./state";
import { useAction } from "./use_action";

interface Channel {
  stream_id: number;
  name: string;
  description: string;
  invite_only: boolean;
  subscriber_count?: number;
}

/** Every channel the user may see, by id; loaded when the panel first opens. */
const channels = new Map<number, Channel>();
let loaded = false;

async function loadChannels(): Promise<void> {
  const { streams } = await api("GET", "/streams");
  channels.clear();
  for (const c of streams) channels.set(c.stream_id, c);
  loaded = true;
  changed();
}

function adjustCount(streamId: number, by: number): void {
  const c = channels.get(streamId);
  if (c && c.subscriber_count !== undefined) c.subscriber_count = Math.max(0, c.subscriber_count + by);
}

onEvent((event) => {
  if (event.type === "stream") {
    if (event.op === "create") for (const c of event.streams) channels.set(c.stream_id, { ...c, subscriber_count: c.subscriber_count ?? 0 });
    else if (event.op === "delete") for (const c of event.streams) channels.delete(c.stream_id);
    else if (event.op === "update") {
      const c = channels.get(event.stream_id);
      if (c) (c as any)[event.property] = event.value;
    }
  } else if (event.type === "subscription") {
    if (event.op === "add") for (const sub of event.subscriptions) {
      const known = channels.get(sub.stream_id);
      channels.set(sub.stream_id, { ...sub, subscriber_count: sub.subscriber_count ?? (known?.subscriber_count ?? 0) + 1 });
    }
    else if (event.op === "remove") for (const sub of event.subscriptions) adjustCount(sub.stream_id, -1);
    else if (event.op === "peer_add") for (const id of event.stream_ids) adjustCount(id, event.user_ids.length);
    else if (event.op === "peer_remove") for (const id of event.stream_ids) adjustCount(id, -event.user_ids.length);
  }
});

const subscribe = (name: string) => api("POST", "/users/me/subscriptions", { subscriptions: [{ name }] });
const unsubscribe = (name: string) => api("DELETE", "/users/me/subscriptions", { subscriptions: [name] });

function CreateChannel() {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [isPrivate, setPrivate] = useState(false);
  const [error, busy, run] = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await api("POST", "/users/me/subscriptions", { subscriptions: [{ name: name.trim(), description }], invite_only: isPrivate });
      setName("");
      setDescription("");
      setPrivate(false);
    });
  };
  return (
    <form class="create-channel" onSubmit={submit}>
      <h3>Create a channel</h3>
      <label>Name <input name="channel-name" required maxLength={60} value={name} onInput={(e) => setName(e.currentTarget.value)} /></label>
      <label>Description <input name="channel-description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} /></label>
      <label class="check"><input type="checkbox" name="channel-private" checked={isPrivate} onChange={(e) => setPrivate(e.currentTarget.checked)} /> Private (invited members only)</label>
      <button type="submit" class="primary" disabled={busy}>Create</button>
      {error && <p class="error" role="alert">{error}</p>}
    </form>
  );
}

export function ChannelsPanel(_: { version: number }) {
  const [error, setError] = useState("");
  const [filter, setFilter] = useState("");
  if (!loaded) void loadChannels().catch((e) => setError(errorText(e)));
  const shown = [...channels.values()]
    .filter((c) => c.name.toLowerCase().includes(filter.toLowerCase()))
    .sort((a, b) => a.name.localeCompare(b.name));
  const act = (c: Channel) => {
    setError("");
    void (S.subs.has(c.stream_id) ? unsubscribe(c.name) : subscribe(c.name)).catch((e) => setError(`${c.name}: ${errorText(e)}`));
  };
  return (
    <div class="channels-panel">
      <input type="search" aria-label="Filter channels" placeholder="Filter channels" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
      {error && <p class="error" role="alert">{error}</p>}
      <ul class="all-channels">
        {shown.map((c) => {
          const subscribed = S.subs.has(c.stream_id);
          return (
            <li key={c.stream_id} data-stream-id={c.stream_id}>
              <div class="about">
                <a href={hashOf({ kind: "channel", streamId: c.stream_id })} onClick={() => (panel.value = null)}>{c.invite_only ? "🔒" : "#"} {c.name}</a>
                <span class="subscribers">{c.subscriber_count ?? "?"} {c.subscriber_count === 1 ? "subscriber" : "subscribers"}</span>
                {c.description && <p class="description">{c.description}</p>}
              </div>
              <button type="button" class={subscribed ? "unsubscribe" : "subscribe primary"} onClick={() => act(c)}>{subscribed ? "Unsubscribe" : "Subscribe"}</button>
            </li>
          );
        })}
      </ul>
      <CreateChannel />
    </div>
  );
}

async function setProperty(sub: Sub, property: string, value: boolean | string, setError: (t: string) => void): Promise<void> {
  setError("");
  await api("POST", "/users/me/subscriptions/properties", { subscription_data: [{ stream_id: sub.stream_id, property, value }] }).catch((e) => setError(errorText(e)));
}

/** The ⋯ button beside a channel in the sidebar and the settings it opens. */
export function SubscriptionSettings({ sub }: { sub: Sub }) {
  const [open, setOpen] = useState(false);
  const [error, setError] = useState("");
  // The subscription changes in place: reading `rev` re-renders on each change.
  void rev.value;
  return (
    <>
      <button type="button" class="sub-settings-toggle" aria-expanded={open} aria-label={`Settings for ${sub.name}`} onClick={() => setOpen(!open)}>⋯</button>
      {open && (
        <div class="sub-settings">
          <label class="check"><input type="checkbox" name="is_muted" checked={sub.is_muted} onChange={(e) => void setProperty(sub, "is_muted", e.currentTarget.checked, setError)} /> Mute</label>
          <label class="check"><input type="checkbox" name="pin_to_top" checked={sub.pin_to_top} onChange={(e) => void setProperty(sub, "pin_to_top", e.currentTarget.checked, setError)} /> Pin to top</label>
          <label class="check">Colour <input type="color" name="color" value={sub.color} onChange={(e) => void setProperty(sub, "color", e.currentTarget.value, setError)} /></label>
          <button type="button" onClick={() => void unsubscribe(sub.name).catch((e) => setError(errorText(e)))}>Unsubscribe</button>
          {error && <p class="error" role="alert">{error}</p>}
        </div>
      )}
    </>
  );
}
