import type { ApiEvent } from "./hub";
import type { ClientCapabilities } from "./capabilities";
import type { NarrowTerm } from "./narrow";

/**
 * One client's event queue (Zulip's ClientDescriptor and its event list) and the poll
 * parked on it. The queue manager (queues.ts) creates, delivers to, persists and
 * collects them.
 */

/** What a queue was registered with; persisted with the queue across restarts. */
export interface QueueSettings {
  userId: number;
  /** null: every event type. */
  eventTypes: string[] | null;
  allPublicStreams: boolean;
  narrow: NarrowTerm[];
  capabilities: ClientCapabilities;
  applyMarkdown: boolean;
  clientGravatar: boolean;
  slimPresence: boolean;
  idleTimeoutSecs: number;
  /** The `client` of the register request, kept for diagnostics. */
  clientName: string;
}

export type QueuedEvent = ApiEvent & { id: number };

/** What a poll can be hung up by: the HTTP request (its `signal` is read only when needed). */
export interface HangUp {
  readonly signal: AbortSignal;
}

/** A parked poll: one object per poll, no closures (see QueueManager.poll). */
export class Waiter<T = unknown> {
  listening = false;
  constructor(
    private readonly queue: EventQueue,
    private readonly finish: (events: QueuedEvent[], queue: EventQueue) => T,
    private readonly settle: (answer: T) => void,
    private readonly fail: (error: unknown) => void,
    /** When the poll parked (ms): its heartbeat is due `heartbeatSecs` later. */
    readonly parkedAt: number,
    /** Its request, whose abort signal is asked for only once the poll has been parked a while (see QueueManager.sweepParked). */
    readonly hangUp: HangUp | undefined,
  ) {}

  /** `events` is the queue's own array: `finish` reads it before returning and keeps no reference. */
  resolve(events: QueuedEvent[]): void {
    try {
      this.settle(this.finish(events, this.queue));
    } catch (error) {
      this.fail(error);
    }
  }
}

export class EventQueue {
  /** Events not yet acknowledged, in increasing ID order. */
  events: QueuedEvent[] = [];
  /**
   * Beside `events`, index for index: the object each was pushed from (undefined for
   * one restored from disk). Queues given the same object share its JSON (see
   * serialize.ts). Kept here, not on the events, so that each stays a plain copy: a
   * hidden property defined on every queued event cost more than the copy itself.
   */
  sources: (ApiEvent | undefined)[] = [];
  lastEventId = -1;
  /** When the client last polled or registered (ms); idle queues are collected. */
  lastAccess = Date.now();
  waiter: Waiter<any> | null = null;
  /** Whether the queue manager will answer the parked poll in its next microtask (QueueManager.answerSoon). */
  answerScheduled = false;

  /** The ID as JSON, for every answer to a poll. */
  readonly idJson: string;

  constructor(
    readonly id: string,
    readonly settings: QueueSettings,
  ) {
    this.idJson = JSON.stringify(id);
  }

  get userId() {
    return this.settings.userId;
  }

  push(event: ApiEvent): QueuedEvent {
    const queued = { ...event, id: ++this.lastEventId } as QueuedEvent;
    this.events.push(queued);
    this.sources.push(event);
    return queued;
  }

  /** Drops the events the client has processed (Zulip's `last_event_id`). */
  acknowledge(lastEventId: number): number {
    let n = 0;
    while (n < this.events.length && this.events[n].id <= lastEventId) n++;
    // The usual case, every event acknowledged, without the array splice returns.
    if (n === this.events.length) {
      this.events.length = 0;
      this.sources.length = 0;
    } else if (n > 0) {
      this.events.splice(0, n);
      this.sources.splice(0, n);
    }
    return n;
  }

  /** Replaces the pending events (a dropped queue's, none; a restored queue's, from disk, with no shared sources). */
  replaceEvents(events: QueuedEvent[]): void {
    this.events = events;
    this.sources = new Array(events.length).fill(undefined);
  }

  /** Finishes a parked poll with whatever is pending (possibly nothing). */
  answerWaiter(extra?: ApiEvent, now = Date.now()): void {
    const waiter = this.waiter;
    if (!waiter) return;
    this.waiter = null;
    if (extra) this.push(extra);
    this.lastAccess = now;
    waiter.resolve(this.events);
  }

  idleExpired(now: number): boolean {
    return this.waiter === null && now - this.lastAccess > this.settings.idleTimeoutSecs * 1000;
  }
}
