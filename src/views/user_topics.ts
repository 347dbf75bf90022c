import type { Hearth } from "../context";
import { getChannel } from "../store/channels";
import { getUserTopics, VisibilityPolicy } from "../store/user_topics";

/** The legacy `muted_topics` list: `[channel name, topic, timestamp]` for each muted topic. */
export function mutedTopicsView(h: Hearth, userId: number): [string, string, number][] {
  const out: [string, string, number][] = [];
  for (const t of getUserTopics(h.store, userId)) {
    if (t.visibility_policy !== VisibilityPolicy.MUTED) continue;
    const channel = getChannel(h.store, t.stream_id);
    if (channel) out.push([channel.name, t.topic_name, t.last_updated]);
  }
  return out;
}
