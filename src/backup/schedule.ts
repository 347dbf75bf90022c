import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Store } from "../store/db";
import { createBackup } from "./create";

/** `serve --backup-every 24h --backup-dir DIR --backup-keep 7`. */
export interface BackupScheduleConfig {
  everyMs: number;
  dir: string;
  keep: number;
}

export interface BackupRun {
  /** Unix seconds when the run ended. */
  at: number;
  ok: boolean;
  file: string | null;
  error: string | null;
  seconds: number;
}

const NAME = /^hearth-backup-\d{8}-\d{6}\.tar\.gz$/;

/** `24h`, `30m`, `90s`, `7d` → milliseconds; null for anything else (at least one second). */
export function parseInterval(text: string): number | null {
  const match = /^(\d+)(s|m|h|d)$/.exec(text.trim());
  if (!match) return null;
  const ms = Number(match[1]) * { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as "s" | "m" | "h" | "d"];
  return ms >= 1_000 && Number.isSafeInteger(ms) ? ms : null;
}

/** A timestamp for a backup's file name, sortable, in UTC. */
export function backupStamp(date: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${date.getUTCFullYear()}${p(date.getUTCMonth() + 1)}${p(date.getUTCDate())}-${p(date.getUTCHours())}${p(date.getUTCMinutes())}${p(date.getUTCSeconds())}`;
}

/**
 * Backups at a fixed interval into one folder, keeping the newest `keep`. The next
 * run is due one interval after the newest backup already there, so a server
 * restarted more often than the interval still backs up on time. A failed run is
 * logged and kept as the last result (the admin page shows it); it never stops the
 * server, and the next run comes at the next interval.
 */
export class BackupSchedule {
  last: BackupRun | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private running: Promise<unknown> | null = null;
  private stopped = false;

  constructor(
    readonly config: BackupScheduleConfig,
    private readonly source: { dataDir: string; store: Store },
  ) {}

  start(): void {
    mkdirSync(this.config.dir, { recursive: true, mode: 0o700 });
    const newest = this.backups().at(-1);
    const due = newest ? statSync(join(this.config.dir, newest)).mtimeMs + this.config.everyMs : Date.now();
    this.schedule(Math.max(0, due - Date.now()));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** The backup files of this schedule, oldest first (their names sort by time). */
  backups(): string[] {
    if (!existsSync(this.config.dir)) return [];
    return readdirSync(this.config.dir).filter((name) => NAME.test(name)).sort();
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.runOnce().finally(() => {
        this.running = null;
        this.schedule(this.config.everyMs);
      });
    }, delayMs);
    this.timer.unref?.();
  }

  async runOnce(): Promise<BackupRun> {
    const started = Date.now();
    const file = join(this.config.dir, `hearth-backup-${backupStamp(new Date(started))}.tar.gz`);
    try {
      await createBackup(this.source, file);
      this.prune();
      this.last = { at: Math.floor(Date.now() / 1000), ok: true, file, error: null, seconds: (Date.now() - started) / 1000 };
      console.log(`Backup written: ${file} (${this.last.seconds.toFixed(1)} s)`);
    } catch (error: any) {
      this.last = { at: Math.floor(Date.now() / 1000), ok: false, file: null, error: String(error?.message ?? error), seconds: (Date.now() - started) / 1000 };
      console.error(`Backup to ${this.config.dir} failed: ${this.last.error}`);
    }
    return this.last;
  }

  private prune(): void {
    const all = this.backups();
    for (const name of all.slice(0, Math.max(0, all.length - this.config.keep))) rmSync(join(this.config.dir, name), { force: true });
  }
}
