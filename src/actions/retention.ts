import type { Hearth } from "../context";
import { allChannels } from "../store/channels";
import { allUsers } from "../store/users";
import { getMessage } from "../store/messages";
import { idsInRange } from "../store/message_indexes";
import { realmMessageRetentionDays } from "../access/groups";
import { doDeleteMessages } from "./message_delete";
import { doExpireUnclaimedUploads } from "./uploads";
import { doExpireTusUploads } from "./tus";

/**
 * Message retention (Zulip's `archive_messages`): messages older than their channel's
 * `message_retention_days` (null inherits the organization's; -1 keeps forever) are
 * deleted with their flags and index rows; direct messages follow the organization
 * setting. The job is idempotent and resumes from the data itself, so a crash midway
 * loses nothing: the next run (at start and every hour) finishes the work.
 * Uploads follow their messages (doDeleteMessages removes files no message links any
 * more); the same job removes uploads never shared and abandoned resumable uploads.
 */
const BATCH = 1000;
const DAY = 86400;

function expiredIds(h: Hearth, prefixDb: "channelMessages" | "userMessageIndex", prefix: (string | number)[], cutoff: number, limit: number): number[] {
  const ids: number[] = [];
  for (const id of idsInRange(h.store, prefixDb, prefix, 0, "newer")) {
    const m = getMessage(h.store, id);
    if (!m) continue;
    // IDs grow with time, so the first message young enough ends the scan.
    if (m.timestamp >= cutoff) break;
    ids.push(id);
    if (ids.length >= limit) break;
  }
  return ids;
}

export async function doExpireMessages(h: Hearth, now = Date.now() / 1000): Promise<number> {
  let deleted = 0;
  const realmDays = realmMessageRetentionDays(h);
  for (const channel of [...allChannels(h.store)]) {
    const days = channel.message_retention_days ?? realmDays;
    if (days < 0) continue;
    const cutoff = now - days * DAY;
    for (;;) {
      const ids = expiredIds(h, "channelMessages", [channel.id], cutoff, BATCH);
      if (ids.length === 0) break;
      await doDeleteMessages(h, ids);
      deleted += ids.length;
    }
  }
  if (realmDays >= 0) {
    const cutoff = now - realmDays * DAY;
    // Direct messages are found through each participant's "dm" index.
    for (const key of [...allUsers(h.store)].map((u) => u.id)) {
      for (;;) {
        const ids = expiredIds(h, "userMessageIndex", [key, "dm"], cutoff, BATCH);
        if (ids.length === 0) break;
        await doDeleteMessages(h, ids);
        deleted += ids.length;
      }
    }
  }
  return deleted;
}

/**
 * Runs the job now and then hourly. The returned stop waits for a run in progress, so
 * a server that stops right after starting does not close the store under it.
 */
export function startRetentionJob(h: Hearth, intervalMs = 3600_000): () => Promise<void> {
  let running: Promise<void> | null = null;
  const run = () => {
    running ??= (async () => {
      try {
        await doExpireMessages(h);
        await doExpireUnclaimedUploads(h);
        await doExpireTusUploads(h);
      } catch (e) {
        console.error("Message retention job failed; it will retry:", e);
      } finally {
        running = null;
      }
    })();
    return running;
  };
  void run();
  const timer = setInterval(run, intervalMs);
  return async () => {
    clearInterval(timer);
    await running;
  };
}
