/**
 * Browser notifications (the Notification API, once the user has allowed them from
 * the settings) and a short sound, for direct messages, mentions and followed topics,
 * as the user's settings say. Nothing is shown for one's own messages, nor for a
 * message in the conversation the user is looking at.
 */
import { feed } from "./feed";
import { hashOf } from "./feedview";
import type { Message } from "./model";
import { narrowMatches, dmPartners } from "./narrow";
import { onEvent, onRegister, prefs } from "./panels";
import { channelName, S, userName } from "./state";

export type Permission = NotificationPermission | "unsupported";
export const notificationPermission = (): Permission => ("Notification" in window ? Notification.permission : "unsupported");
export async function requestNotifications(): Promise<Permission> {
  if (!("Notification" in window)) return "unsupported";
  return Notification.requestPermission();
}

const FOLLOWED = 3;
/** Followed topics, as `streamId:topic` lower-cased. */
const followed = new Set<string>();
const topicKey = (streamId: number, topic: string) => `${streamId}:${topic.toLowerCase()}`;

onRegister((state) => {
  followed.clear();
  for (const t of state.user_topics ?? []) if (t.visibility_policy === FOLLOWED) followed.add(topicKey(t.stream_id, t.topic_name));
});

onEvent((event) => {
  if (event.type === "user_topic") {
    const key = topicKey(event.stream_id, event.topic_name);
    if (event.visibility_policy === FOLLOWED) followed.add(key);
    else followed.delete(key);
  } else if (event.type === "message") {
    alertFor({ ...event.message, flags: event.flags ?? [] });
  }
});

/** Why a message deserves an alert, or null: "direct", "mention" or "followed". */
function reasonFor(m: Message): "direct" | "mention" | "followed" | null {
  if (m.sender_id === S.me.user_id || m.flags.includes("read")) return null;
  if (m.type === "private") return "direct";
  if (m.flags.includes("mentioned") || (m.flags.some((f) => f.includes("wildcard_mentioned")) && prefs.wildcard_mentions_notify !== false)) return "mention";
  if (m.stream_id !== undefined && followed.has(topicKey(m.stream_id, m.subject))) return "followed";
  return null;
}

const textOf = (html: string) => new DOMParser().parseFromString(html, "text/html").body.textContent?.trim() ?? "";

function alertFor(m: Message): void {
  const reason = reasonFor(m);
  if (!reason) return;
  // Looking at it already: nothing to say.
  if (document.visibilityState === "visible" && document.hasFocus() && narrowMatches(feed.narrow, m, S.me.user_id)) return;
  const desktop = reason === "followed" ? prefs.enable_followed_topic_desktop_notifications : prefs.enable_desktop_notifications;
  const sound = reason === "followed" ? prefs.enable_followed_topic_audible_notifications : prefs.enable_sounds;
  if (desktop && notificationPermission() === "granted") show(m);
  if (sound) beep();
}

function show(m: Message): void {
  const where = m.type === "private" ? { kind: "dm" as const, ids: dmPartners(m, S.me.user_id) } : { kind: "channel" as const, streamId: m.stream_id!, topic: m.subject };
  const title = m.type === "private" ? userName(m.sender_id) : `${userName(m.sender_id)} (#${channelName(m.stream_id!)} > ${m.subject})`;
  const body = m.type === "private" && prefs.pm_content_in_desktop_notifications === false ? "New direct message" : textOf(m.content).slice(0, 300);
  const note = new Notification(title, { body, tag: String(m.id) });
  note.onclick = () => {
    window.focus();
    location.hash = hashOf(where);
    note.close();
  };
}

let audio: AudioContext | undefined;
/** A short two-tone chime, synthesized: no sound file to fetch. */
function beep(): void {
  try {
    audio ??= new AudioContext();
    const start = audio.currentTime;
    for (const [i, frequency] of [880, 1320].entries()) {
      const tone = audio.createOscillator();
      const gain = audio.createGain();
      tone.frequency.value = frequency;
      gain.gain.setValueAtTime(0.08, start + i * 0.12);
      gain.gain.exponentialRampToValueAtTime(0.001, start + i * 0.12 + 0.2);
      tone.connect(gain).connect(audio.destination);
      tone.start(start + i * 0.12);
      tone.stop(start + i * 0.12 + 0.2);
    }
  } catch {
    // No audio here (a browser without Web Audio): the notification is enough.
  }
}
