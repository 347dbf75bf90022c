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

  /**
   * With HEARTH_TRANSFER_PHASES=1 (scripts/bench-transfer.ts --phases), a line on
   * stderr per phase: its wall time and the process's CPU time in it, to see where a
   * transfer spends its time.
   */
  phase(name: string): void {
    if (process.env.HEARTH_TRANSFER_PHASES !== "1") return;
    const now = performance.now();
    const cpu = process.cpuUsage();
    if (this.phaseName) {
      const cpuMs = (cpu.user + cpu.system - this.phaseCpu) / 1000;
      const heap = process.memoryUsage().heapUsed / 2 ** 20;
      process.stderr.write(`phase ${this.phaseName}: ${(now - this.phaseAt).toFixed(0)} ms wall, ${cpuMs.toFixed(0)} ms CPU; JS heap after it ${heap.toFixed(0)} MiB\n`);
    }
    this.phaseName = name;
    this.phaseAt = now;
    this.phaseCpu = cpu.user + cpu.system;
  }
  private phaseName = "";
  private phaseAt = 0;
  private phaseCpu = 0;

  get seconds(): number {
    return (Date.now() - this.started) / 1000;
  }
}
