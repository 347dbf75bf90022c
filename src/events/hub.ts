/**
 * Where actions publish events after their transaction committed. Each event goes to
 * the queues of exactly the users named; the queue manager (src/events/queues.ts)
 * filters and shapes it per queue.
 */
export type ApiEvent = { type: string } & Record<string, unknown>;

export interface EventSink {
  deliver(event: ApiEvent, userIds: readonly number[]): void;
}

export class EventHub {
  private readonly sinks: EventSink[] = [];

  attach(sink: EventSink): void {
    this.sinks.push(sink);
  }

  publish(event: ApiEvent, userIds: Iterable<number>): void {
    const recipients = [...new Set(userIds)];
    if (recipients.length === 0) return;
    for (const sink of this.sinks) sink.deliver(event, recipients);
  }
}
