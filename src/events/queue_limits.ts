import { envNumber } from "../lib/env";

export interface QueueLimits {
  /** Seconds a parked poll waits before a heartbeat (Zulip: about a minute). */
  heartbeatSecs: number;
  /** Undelivered events one queue may hold; past this the queue is dropped. */
  maxEventsPerQueue: number;
  /** Queues kept at once; past this the least recently used one is dropped. */
  maxQueues: number;
  /** Queues one user may hold; past this that user's least recently used one is dropped, so one client cannot evict everyone else's. */
  maxQueuesPerUser: number;
  /** Undelivered events over all queues; past this the fullest queue is dropped. */
  maxTotalEvents: number;
  /** How often idle queues are swept (they are also expired lazily on access). */
  gcIntervalSecs: number;
}

export function queueLimitsFromEnv(): QueueLimits {
  return {
    heartbeatSecs: envNumber("HEARTH_EVENT_HEARTBEAT_SECS", 55),
    maxEventsPerQueue: envNumber("HEARTH_EVENT_QUEUE_MAX_EVENTS", 5000),
    maxQueues: envNumber("HEARTH_EVENT_MAX_QUEUES", 5000),
    maxQueuesPerUser: envNumber("HEARTH_EVENT_MAX_QUEUES_PER_USER", 100),
    maxTotalEvents: envNumber("HEARTH_EVENT_MAX_TOTAL_EVENTS", 500_000),
    gcIntervalSecs: envNumber("HEARTH_EVENT_GC_SECS", 30),
  };
}

/** Zulip's default idle timeout is 10 minutes; "mobile" is 12 hours; the cap is 7 days. */
export const DEFAULT_IDLE_QUEUE_TIMEOUT_SECS = 600;
export const MOBILE_IDLE_QUEUE_TIMEOUT_SECS = 12 * 3600;
export const MAX_IDLE_QUEUE_TIMEOUT_SECS = 7 * 24 * 3600;

