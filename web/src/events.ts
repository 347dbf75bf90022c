/**
 * Real time: POST /register, then a GET /events long-poll loop that applies every
 * event the views show. A lost queue (BAD_EVENT_QUEUE_ID) means registering again and
 * reloading the view; an unreachable server is retried with exponential backoff
 * while the page says it is reconnecting.
 */
import { api, ApiError } from "./api";
import { feed, offerMessage, openNarrow, refilter } from "./feed";
import type { Message } from "./model";
import { notifyListeners, notifyRegistered } from "./panels";
import { applyPresences, applyRegister, changed, connection, markUnread, noteMessage, S, streamKey } from "./state";

const EVENT_TYPES = [
  "message", "update_message", "delete_message", "reaction", "update_message_flags", "typing",
  "presence", "subscription", "stream", "realm_user", "realm_emoji", "realm",
  "user_settings", "user_status", "user_topic", "user_group",
];

let queue = { id: "", lastEventId: -1 };

export async function register(): Promise<void> {
  const state = await api("POST", "/register", {
    apply_markdown: true,
    client_gravatar: false,
    slim_presence: true,
    event_types: EVENT_TYPES,
    fetch_event_types: [...EVENT_TYPES, "recent_private_conversations", "realm_user_groups"],
    client_capabilities: { notification_settings_null: true, bulk_message_deletion: true, user_avatar_url_field_optional: false, stream_typing_notifications: true, user_settings_object: true, simplified_presence_events: true },
  });
  queue = { id: state.queue_id, lastEventId: state.last_event_id };
  applyRegister(state);
  notifyRegistered(state);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs for the life of the page. */
export async function pollForever(): Promise<void> {
  let failures = 0;
  for (;;) {
    try {
      // After a failure, a quick call first: a long-poll that reaches the server may
      // not answer for a minute, and the page should stop saying it is reconnecting now.
      if (failures > 0) {
        await api("GET", "/users/me");
        connection.value = "live";
      }
      const { events } = await api("GET", "/events", { queue_id: queue.id, last_event_id: queue.lastEventId });
      connection.value = "live";
      failures = 0;
      for (const event of events) {
        queue.lastEventId = Math.max(queue.lastEventId, event.id);
        try {
          applyEvent(event);
          notifyListeners(event);
        } catch (e) {
          console.warn("Could not apply event", event.type, e);
        }
      }
      changed();
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) return;
      if (e instanceof ApiError && e.code === "BAD_EVENT_QUEUE_ID") {
        // The queue expired (a laptop asleep): start over with fresh state.
        try {
          await register();
          await openNarrow(feed.narrow);
          continue;
        } catch {
          // Fall through to the backoff.
        }
      }
      failures++;
      connection.value = "reconnecting";
      await sleep(Math.min(30_000, 500 * 2 ** Math.min(failures, 6)) * (0.75 + Math.random() / 2));
    }
  }
}

function applyEvent(event: any): void {
  switch (event.type) {
    case "message": {
      const m: Message = { ...event.message, flags: event.flags ?? [] };
      noteMessage(m);
      markUnread(m);
      if (m.flags.some((f) => f.includes("mentioned")) && !m.flags.includes("read")) S.unreadMentions.add(m.id);
      offerMessage(m);
      clearTyping(m.sender_id);
      break;
    }
    case "update_message": {
      for (const id of event.message_ids ?? [event.message_id]) {
        const m = S.messages.get(id);
        if (!m) continue;
        if (id === event.message_id && event.rendered_content !== undefined) {
          m.content = event.rendered_content;
          m.last_edit_timestamp = event.edit_timestamp;
        }
        const moved = event.new_stream_id !== undefined || event.subject !== undefined;
        if (event.new_stream_id !== undefined) m.stream_id = event.new_stream_id;
        if (event.subject !== undefined) m.subject = event.subject;
        if (moved) {
          m.last_moved_timestamp = event.edit_timestamp;
          noteMessage(m);
          if (S.unread.has(id)) S.unread.set(id, streamKey(m.stream_id!, m.subject));
        }
      }
      refilter();
      break;
    }
    case "delete_message":
      for (const id of event.message_ids ?? [event.message_id]) {
        S.messages.delete(id);
        S.unread.delete(id);
        S.unreadMentions.delete(id);
      }
      refilter();
      break;
    case "reaction": {
      const m = S.messages.get(event.message_id);
      if (!m) break;
      const same = (r: any) => r.user_id === event.user_id && r.emoji_code === event.emoji_code && r.reaction_type === event.reaction_type;
      if (event.op === "add" && !m.reactions.some(same)) m.reactions = [...m.reactions, { emoji_name: event.emoji_name, emoji_code: event.emoji_code, reaction_type: event.reaction_type, user_id: event.user_id }];
      if (event.op === "remove") m.reactions = m.reactions.filter((r) => !same(r));
      break;
    }
    case "update_message_flags":
      applyFlags(event);
      break;
    case "typing": {
      const key = event.message_type === "stream"
        ? streamKey(event.stream_id, event.topic)
        : `d:${[...new Set<number>([...event.recipients.map((r: any) => r.user_id)])].filter((id) => id !== S.me.user_id).sort((a, b) => a - b).join(",")}`;
      let typers = S.typing.get(key);
      if (!typers) S.typing.set(key, (typers = new Map()));
      if (event.op === "start") typers.set(event.sender.user_id, Date.now() + 15_000);
      else typers.delete(event.sender.user_id);
      break;
    }
    case "presence":
      if (event.presences) applyPresences(event.presences);
      else if (event.user_id) {
        const seen = event.presence?.website?.timestamp ?? Date.now() / 1000;
        const status = event.presence?.website?.status;
        S.presence.set(event.user_id, { active: status === "active" ? seen : 0, idle: seen });
      }
      break;
    case "subscription":
      if (event.op === "add") for (const sub of event.subscriptions) S.subs.set(sub.stream_id, sub);
      else if (event.op === "remove") for (const sub of event.subscriptions) S.subs.delete(sub.stream_id);
      else if (event.op === "update") {
        const sub = S.subs.get(event.stream_id);
        if (sub) (sub as any)[event.property] = event.value;
      }
      break;
    case "stream":
      if (event.op === "update") {
        const sub = S.subs.get(event.stream_id);
        if (sub && ["name", "description", "invite_only"].includes(event.property)) (sub as any)[event.property] = event.value;
      } else if (event.op === "delete") for (const s of event.streams) S.subs.delete(s.stream_id);
      break;
    case "realm_user":
      if (event.op === "add") S.users.set(event.person.user_id, event.person);
      else if (event.op === "update") {
        const user = S.users.get(event.person.user_id);
        if (user) Object.assign(user, event.person);
      } else if (event.op === "remove") {
        const user = S.users.get(event.person.user_id);
        if (user) user.is_active = false;
      }
      break;
    case "realm_emoji":
      S.realmEmoji.clear();
      for (const e of Object.values(event.realm_emoji ?? {}) as any[]) S.realmEmoji.set(e.id, e);
      break;
    case "realm":
      if (event.op === "update" && event.property === "name") S.realmName = event.value;
      else if (event.op === "update_dict" && event.data?.name) S.realmName = event.data.name;
      break;
  }
}

function applyFlags(event: any): void {
  const ids: number[] = event.messages ?? [];
  const add = event.op === "add";
  for (const id of ids) {
    const m = S.messages.get(id);
    if (m) m.flags = add ? [...new Set([...m.flags, event.flag])] : m.flags.filter((f) => f !== event.flag);
    if (event.flag !== "read") continue;
    if (add) {
      S.unread.delete(id);
      S.unreadMentions.delete(id);
    } else if (m) markUnread(m);
    else {
      const details = event.message_details?.[id];
      if (!details) continue;
      S.unread.set(id, details.type === "stream" ? streamKey(details.stream_id, details.topic) : `d:${(details.user_ids ?? []).sort((a: number, b: number) => a - b).join(",")}`);
    }
  }
  if (add && event.flag === "read" && event.all) {
    S.unread.clear();
    S.unreadMentions.clear();
  }
  if (event.flag === "starred") refilter();
}

function clearTyping(userId: number): void {
  for (const typers of S.typing.values()) typers.delete(userId);
}
