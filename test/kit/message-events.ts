/**
 * Zulip's `apply_event` for message events, applied to the message parts of a
 * registered state (max_message_id, unread_msgs, recent_private_conversations,
 * starred_messages). Used by the events kit's `applyEvent`.
 */
type State = Record<string, any>;

function sortUnread(u: any): void {
  u.pms.sort((a: any, b: any) => a.other_user_id - b.other_user_id);
  u.streams.sort((a: any, b: any) => a.stream_id - b.stream_id || (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
  u.huddles.sort((a: any, b: any) => (a.user_ids_string < b.user_ids_string ? -1 : 1));
  for (const list of [u.pms, u.streams, u.huddles]) for (const b of list) b.unread_message_ids.sort((x: number, y: number) => x - y);
  u.mentions.sort((x: number, y: number) => x - y);
}

function addUnread(state: State, id: number, d: { type: string; stream_id?: number; topic?: string; user_ids?: number[]; mentioned?: boolean }): void {
  const u = state.unread_msgs;
  if (!u) return;
  u.count++;
  if (d.type === "stream") {
    let b = u.streams.find((x: any) => x.stream_id === d.stream_id && x.topic === d.topic);
    if (!b) u.streams.push((b = { stream_id: d.stream_id, topic: d.topic, unread_message_ids: [] }));
    b.unread_message_ids.push(id);
  } else if ((d.user_ids ?? []).length <= 1) {
    const other = d.user_ids?.[0] ?? state.user_id;
    let b = u.pms.find((x: any) => x.other_user_id === other);
    if (!b) u.pms.push((b = { other_user_id: other, sender_id: other, unread_message_ids: [] }));
    b.unread_message_ids.push(id);
  } else {
    const key = [...d.user_ids!, state.user_id].sort((a, b) => a - b).join(",");
    let b = u.huddles.find((x: any) => x.user_ids_string === key);
    if (!b) u.huddles.push((b = { user_ids_string: key, unread_message_ids: [] }));
    b.unread_message_ids.push(id);
  }
  if (d.mentioned) u.mentions.push(id);
  sortUnread(u);
}

function removeUnread(state: State, ids: number[]): void {
  const u = state.unread_msgs;
  if (!u) return;
  const gone = new Set(ids);
  for (const key of ["pms", "streams", "huddles"]) {
    for (const b of u[key]) {
      const before = b.unread_message_ids.length;
      b.unread_message_ids = b.unread_message_ids.filter((x: number) => !gone.has(x));
      u.count -= before - b.unread_message_ids.length;
    }
    u[key] = u[key].filter((b: any) => b.unread_message_ids.length > 0);
  }
  u.mentions = u.mentions.filter((x: number) => !gone.has(x));
}

/**
 * Zulip's aggregate_unread_data: `count` is the direct messages plus the channel messages
 * not muted (a muted channel's count only in a topic unmuted or followed there; an
 * unmuted channel's, unless the topic is muted). Recomputed from the buckets after every
 * event, as muting a channel or a topic changes it without any message event; a state
 * registered without subscriptions or topic policies keeps the count its events kept.
 */
export function recountUnread(state: State): void {
  const u = state.unread_msgs;
  if (!u || !Array.isArray(state.subscriptions) || !Array.isArray(state.user_topics)) return;
  const mutedChannels = new Set<number>(state.subscriptions.filter((c: any) => c.is_muted === true).map((c: any) => c.stream_id));
  const policies = new Map<string, number>();
  for (const t of state.user_topics) policies.set(`${t.stream_id}\u0000${String(t.topic_name).toLowerCase()}`, t.visibility_policy);
  let count = 0;
  for (const b of [...u.pms, ...u.huddles]) count += b.unread_message_ids.length;
  for (const b of u.streams) {
    const policy = policies.get(`${b.stream_id}\u0000${String(b.topic).toLowerCase()}`) ?? 0;
    const muted = mutedChannels.has(b.stream_id) ? policy !== 2 && policy !== 3 : policy === 1;
    if (!muted) count += b.unread_message_ids.length;
  }
  u.count = count;
}

export function applyMessageEvent(state: State, event: Record<string, any>): boolean {
  switch (event.type) {
    case "message": {
      const m = event.message;
      if ("max_message_id" in state) state.max_message_id = Math.max(state.max_message_id, m.id);
      const flags: string[] = event.flags ?? [];
      if (!flags.includes("read")) {
        const others = m.type === "private" ? m.display_recipient.map((r: any) => r.id).filter((x: number) => x !== state.user_id) : undefined;
        addUnread(state, m.id, {
          type: m.type,
          stream_id: m.stream_id,
          topic: m.subject,
          user_ids: others,
          mentioned: flags.includes("mentioned") || flags.includes("wildcard_mentioned"),
        });
      }
      if (m.type === "private" && state.recent_private_conversations) {
        const others = m.display_recipient.map((r: any) => r.id).filter((x: number) => x !== state.user_id).sort((a: number, b: number) => a - b);
        const list = state.recent_private_conversations.filter((c: any) => c.user_ids.join(",") !== others.join(","));
        list.push({ max_message_id: m.id, user_ids: others });
        list.sort((a: any, b: any) => b.max_message_id - a.max_message_id);
        state.recent_private_conversations = list;
      }
      return true;
    }
    case "update_message_flags": {
      const ids: number[] = event.messages;
      if (event.flag === "read") {
        if (event.op === "add") {
          if (event.all && state.unread_msgs) Object.assign(state.unread_msgs, { count: 0, pms: [], streams: [], huddles: [], mentions: [] });
          else removeUnread(state, ids);
        } else for (const id of ids) addUnread(state, id, event.message_details[String(id)]);
      }
      if (event.flag === "starred" && state.starred_messages) {
        const set = new Set<number>(state.starred_messages);
        for (const id of ids) event.op === "add" ? set.add(id) : set.delete(id);
        state.starred_messages = [...set].sort((a, b) => a - b);
      }
      return true;
    }
    case "update_message": {
      // Moves change which (channel, topic) bucket unread messages sit in.
      const u = state.unread_msgs;
      if (u && ("subject" in event || "new_stream_id" in event)) {
        const moved = new Set<number>(event.message_ids);
        const pending: number[] = [];
        for (const b of u.streams) for (const id of b.unread_message_ids) if (moved.has(id)) pending.push(id);
        const mentioned = new Set<number>(u.mentions);
        removeUnread(state, pending);
        for (const id of pending) {
          addUnread(state, id, { type: "stream", stream_id: event.new_stream_id ?? event.stream_id, topic: event.subject ?? event.orig_subject, mentioned: mentioned.has(id) });
        }
      }
      if (u && "rendered_content" in event) {
        const id = event.message_id;
        const flags: string[] = event.flags ?? [];
        const isMention = flags.includes("mentioned") || flags.includes("wildcard_mentioned");
        const unread = !flags.includes("read");
        u.mentions = u.mentions.filter((x: number) => x !== id);
        if (isMention && unread) u.mentions.push(id);
        u.mentions.sort((a: number, b: number) => a - b);
      }
      return true;
    }
    case "delete_message": {
      const ids: number[] = event.message_ids ?? [event.message_id];
      removeUnread(state, ids);
      if (state.starred_messages) state.starred_messages = state.starred_messages.filter((x: number) => !ids.includes(x));
      return true;
    }
    case "reaction":
    case "submessage":
    case "typing":
    case "typing_edit_message":
      return true;
    default:
      return false;
  }
}
