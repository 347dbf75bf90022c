import { guardedTick } from "../lib/background";
import { randomUUID } from "node:crypto";
import { ApiError, badRequest } from "../errors";
import type { ApiEvent, EventSink, PublishOptions } from "./hub";
import { shapeForClient, type ShapingRealm } from "./shaping";
import { messageMatchesNarrow } from "./narrow";
import { EventQueue, Waiter, type HangUp, type QueuedEvent, type QueueSettings } from "./event_queue";
import { loadSavedQueues, saveQueues } from "./queue_file";
import { queueLimitsFromEnv, type QueueLimits } from "./queue_limits";
import { sharedMessage, type SharedPayloads } from "./shared_payloads";

export const badEventQueueId = (queueId: string) =>
  new ApiError(`Bad event queue ID: ${queueId}`, "BAD_EVENT_QUEUE_ID", 400, { queue_id: queueId });

/** The queue idle longest, preferring one with no parked poll (its client is gone). */
function leastRecentlyUsed(queues: Iterable<EventQueue>): EventQueue | null {
  let oldest: EventQueue | null = null;
  let oldestParked: EventQueue | null = null;
  for (const q of queues) {
    if (q.waiter) {
      if (!oldestParked || q.lastAccess < oldestParked.lastAccess) oldestParked = q;
    } else if (!oldest || q.lastAccess < oldest.lastAccess) oldest = q;
  }
  return oldest ?? oldestParked;
}

/**
 * Holds every event queue in memory (Zulip's Tornado process). Actions publish
 * through the EventHub; `deliver` filters each event per queue (event types, narrow,
 * all_public_streams) and shapes it per the queue's client capabilities (one hook,
 * src/events/shaping.ts) before it gets its queue-local ID.
 */
export class QueueManager implements EventSink {
  private readonly queues = new Map<string, EventQueue>();
  private readonly byUser = new Map<number, Set<EventQueue>>();
  /** Queues registered with all_public_streams: every public-channel message goes to them too. */
  private readonly allPublicStreamsQueues = new Set<EventQueue>();
  private totalEvents = 0;
  private gcTimer: ReturnType<typeof setInterval> | null = null;
  private closing = false;
  /** Told of each queue dropped for idleness, with the events it still held (Zulip's missedmessage_hook runs there). */
  private readonly idleListeners: ((queue: EventQueue, events: readonly ApiEvent[]) => void)[] = [];

  constructor(
    readonly limits: QueueLimits = queueLimitsFromEnv(),
    /**
     * What capability shaping reads of the realm: the server passes the realm's
     * settings (the queue reads no realm); the default is Zulip's.
     */
    private readonly realm: ShapingRealm = { emptyTopicDisplayName: () => "general chat" },
  ) {}

  startGc(): void {
    this.gcTimer ??= setInterval(guardedTick("Collecting idle event queues", () => this.collectIdle()), this.limits.gcIntervalSecs * 1000);
    (this.gcTimer as any).unref?.();
  }

  get size(): number {
    return this.queues.size;
  }

  pendingEventCount(): number {
    return this.totalEvents;
  }

  // A UUID, as Zulip's queue IDs are: nothing in it needs URL encoding, so no poll pays for decoding it.
  create(settings: QueueSettings, id: string = randomUUID()): EventQueue {
    const own = this.byUser.get(settings.userId);
    while (own && own.size >= this.limits.maxQueuesPerUser) this.remove(leastRecentlyUsed(own)!);
    while (this.queues.size >= this.limits.maxQueues) this.remove(leastRecentlyUsed(this.queues.values())!);
    const queue = new EventQueue(id, settings);
    this.queues.set(id, queue);
    if (settings.allPublicStreams) this.allPublicStreamsQueues.add(queue);
    let set = this.byUser.get(settings.userId);
    if (!set) this.byUser.set(settings.userId, (set = new Set()));
    set.add(queue);
    return queue;
  }

  onIdleCollected(listener: (queue: EventQueue, events: readonly ApiEvent[]) => void): void {
    this.idleListeners.push(listener);
  }

  /** Drops a queue whose client went away, after telling the listeners (a listener's failure is logged). */
  private removeIdle(queue: EventQueue): void {
    const events = queue.events.slice();
    for (const listener of this.idleListeners) {
      try {
        listener(queue, events);
      } catch (error) {
        console.error("After an idle event queue was collected:", error);
      }
    }
    this.remove(queue);
  }

  /** The caller's queue, or BAD_EVENT_QUEUE_ID if it expired, overflowed or never existed. */
  access(queueId: string, userId: number): EventQueue {
    const queue = this.queues.get(queueId);
    if (!queue) throw badEventQueueId(queueId);
    if (queue.idleExpired(Date.now())) {
      this.removeIdle(queue);
      throw badEventQueueId(queueId);
    }
    if (queue.userId !== userId) throw badRequest("You are not authorized to get events from this queue");
    return queue;
  }

  /**
   * Whether `queueId` is a live queue of `userId`: check this before honouring a
   * client-supplied queue ID, e.g. POST /messages `queue_id` for `local_message_id`.
   */
  isOwnQueue(queueId: string, userId: number): boolean {
    return this.queues.get(queueId)?.userId === userId;
  }

  remove(queue: EventQueue): void {
    if (this.queues.get(queue.id) !== queue) return;
    this.queues.delete(queue.id);
    this.allPublicStreamsQueues.delete(queue);
    this.byUser.get(queue.userId)?.delete(queue);
    if (this.byUser.get(queue.userId)?.size === 0) this.byUser.delete(queue.userId);
    this.totalEvents -= queue.events.length;
    // A poll parked on a dropped queue answers now; its next poll gets BAD_EVENT_QUEUE_ID.
    queue.answerWaiter();
    queue.replaceEvents([]);
  }

  queuesOf(userId: number): readonly EventQueue[] {
    return [...(this.byUser.get(userId) ?? [])];
  }

  /**
   * `GET /events`: acknowledges up to `lastEventId`, then answers at once with the
   * pending events (an array, not a promise), or parks until one arrives or the
   * heartbeat is due. A second poll on the same queue replaces a parked one, which
   * answers with no events.
   * `hangUp` is the request, whose abort signal lets a client that hangs up stop
   * holding its queue.
   */
  poll(queue: EventQueue, lastEventId: number | undefined, dontBlock: boolean, hangUp?: HangUp): QueuedEvent[] | Promise<QueuedEvent[]>;
  /**
   * The same, with `finish` turning the events into the caller's answer inside the one
   * promise a parked poll makes: no `.then` layer, so one promise reaction less per
   * parked poll, and each answer is built as its poll is answered. `finish` gets the
   * queue, so that a caller needs no closure per poll, and the queue's own array of
   * pending events, not a copy: it must read them before it returns and keep no
   * reference to the array.
   */
  poll<T>(queue: EventQueue, lastEventId: number | undefined, dontBlock: boolean, hangUp: HangUp | undefined, finish: (events: QueuedEvent[], queue: EventQueue) => T): T | Promise<T>;
  poll<T>(
    queue: EventQueue,
    lastEventId: number | undefined,
    dontBlock: boolean,
    hangUp?: HangUp,
    finish: (events: QueuedEvent[], queue: EventQueue) => T = (events) => events.slice() as T,
  ): T | Promise<T> {
    const now = Date.now();
    queue.lastAccess = now;
    if (lastEventId !== undefined) this.totalEvents -= queue.acknowledge(lastEventId);
    if (queue.waiter) queue.answerWaiter();
    if (queue.events.length > 0 || dontBlock || this.closing) return finish(queue.events, queue);
    return new Promise<T>((resolve, reject) => {
      queue.waiter = new Waiter(queue, finish, resolve, reject, now, hangUp);
      this.parked.add(queue);
      if (!this.sweepTimer) {
        this.sweepTimer = setInterval(guardedTick("Sweeping parked polls", () => this.sweepParked()), this.sweepIntervalMs());
        (this.sweepTimer as any).unref?.();
      }
    });
  }

  /** Queues whose poll may be parked (a queue leaves at the next sweep after its poll answered). */
  private readonly parked = new Set<EventQueue>();
  private sweepTimer: ReturnType<typeof setInterval> | null = null;

  private sweepIntervalMs(): number {
    return Math.min(1000, (this.limits.heartbeatSecs * 1000) / 4);
  }

  /**
   * One timer for every parked poll instead of a timer and an abort listener per poll:
   * sends the heartbeats that are due, and watches for hang-ups only on polls parked
   * longer than a sweep. Asking Bun for a request's abort signal was a fifth of a
   * poll's cost (docs/benchmarks.md), and under a message flood polls are answered
   * long before a sweep comes. A client that hangs up is noticed within two sweeps
   * (at most 2 s).
   */
  sweepParked(now = Date.now()): void {
    const heartbeatMs = this.limits.heartbeatSecs * 1000;
    const watchAfterMs = this.sweepIntervalMs();
    for (const queue of this.parked) {
      const waiter = queue.waiter;
      if (!waiter) {
        this.parked.delete(queue);
      } else if (now - waiter.parkedAt >= heartbeatMs) {
        this.totalEvents++;
        queue.answerWaiter({ type: "heartbeat" });
        this.parked.delete(queue);
      } else if (!waiter.listening && waiter.hangUp && now - waiter.parkedAt >= watchAfterMs) {
        waiter.listening = true;
        const signal = waiter.hangUp.signal;
        const hangUp = () => {
          if (queue.waiter !== waiter) return;
          // Idle expiry starts from now.
          queue.waiter = null;
          queue.lastAccess = Date.now();
          waiter.resolve([]);
        };
        if (signal.aborted) hangUp();
        else signal.addEventListener("abort", hangUp, { once: true });
      }
    }
    if (this.parked.size === 0 && this.sweepTimer) {
      clearInterval(this.sweepTimer);
      this.sweepTimer = null;
    }
  }

  deliver(event: ApiEvent, userIds: readonly number[], options: PublishOptions): void {
    const toAllPublic = options.toAllPublicStreamsQueues === true && event.type === "message" && this.allPublicStreamsQueues.size > 0;
    // Only needed to skip recipients among the all_public_streams queues.
    const seen = toAllPublic ? new Set<EventQueue>() : null;
    const shared: SharedPayloads = { messages: new Map(), payloads: new Map() };
    for (const userId of userIds) {
      const queues = this.byUser.get(userId);
      if (!queues) continue;
      const userFields = options.perUser?.get(userId);
      // No copy of the set: a queue an enqueue drops (overflow) is deleted from it, which iteration allows.
      for (const queue of queues) {
        seen?.add(queue);
        this.enqueueGuarded(queue, event, options, shared, userFields);
      }
    }
    if (seen) {
      const noFlags = { flags: [] };
      for (const queue of this.allPublicStreamsQueues) {
        if (!seen.has(queue)) this.enqueueGuarded(queue, event, options, shared, noFlags);
      }
    }
  }

  /**
   * The change was committed before delivery: a queue whose filter fails (a bad
   * saved narrow, say) is dropped, so its client re-registers, and the rest of the
   * recipients still get the event.
   */
  private enqueueGuarded(queue: EventQueue, published: ApiEvent, options: PublishOptions, shared: SharedPayloads, userFields?: Record<string, unknown>): void {
    try {
      this.enqueue(queue, published, options, shared, userFields);
    } catch (error) {
      console.error(`Dropping event queue ${queue.id}: delivering to it failed:`, error);
      this.remove(queue);
    }
  }

  private enqueue(queue: EventQueue, published: ApiEvent, options: PublishOptions, shared: SharedPayloads, userFields?: Record<string, unknown>): void {
    const queueFields = options.perQueue?.get(queue.id);
    // Recipients with the same fields (publishers share one object per flags value)
    // share one merged event and, per content form, one finalized payload, so a
    // message to 1,000 users is copied and serialized once, not once per queue.
    const sharable = queueFields === undefined && published.type === "message";
    let entry = sharable ? shared.payloads.get(userFields ?? published) : undefined;
    if (sharable && !entry) shared.payloads.set(userFields ?? published, (entry = { merged: userFields ? { ...published, ...userFields } : published, byForm: new Map() }));
    let payload = entry ? entry.merged : userFields || queueFields ? { ...published, ...userFields, ...queueFields } : published;
    // Judged with the recipient's own fields: a narrow like is:mentioned reads their flags.
    if (!this.accepts(queue, payload)) return;
    if (payload.type === "message" && payload.message) {
      const form = queue.settings.applyMarkdown;
      const cached = entry?.byForm.get(form);
      if (cached) payload = cached;
      else {
        payload = { ...payload, message: sharedMessage(shared, form, payload) };
        entry?.byForm.set(form, payload);
      }
    }
    const shaped = shapeForClient(payload, queue.settings.capabilities, this.realm);
    // An event this client's capabilities drop wakes no parked poll (it would answer none).
    if (shaped.length === 0) return;
    for (const e of shaped) {
      queue.push(e);
      this.totalEvents++;
    }
    this.answerSoon(queue);
    if (queue.events.length > this.limits.maxEventsPerQueue) {
      // An abandoned client must not grow memory without bound: drop the queue, so
      // its client (if it ever returns) gets BAD_EVENT_QUEUE_ID and re-registers.
      this.remove(queue);
      return;
    }
    while (this.totalEvents > this.limits.maxTotalEvents && this.evictFullest());
  }

  /** Queues whose parked poll is answered in the next microtask, in the order they got events. */
  private toAnswer: EventQueue[] = [];

  /**
   * One action often publishes several events at once (a user and their bots):
   * answering in a microtask hands them to the client in one response. One microtask
   * for all the queues a delivery reached, not one per queue.
   */
  private answerSoon(queue: EventQueue): void {
    if (queue.waiter === null || queue.answerScheduled) return;
    queue.answerScheduled = true;
    if (this.toAnswer.push(queue) === 1) queueMicrotask(this.answerPending);
  }

  private readonly answerPending = (): void => {
    const queues = this.toAnswer;
    this.toAnswer = [];
    const now = Date.now();
    for (const queue of queues) {
      queue.answerScheduled = false;
      // One failure must not leave the other polls of the list unanswered.
      try {
        queue.answerWaiter(undefined, now);
      } catch (error) {
        console.error(`Answering the parked poll of event queue ${queue.id} failed:`, error);
      }
    }
  };

  private accepts(queue: EventQueue, event: ApiEvent): boolean {
    const { eventTypes, narrow } = queue.settings;
    if (eventTypes !== null && !eventTypes.includes(event.type)) return false;
    if (event.type === "message" && narrow.length > 0) {
      return messageMatchesNarrow(narrow, event.message as Record<string, unknown>, (event.flags as string[]) ?? []);
    }
    return true;
  }

  /** Removes the queue holding the most events; false when there is none left. */
  private evictFullest(): boolean {
    let fullest: EventQueue | null = null;
    for (const q of this.queues.values()) if (!fullest || q.events.length > fullest.events.length) fullest = q;
    if (!fullest) return false;
    this.remove(fullest);
    return true;
  }

  collectIdle(now = Date.now()): number {
    let n = 0;
    for (const q of [...this.queues.values()]) {
      if (q.idleExpired(now)) {
        this.removeIdle(q);
        n++;
      }
    }
    return n;
  }

  /**
   * Graceful shutdown: answers every parked poll (so the HTTP server can drain) and
   * writes the queues to the data folder; `load` restores them on the next start.
   */
  close(dataDir: string | null): void {
    this.closing = true;
    if (this.gcTimer) clearInterval(this.gcTimer);
    this.gcTimer = null;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = null;
    for (const q of this.queues.values()) q.answerWaiter();
    if (dataDir !== null) saveQueues(dataDir, this.queues.values());
  }

  /**
   * Restores queues saved by a graceful shutdown, then deletes the file: after a
   * crash there is no file, and clients get BAD_EVENT_QUEUE_ID and re-register.
   * The downtime does not count toward a queue's idle time.
   */
  load(dataDir: string): number {
    let n = 0;
    for (const s of loadSavedQueues(dataDir)) {
      const q = this.create(s.settings, s.id);
      q.replaceEvents(s.events);
      q.lastEventId = s.lastEventId;
      q.lastAccess = s.lastAccess;
      this.totalEvents += q.events.length;
      n++;
    }
    return n;
  }
}
