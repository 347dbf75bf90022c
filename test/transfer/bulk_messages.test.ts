/**
 * The import's bulk message insert (src/store/bulk_messages.ts) against the one-by-one
 * insert it replaces: over several batches, with runs longer than one run record can
 * hold and many topics per run, every user sees the same unread messages (with the
 * same places), the same flags and the same narrows.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../../src/store/db";
import { openStoreFormat } from "../../src/store/format";
import { insertMessagesInBulk, reserveIds, type BulkMessage } from "../../src/store/bulk_messages";
import { insertMessageWithRows, getUserFlags } from "../../src/store/user_messages";
import { unreadRows } from "../../src/store/unread";
import { idsInRange } from "../../src/store/message_indexes";
import { messageRecord } from "../kit/records";
import { conversationKey, MessageFlag, recipientList, topicKey, type MessageRecord } from "../../src/store/messages";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function newStore(): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), "hearth-bulk-"));
  dirs.push(dir);
  const store = new Store(dir);
  await openStoreFormat(store);
  return store;
}

const USERS = [1, 2, 3, 4];
const COUNT = 700;

/** Message `i` (from 1): mostly channel messages over 2 channels and 30 topics, every 7th a direct message; flags of every kind. */
function messageAt(i: number): { message: MessageRecord; flags: Map<number, number> } {
  const sender = USERS[i % USERS.length];
  const dm = i % 7 === 0;
  const other = USERS[(i + 1) % USERS.length];
  const message = messageRecord({
    id: i,
    sender_id: sender,
    type: dm ? "private" : "stream",
    channel_id: dm ? null : 1 + (i % 2),
    topic: dm ? "" : `topic ${i % 30}`,
    dm_user_ids: dm ? [sender, other].sort((a, b) => a - b) : null,
    recipient_id: 1,
    content: `word${i % 11} shared text ${i}`,
    rendered_content: `<p>word${i % 11} shared text ${i}</p>`,
    timestamp: 1_700_000_000 + i,
  });
  const flags = new Map<number, number>();
  for (const user of dm ? message.dm_user_ids! : USERS) {
    let bits = 0;
    if (user === sender) bits = MessageFlag.read;
    else if (i % 5 === user) bits = MessageFlag.read;
    else if (i % 13 === user) bits = MessageFlag.starred;
    else if (i % 17 === user) bits = MessageFlag.mentioned;
    flags.set(user, bits);
  }
  return { message, flags };
}

test("bulk insert gives the rows of one-by-one insert", async () => {
  const one = await newStore();
  const bulk = await newStore();
  await one.commit(() => {
    for (let i = 1; i <= COUNT; i++) {
      one.nextId("message");
      const { message, flags } = messageAt(i);
      insertMessageWithRows(one, message, flags);
    }
  });
  // Batches of uneven sizes, one of them longer than a run record (64 IDs) per user.
  for (const [from, to] of [[1, 1], [2, 200], [201, 230], [231, COUNT]]) {
    await bulk.commit(() => {
      expect(reserveIds(bulk, "message", to - from + 1)).toBe(from);
      const batch: BulkMessage[] = [];
      for (let i = from; i <= to; i++) batch.push(messageAt(i));
      insertMessagesInBulk(bulk, batch);
    });
  }
  expect(bulk.lastId("message")).toBe(COUNT);
  for (const user of USERS) {
    const rows = (store: Store) => [...unreadRows(store, user, 0, "newer")];
    expect(rows(bulk).length).toBeGreaterThan(100);
    expect(rows(bulk)).toEqual(rows(one));
    for (let i = 1; i <= COUNT; i++) expect([i, getUserFlags(bulk, user, i)]).toEqual([i, getUserFlags(one, user, i)]);
    for (const index of ["starred", "mentioned", "dm"]) {
      const ids = (store: Store) => [...idsInRange(store, "userMessageIndex", [user, index], 0, "newer")];
      expect(ids(bulk)).toEqual(ids(one));
    }
    const dms = (store: Store) => [...idsInRange(store, "dmMessages", [conversationKey([user, USERS[user % USERS.length]].sort((a, b) => a - b))], 0, "newer")];
    expect(dms(bulk)).toEqual(dms(one));
  }
  for (const [db, prefix] of [
    ["channelMessages", [1]],
    ["topicMessages", [2, topicKey("topic 7")]],
    ["senderMessages", [3]],
    ["searchTerms", ["word3"]],
  ] as const) {
    const ids = (store: Store) => [...idsInRange(store, db, prefix, 0, "newer")];
    expect(ids(bulk).length).toBeGreaterThan(0);
    expect(ids(bulk)).toEqual(ids(one));
  }
  // As read (inline or shared: the two loads may give a shared list different IDs).
  for (let i = 1; i <= COUNT; i++) expect(recipientList(bulk, i)).toEqual(recipientList(one, i));
  await one.close();
  await bulk.close();
});
