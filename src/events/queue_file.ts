import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { EventQueue, QueuedEvent, QueueSettings } from "./event_queue";

/**
 * The event queues across a graceful restart (Zulip's Tornado dumps its queues to a
 * file at shutdown too): written at shutdown, read and deleted at the next start. After
 * a crash there is no file, and clients get BAD_EVENT_QUEUE_ID and re-register.
 */
const SAVE_FILE = "event_queues.json";
const SAVE_FORMAT = 1;

export interface SavedQueue {
  id: string;
  settings: QueueSettings;
  events: QueuedEvent[];
  lastEventId: number;
  /** With the downtime added: it does not count toward the queue's idle time. */
  lastAccess: number;
}

/** Writes the queues to the data folder (readable by the server's user only), replacing the file whole. */
export function saveQueues(dataDir: string, queues: Iterable<EventQueue>): void {
  const saved = {
    format: SAVE_FORMAT,
    savedAt: Date.now(),
    queues: [...queues].map((q) => ({
      id: q.id,
      settings: q.settings,
      events: q.events,
      lastEventId: q.lastEventId,
      lastAccess: q.lastAccess,
    })),
  };
  const path = join(dataDir, SAVE_FILE);
  writeFileSync(path + ".tmp", JSON.stringify(saved), { mode: 0o600 });
  renameSync(path + ".tmp", path);
}

/** The queues a graceful shutdown saved, then the file deleted; damaged entries are left out. */
export function loadSavedQueues(dataDir: string): SavedQueue[] {
  const path = join(dataDir, SAVE_FILE);
  if (!existsSync(path)) return [];
  const queues: SavedQueue[] = [];
  try {
    const saved = JSON.parse(readFileSync(path, "utf8"));
    if (saved.format === SAVE_FORMAT) {
      const downtime = Math.max(0, Date.now() - saved.savedAt);
      for (const s of saved.queues) {
        // A damaged entry is skipped: a queue without its events would break every later delivery.
        const settings = s?.settings;
        const settingsOk = settings && typeof settings === "object" && typeof settings.userId === "number" && Array.isArray(settings.narrow) && settings.capabilities && typeof settings.capabilities === "object";
        if (typeof s?.id !== "string" || !settingsOk || !Array.isArray(s.events) || !Number.isInteger(s.lastEventId)) continue;
        queues.push({
          id: s.id,
          settings: s.settings,
          events: s.events,
          lastEventId: s.lastEventId,
          lastAccess: Number.isFinite(s.lastAccess) ? s.lastAccess + downtime : Date.now(),
        });
      }
    }
  } catch (e) {
    console.error("Could not restore saved event queues; clients will re-register:", e);
  }
  rmSync(path, { force: true });
  return queues;
}
