/**
 * Where actions publish events after their transaction committed. Each event goes to
 * the queues of exactly the users named; the queue manager (src/events/queues.ts)
 * filters and shapes it per queue.
 */
export type ApiEvent = { type: string } & Record<string, unknown>;

export interface PublishOptions {
  /**
   * Fields added to the event for one recipient only, e.g. a message event's
   * `flags`, which differ per user (Zulip sends `users: [{id, flags}]` to Tornado).
   */
  perUser?: ReadonlyMap<number, Record<string, unknown>>;
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
  /**
   * What a queue gets, per its client capabilities, when that differs by more than
   * the built-in shaping: e.g. a deactivated user group as `update` for
   * `include_deactivated_groups` clients and `remove` for others, or an archived
   * channel as `update` vs `delete`. Returns the event(s) for that queue, or null
   * for none. `event` (the published one) is the default.
   */
  forCapabilities?: (capabilities: import("./queues").ClientCapabilities) => ApiEvent | ApiEvent[] | null;
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

  publish(event: ApiEvent, userIds: Iterable<number>, options: PublishOptions = {}): void {
    const recipients = [...new Set(userIds)];
    if (recipients.length === 0 && !options.toAllPublicStreamsQueues) return;
    for (const sink of this.sinks) sink.deliver(event, recipients, options);
  }
}
