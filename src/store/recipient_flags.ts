/**
 * Each recipient's flags for a message being sent, read as a map (user → flag bits).
 * In a channel nearly every recipient gets the same value (unread, nothing else), so
 * it is kept as the sorted recipient list, that common value and the few users whose
 * flags differ (the sender, mentioned users, alert words): a send to a large channel
 * then does no per-recipient map insert, and the recipient list it stores is the one
 * it already holds. A Map by type, so that what takes a map of recipients (the
 * events' publishing among them) reads its users without copying them; its own
 * storage is these fields, every method of Map is overridden.
 */
export class RecipientFlags extends Map<number, number> {
  /** The caller's list while it is ascending and nothing was added or removed; copied before the first change. */
  private sorted: readonly number[];
  private ownsSorted: boolean;
  private readonly differing = new Map<number, number>();
  readonly common: number;

  /**
   * `userIds` in any order (repeats dropped), all with the flags `common`. An ascending
   * list (a channel's subscribers, shared by its sends) is used as it is, not copied,
   * unless a user is added or removed: it must not change while this is in use.
   * `knownAscending`: the caller knows the list ascends (a channel's subscriber list): not checked again.
   */
  constructor(userIds: readonly number[], common: number, knownAscending = false) {
    super();
    this.common = common;
    let ascending = true;
    if (!knownAscending) for (let i = 1; i < userIds.length && ascending; i++) ascending = userIds[i - 1] < userIds[i];
    this.sorted = ascending ? userIds : [...new Set(userIds)].sort((a, b) => a - b);
    this.ownsSorted = !ascending;
  }

  /** The list, to change: a copy of the caller's first. */
  private own(): number[] {
    if (!this.ownsSorted) {
      this.sorted = this.sorted.slice();
      this.ownsSorted = true;
    }
    return this.sorted as number[];
  }

  /** The recipients, ascending: shared, do not change it. */
  get ids(): readonly number[] {
    return this.sorted;
  }

  /** The recipients whose flags are not `common`, with theirs. */
  get exceptions(): ReadonlyMap<number, number> {
    return this.differing;
  }

  override get size(): number {
    return this.sorted.length;
  }

  override has(userId: number): boolean {
    return this.indexOf(userId) >= 0;
  }

  override get(userId: number): number | undefined {
    const own = this.differing.get(userId);
    if (own !== undefined) return own;
    return this.indexOf(userId) >= 0 ? this.common : undefined;
  }

  /** Sets a user's flags, making them a recipient if they were not one. */
  override set(userId: number, bits: number): this {
    if (this.indexOf(userId) < 0) {
      this.own().splice(this.insertionPoint(userId), 0, userId);
    }
    if (bits === this.common) this.differing.delete(userId);
    else this.differing.set(userId, bits);
    return this;
  }

  override delete(userId: number): boolean {
    const at = this.indexOf(userId);
    if (at < 0) return false;
    this.own().splice(at, 1);
    this.differing.delete(userId);
    return true;
  }

  override clear(): void {
    this.sorted = [];
    this.ownsSorted = true;
    this.differing.clear();
  }

  /** Sets the flags of every user in `flags` (a map of user → flags). */
  setAll(flags: ReadonlyMap<number, number>): this {
    for (const [userId, bits] of flags) this.set(userId, bits);
    return this;
  }

  /** The recipients whose flags have all of `bits`, ascending. */
  usersWith(bits: number): number[] {
    if ((this.common & bits) === bits) return this.sorted.filter((id) => ((this.differing.get(id) ?? this.common) & bits) === bits);
    const out: number[] = [];
    for (const [id, own] of this.differing) if ((own & bits) === bits) out.push(id);
    return out.sort((a, b) => a - b);
  }

  /** The distinct flags values the recipients hold. */
  distinctValues(): Set<number> {
    const out = new Set(this.differing.values());
    if (this.differing.size < this.sorted.length) out.add(this.common);
    return out;
  }

  override *entries(): MapIterator<[number, number]> {
    for (const id of this.sorted) yield [id, this.differing.get(id) ?? this.common];
  }

  override [Symbol.iterator](): MapIterator<[number, number]> {
    return this.entries();
  }

  override keys(): MapIterator<number> {
    return this.sorted.values();
  }

  override *values(): MapIterator<number> {
    for (const id of this.sorted) yield this.differing.get(id) ?? this.common;
  }

  override forEach(fn: (value: number, key: number, map: Map<number, number>) => void, thisArg?: unknown): void {
    for (const [id, bits] of this.entries()) fn.call(thisArg, bits, id, this);
  }

  private insertionPoint(userId: number): number {
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.sorted[mid] < userId) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private indexOf(userId: number): number {
    const at = this.insertionPoint(userId);
    return this.sorted[at] === userId ? at : -1;
  }
}
