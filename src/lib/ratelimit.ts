import { rateLimited } from "../errors";

/**
 * Sliding-window counter of failed authentication attempts, keyed by username or
 * client IP. Memory is bounded: stale keys are pruned on use and the table is capped.
 */
export class FailureLimiter {
  private readonly hits = new Map<string, number[]>();

  constructor(
    readonly limit: number,
    readonly windowSeconds: number,
    private readonly maxKeys = 100_000,
  ) {}

  private recent(key: string, now: number): number[] {
    const since = now - this.windowSeconds * 1000;
    const list = (this.hits.get(key) ?? []).filter((t) => t > since);
    if (list.length === 0) this.hits.delete(key);
    else this.hits.set(key, list);
    return list;
  }

  /** Throws RATE_LIMIT_HIT when `key` has used up its failures. */
  assertAllowed(key: string, now = Date.now()): void {
    const list = this.recent(key, now);
    if (list.length >= this.limit) {
      throw rateLimited((list[0] + this.windowSeconds * 1000 - now) / 1000);
    }
  }

  recordFailure(key: string, now = Date.now()): void {
    const list = this.recent(key, now);
    list.push(now);
    this.hits.set(key, list);
    if (this.hits.size > this.maxKeys) {
      const oldest = this.hits.keys().next().value;
      if (oldest !== undefined) this.hits.delete(oldest);
    }
  }
}
