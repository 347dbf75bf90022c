import type { Hearth } from "../context";
import { badRequest } from "../errors";
import { accessChannel } from "../access/channels";
import { getChannel } from "../store/channels";
import { getUserTopic, getUserTopics, putUserTopic, VisibilityPolicy, type UserTopic } from "../store/user_topics";
import type { UserRecord } from "../store/users";
import { MAX_TOPIC_LENGTH, normalizeTopic } from "./messages";

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

/**
 * `POST /user_topics`: sets one topic's visibility policy for the caller. Setting
 * the current policy again changes nothing (FL 170: no error either). Sends the
 * legacy `muted_topics` list and the `user_topic` event; each queue gets the one it
 * asked for.
 */
export async function doSetTopicVisibility(h: Hearth, user: UserRecord, channelId: number, topic: string, policy: number): Promise<void> {
  if (![0, 1, 2, 3].includes(policy)) throw badRequest("Invalid visibility_policy");
  if (topic.length > MAX_TOPIC_LENGTH) throw badRequest(`topic is too long (limit: ${MAX_TOPIC_LENGTH} characters)`);
  // Same rules as sending: "(no topic)" is the empty topic (FL 370).
  const name = normalizeTopic(topic);
  accessChannel(h, user, channelId, { allowArchived: true });
  const changed = await h.store.commit(() => {
    const current = getUserTopic(h.store, user.id, channelId, name);
    if ((current?.visibility_policy ?? VisibilityPolicy.INHERIT) === policy) return null;
    const next: UserTopic = { stream_id: channelId, topic_name: name, visibility_policy: policy, last_updated: Math.floor(Date.now() / 1000) };
    putUserTopic(h.store, user.id, next);
    return next;
  });
  if (!changed) return;
  h.events.publish({ type: "muted_topics", muted_topics: mutedTopicsView(h, user.id) }, [user.id]);
  h.events.publish({ type: "user_topic", ...changed }, [user.id]);
}
