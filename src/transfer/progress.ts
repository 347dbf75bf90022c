/**
 * Progress of a long transfer on stderr: one line rewritten in place (counts and rate)
 * when stderr is a terminal, nothing until the end otherwise (logs and CI keep only
 * the final summary).
 */
export class Progress {
  private readonly started = Date.now();
  private lastDraw = 0;
  private drawn = false;
  constructor(
    private readonly verb: string,
    private readonly out: NodeJS.WriteStream = process.stderr,
  ) {}

  /** `done` messages of `total` (if known); redrawn at most ten times a second. */
  update(done: number, total?: number): void {
    if (!this.out.isTTY) return;
    const now = Date.now();
    if (now - this.lastDraw < 100) return;
    this.lastDraw = now;
    const seconds = Math.max((now - this.started) / 1000, 0.001);
    const rate = Math.round(done / seconds);
    const of = total ? `/${total} (${Math.floor((100 * done) / Math.max(total, 1))}%)` : "";
    this.out.write(`\r${this.verb}: ${done}${of} messages, ${rate}/s, ${seconds.toFixed(0)} s   `);
    this.drawn = true;
  }

  /** Ends the progress line; the caller prints the summary. */
  finish(): void {
    if (this.drawn) this.out.write("\n");
  }

  get seconds(): number {
    return (Date.now() - this.started) / 1000;
  }
}
