/**
 * Where actions publish events after their transaction committed. Each event goes to
 * the queues of exactly the users named; the queue manager (src/events/queues.ts)
 * filters and shapes it per queue.
 */
import { RecipientFlags } from "../store/recipient_flags";

export type ApiEvent = { type: string } & Record<string, unknown>;

export interface PublishOptions {
  /**
   * Fields added to the event for one recipient only, e.g. a message event's
   * `flags`, which differ per user (Zulip sends `users: [{id, flags}]` to Tornado).
   * Any lookup will do: a message to 1,000 users looks its flags up by their bits
   * instead of building a map of 1,000 entries per message.
   */
  perUser?: { get(userId: number): Record<string, unknown> | undefined };
  /**
   * Fields added to the event in one queue only, e.g. `local_message_id` for the
   * queue the sender named in `POST /messages` (`queue_id` + `local_id`), so the
   * sending client can match the echo to its outbox entry.
   */
  perQueue?: ReadonlyMap<string, Record<string, unknown>>;
  /**
   * A message in a public channel: also delivered (with `flags: []`) to queues
   * registered with `all_public_streams`, whoever owns them.
   */
  toAllPublicStreamsQueues?: boolean;
}

/*
 * Message events: publish `{type: "message", message}` where `message.content` is the
 * raw Markdown and `message.rendered_content` the HTML; each queue gets the one its
 * client asked for (`apply_markdown`), with the matching `content_type`, as Zulip's
 * Tornado `finalize_payload` does. Per-user `flags` go in `perUser`.
 */

export interface EventSink {
  deliver(event: ApiEvent, userIds: readonly number[], options: PublishOptions): void;
}

export class EventHub {
  private readonly sinks: EventSink[] = [];

  attach(sink: EventSink): void {
    this.sinks.push(sink);
  }

  /** `userIds`: any list of IDs, or a map keyed by them (a message's flags by user). */
  publish(event: ApiEvent, userIds: Iterable<number> | ReadonlyMap<number, unknown>, options: PublishOptions = {}): void {
    // A map's keys and a set's members are distinct already; a message's flags hold theirs as a sorted list (shared, read only).
    const recipients = userIds instanceof RecipientFlags ? userIds.ids : userIds instanceof Map ? Array.from(userIds.keys()) : userIds instanceof Set ? Array.from(userIds) : distinct(userIds as Iterable<number>);
    if (recipients.length === 0 && !options.toAllPublicStreamsQueues) return;
    for (const sink of this.sinks) sink.deliver(event, recipients, options);
  }
}

/**
 * The IDs once each, in order. Not `[...new Set(map.keys())]`: JSC builds a Set from a
 * Map iterator slowly, a cost paid per message to a large channel; an array first and
 * a loop cost a fraction of it, and a map or set passed as such nothing
 * (docs/benchmarks.md).
 */
function distinct(ids: Iterable<number>): number[] {
  const list = Array.isArray(ids) ? ids : Array.from(ids);
  const seen = new Set<number>();
  const out: number[] = [];
  for (const id of list) {
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(id);
  }
  return out;
}
