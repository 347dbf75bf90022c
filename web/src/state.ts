/**
 * What the client knows, filled by POST /register and kept current by the events.
 * The maps are plain; `rev` is the one signal the views read, bumped after each
 * change, so a batch of events re-renders once.
 */
import { signal } from "@preact/signals";
import type { Message, RealmEmoji, Sub, User } from "./model";
import { conversationKey, dmPartners } from "./narrow";

export const rev = signal(0);
export const connection = signal<"connecting" | "live" | "reconnecting">("connecting");

export const S = {
  me: { user_id: 0, full_name: "", email: "", is_admin: false },
  realmName: "",
  users: new Map<number, User>(),
  subs: new Map<number, Sub>(),
  messages: new Map<number, Message>(),
  /** Unread message → its conversation key. */
  unread: new Map<number, string>(),
  unreadMentions: new Set<number>(),
  /** Per channel: topic (lower-cased) → its name as written and its newest message. */
  topics: new Map<number, Map<string, { name: string; maxId: number }>>(),
  /** DM conversations by partner ids ("3,5"), newest message. */
  dms: new Map<string, number>(),
  presence: new Map<number, { active: number; idle: number }>(),
  /** Conversation key → typing user → when their notice lapses (ms). */
  typing: new Map<string, Map<number, number>>(),
  realmEmoji: new Map<string, RealmEmoji>(),
  /** Clock difference to the server, for presence ages. */
  serverOffset: 0,
};

let pending = false;
/** Re-render soon (once per task, whatever the number of changes). */
export function changed(): void {
  if (pending) return;
  pending = true;
  queueMicrotask(() => {
    pending = false;
    rev.value++;
  });
}

export const userName = (id: number) => S.users.get(id)?.full_name ?? `User ${id}`;
export const channelName = (id: number) => S.subs.get(id)?.name ?? `channel ${id}`;

export function streamKey(streamId: number, topic: string): string {
  return `s:${streamId}:${topic.toLowerCase()}`;
}

export function noteTopic(streamId: number, topic: string, id: number): void {
  let topics = S.topics.get(streamId);
  if (!topics) S.topics.set(streamId, (topics = new Map()));
  const key = topic.toLowerCase();
  const known = topics.get(key);
  if (!known || known.maxId < id) topics.set(key, { name: topic, maxId: id });
}

/** Counts per conversation key, per channel, and in all. */
export function unreadCounts(): { byKey: Map<string, number>; byChannel: Map<number, number>; dms: number; total: number } {
  const byKey = new Map<string, number>();
  const byChannel = new Map<number, number>();
  let dms = 0;
  let total = 0;
  for (const key of S.unread.values()) {
    byKey.set(key, (byKey.get(key) ?? 0) + 1);
    if (key.startsWith("s:")) {
      const id = Number(key.split(":")[1]);
      const sub = S.subs.get(id);
      if (!sub) continue;
      byChannel.set(id, (byChannel.get(id) ?? 0) + 1);
      if (!sub.is_muted) total++;
    } else {
      dms++;
      total++;
    }
  }
  return { byKey, byChannel, dms, total };
}

export function applyRegister(state: any): void {
  S.me = { user_id: state.user_id, full_name: state.full_name, email: state.email, is_admin: state.is_admin };
  S.realmName = state.realm_name ?? "";
  S.users.clear();
  for (const u of [...(state.realm_users ?? []), ...(state.cross_realm_bots ?? [])]) S.users.set(u.user_id, u);
  S.subs.clear();
  for (const sub of state.subscriptions ?? []) S.subs.set(sub.stream_id, sub);
  S.unread.clear();
  S.unreadMentions.clear();
  const unread = state.unread_msgs ?? {};
  for (const s of unread.streams ?? []) {
    for (const id of s.unread_message_ids) S.unread.set(id, streamKey(s.stream_id, s.topic));
    noteTopic(s.stream_id, s.topic, Math.max(...s.unread_message_ids));
  }
  for (const p of unread.pms ?? []) for (const id of p.unread_message_ids) S.unread.set(id, `d:${p.other_user_id}`);
  for (const g of unread.huddles ?? []) {
    const others = String(g.user_ids_string).split(",").map(Number).filter((id) => id !== S.me.user_id);
    for (const id of g.unread_message_ids) S.unread.set(id, `d:${others.sort((a, b) => a - b).join(",")}`);
  }
  for (const id of unread.mentions ?? []) S.unreadMentions.add(id);
  S.dms.clear();
  for (const c of state.recent_private_conversations ?? []) {
    const ids = c.user_ids.length ? c.user_ids : [S.me.user_id];
    S.dms.set([...ids].sort((a: number, b: number) => a - b).join(","), c.max_message_id);
  }
  S.presence.clear();
  applyPresences(state.presences ?? {});
  S.serverOffset = state.server_timestamp ? state.server_timestamp * 1000 - Date.now() : 0;
  S.realmEmoji.clear();
  for (const e of Object.values(state.realm_emoji ?? {}) as RealmEmoji[]) S.realmEmoji.set(e.id, e);
  changed();
}

export function applyPresences(presences: Record<string, { active_timestamp: number; idle_timestamp: number }>): void {
  for (const [id, p] of Object.entries(presences)) S.presence.set(Number(id), { active: p.active_timestamp, idle: p.idle_timestamp });
}

/** Remembers a message (from a fetch or an event) and what it says about conversations. */
export function noteMessage(m: Message): void {
  m.reactions ??= [];
  m.flags ??= [];
  S.messages.set(m.id, m);
  if (m.type === "stream" && m.stream_id !== undefined) noteTopic(m.stream_id, m.subject, m.id);
  else {
    const key = dmPartners(m, S.me.user_id).join(",");
    if ((S.dms.get(key) ?? 0) < m.id) S.dms.set(key, m.id);
  }
}

export function markUnread(m: Message): void {
  if (m.flags.includes("read")) S.unread.delete(m.id);
  else S.unread.set(m.id, conversationKey(m, S.me.user_id));
}

/** "active", "idle" or "offline", as Zulip's web app judges presence ages. */
export function presenceOf(userId: number): "active" | "idle" | "offline" {
  const p = S.presence.get(userId);
  if (!p) return "offline";
  const now = (Date.now() + S.serverOffset) / 1000;
  if (now - p.active < 140) return "active";
  if (now - p.idle < 140) return "idle";
  return "offline";
}
