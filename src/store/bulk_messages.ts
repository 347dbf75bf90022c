import type { Store } from "./db";
import type { MessageLocation, MessageRecord } from "./messages";
import { putRun, RUN_MAX_IDS } from "./unread_runs";
import { insertMessageWithRows } from "./user_messages";

/** One message of a bulk load, with each recipient's flags. */
export interface BulkMessage {
  message: MessageRecord;
  /** Each recipient's flag bits (the sender's too). */
  flags: ReadonlyMap<number, number>;
}

/**
 * Many messages written at once into a store that is being loaded (an import into a
 * new data folder), in ascending IDs newer than any message it holds. The rows are
 * those insertMessageWithRows writes, but the channel recipients whose flags are 0
 * (unread, nothing else: most recipients of a message nobody has read yet) get their
 * "unread" rows as runs, the form the unread-rows job gives them after a send (see
 * the top of unread.ts): one record per user for up to RUN_MAX_IDS of the batch's
 * messages instead of one row per user and message, each on its own B-tree page.
 * Call inside `store.commit`, with no message waiting for deferred unread rows
 * (insertMessageWithRows refuses the first message otherwise, before any write).
 */
export function insertMessagesInBulk(store: Store, batch: readonly BulkMessage[]): void {
  if (batch.length === 0) return;
  // One location object per channel and topic: a run finds its places by identity.
  const places = new Map<string, MessageLocation>();
  const runs = new Map<number, { ids: number[]; places: MessageLocation[] }>();
  let lastId = 0;
  for (const { message: m, flags } of batch) {
    if (m.id <= lastId) throw new Error("insertMessagesInBulk: message IDs must ascend");
    lastId = m.id;
    let rows = flags;
    if (m.type === "stream") {
      const placeKey = `${m.channel_id}\0${m.topic}`;
      let place = places.get(placeKey);
      if (!place) places.set(placeKey, (place = [m.channel_id!, m.topic]));
      const explicit = new Map<number, number>();
      rows = explicit;
      for (const [userId, bits] of flags) {
        if (bits !== 0) {
          explicit.set(userId, bits);
          continue;
        }
        let run = runs.get(userId);
        if (!run) runs.set(userId, (run = { ids: [], places: [] }));
        run.ids.push(m.id);
        run.places.push(place);
      }
    }
    // The recipient list names every recipient, those whose rows are in runs too.
    insertMessageWithRows(store, m, rows, flags.keys());
  }
  for (const [userId, run] of runs) {
    for (let i = 0; i < run.ids.length; i += RUN_MAX_IDS) {
      putRun(store, userId, run.ids[i], run.ids.slice(i, i + RUN_MAX_IDS), run.places.slice(i, i + RUN_MAX_IDS));
    }
  }
}

/** Allocates `count` consecutive IDs of a sequence at once (one counter write); returns the first. Call inside `store.commit`. */
export function reserveIds(store: Store, sequence: string, count: number): number {
  const first = store.lastId(sequence) + 1;
  if (count > 0) store.dbs.meta.put(["counter", sequence], first + count - 1);
  return first;
}
