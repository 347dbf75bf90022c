/**
 * Which panel covers the feed (channels, settings, a profile card), and a hook through
 * which panel modules see each event after the core state has applied it.
 */
import { signal } from "@preact/signals";

export type PanelName = "channels" | "settings" | "invite" | null;
export const panel = signal<PanelName>(null);
/** The user whose profile card is open, if any. */
export const profileOf = signal<number | null>(null);

const listeners: ((event: any) => void)[] = [];
export function onEvent(listener: (event: any) => void): void {
  listeners.push(listener);
}
export function notifyListeners(event: any): void {
  for (const listener of listeners) {
    try {
      listener(event);
    } catch (e) {
      console.warn("A panel could not apply an event", event.type, e);
    }
  }
}

const registerListeners: ((state: any) => void)[] = [];
/** Called with the whole POST /register answer, each time the queue is (re)registered. */
export function onRegister(listener: (state: any) => void): void {
  registerListeners.push(listener);
}
export function notifyRegistered(state: any): void {
  for (const listener of registerListeners) listener(state);
}

/**
 * The personal settings the client acts on (from `user_settings` in POST /register and
 * its update events): time format, theme, notifications. Zulip's defaults until known.
 */
export const prefs: Record<string, any> = {
  twenty_four_hour_time: false,
  color_scheme: 1,
  enable_desktop_notifications: true,
  enable_followed_topic_desktop_notifications: true,
  enable_sounds: true,
  enable_followed_topic_audible_notifications: true,
  pm_content_in_desktop_notifications: true,
};
