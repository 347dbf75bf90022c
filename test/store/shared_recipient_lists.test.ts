/**
 * Recipient lists stored once per distinct list (src/store/shared_recipient_lists.ts):
 * messages sent to the same list refer to one stored copy, and every reader sees the
 * same IDs as when each message held its own, including rows of the old inline form.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StoreCache } from "../../src/store/cache";
import { Store } from "../../src/store/db";
import { clearAllButMeta } from "../../src/store/format";
import { recipientList } from "../../src/store/messages";
import { SHARED_LIST_MIN } from "../../src/store/shared_recipient_lists";
import { loadPendingUnreadIndex, UNREAD_WATERMARK, unreadWatermark } from "../../src/store/unread";
import { writeDeferredUnreadBatch } from "../../src/store/unread_batches";
import { addUserRows, deleteMessageRows, getUserFlags, insertMessage, insertMessageWithRows, messageRecipientFlags, messageRecipientIds, removeUserRows } from "../../src/store/user_messages";
import { channelMessageRecord as channelMessage } from "../kit/records";

const dirs: string[] = [];
const stores: Store[] = [];
function newStore(): Store {
  const dir = mkdtempSync(join(tmpdir(), "hearth-shared-lists-"));
  dirs.push(dir);
  const store = new Store(dir);
  stores.push(store);
  return store;
}
afterAll(async () => {
  for (const store of stores) await store.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});


/** Users 1..n, all unread (flags 0). */
const users = (n: number, from = 1) => Array.from({ length: n }, (_, i) => from + i);
const unreadFor = (ids: readonly number[]) => new Map(ids.map((id) => [id, 0]));
const sharedCount = (store: Store) => store.dbs.sharedRecipientLists.getKeysCount();

test("messages sent to the same list share one stored list; a changed list is a new one", async () => {
  const store = newStore();
  const list = users(20);
  await store.commit(() => insertMessage(store, channelMessage(1), unreadFor(list)));
  await store.commit(() => insertMessage(store, channelMessage(2), unreadFor(list)));
  // Equal content in another array object (another send's list) is found too.
  await store.commit(() => insertMessage(store, channelMessage(3), unreadFor([...list])));
  expect(store.dbs.messageRecipientLists.get(1)).toBe(1);
  expect(store.dbs.messageRecipientLists.get(2)).toBe(1);
  expect(store.dbs.messageRecipientLists.get(3)).toBe(1);
  expect(sharedCount(store)).toBe(1);
  expect(store.dbs.sharedRecipientLists.get(1)).toEqual(list);
  for (const id of [1, 2, 3]) {
    expect(recipientList(store, id)).toEqual(list);
    expect(messageRecipientIds(store, channelMessage(id))).toEqual(list);
    expect(getUserFlags(store, 7, id)).toBe(0);
    expect(getUserFlags(store, 21, id)).toBeUndefined();
  }

  // A user joins: the next message's list is a new shared list, the earlier ones keep theirs.
  const grown = users(21);
  await store.commit(() => insertMessage(store, channelMessage(4), unreadFor(grown)));
  await store.commit(() => insertMessage(store, channelMessage(5), unreadFor(grown)));
  expect(store.dbs.messageRecipientLists.get(4)).toBe(4);
  expect(store.dbs.messageRecipientLists.get(5)).toBe(4);
  expect(sharedCount(store)).toBe(2);
  expect(recipientList(store, 5)).toEqual(grown);
  expect(recipientList(store, 2)).toEqual(list);
  expect(getUserFlags(store, 21, 5)).toBe(0);
  expect(getUserFlags(store, 21, 2)).toBeUndefined();

  // Back to the first list: the one already stored is referred to again.
  await store.commit(() => insertMessage(store, channelMessage(6), unreadFor(list)));
  expect(store.dbs.messageRecipientLists.get(6)).toBe(1);
  expect(sharedCount(store)).toBe(2);
});

test("short lists (direct messages) stay inline", async () => {
  const store = newStore();
  const few = users(SHARED_LIST_MIN - 1);
  await store.commit(() => insertMessage(store, channelMessage(1), unreadFor(few)));
  expect(store.dbs.messageRecipientLists.get(1)).toEqual(few);
  expect(sharedCount(store)).toBe(0);
});

test("rows of the old form (the IDs inline) read as before, beside shared ones, for every reader and the background job", async () => {
  const store = newStore();
  const list = users(12);
  // A folder written before shared lists: the message and its inline list written raw, past the watermark.
  await store.commit(() => {
    store.dbs.meta.put(UNREAD_WATERMARK, 0);
    store.dbs.meta.put(["counter", "message"], 2);
    store.dbs.messages.put(1, channelMessage(1));
    store.dbs.messageRecipientLists.put(1, list);
  });
  await store.commit(() => insertMessage(store, channelMessage(2), unreadFor(list)));
  expect(store.dbs.messageRecipientLists.get(1)).toEqual(list);
  expect(store.dbs.messageRecipientLists.get(2)).toBe(2);
  loadPendingUnreadIndex(store);
  for (const id of [1, 2]) {
    expect(recipientList(store, id)).toEqual(list);
    expect(messageRecipientFlags(store, channelMessage(id))).toEqual(unreadFor(list));
    expect(getUserFlags(store, 12, id)).toBe(0);
  }
  // The job reads both forms and writes every recipient's "unread" rows.
  expect(await writeDeferredUnreadBatch(store, 500, (fn) => store.commit(fn))).toBe(2);
  loadPendingUnreadIndex(store);
  expect(unreadWatermark(store)).toBe(2);
  for (const id of [1, 2]) for (const userId of list) expect(getUserFlags(store, userId, id)).toBe(0);
  expect(getUserFlags(store, 13, 1)).toBeUndefined();
});

test("deleting a message leaves the shared list for the others, including the one whose send created it", async () => {
  const store = newStore();
  const list = users(10);
  for (const id of [1, 2, 3]) await store.commit(() => insertMessage(store, channelMessage(id), unreadFor(list)));
  await store.commit(() => deleteMessageRows(store, [{ message: channelMessage(1), recipients: messageRecipientFlags(store, channelMessage(1)) }]));
  expect(store.dbs.messageRecipientLists.get(1)).toBeUndefined();
  expect(store.dbs.sharedRecipientLists.get(1)).toEqual(list);
  expect(recipientList(store, 2)).toEqual(list);
  expect(messageRecipientFlags(store, channelMessage(3))).toEqual(unreadFor(list));
  // A later send to the same list still refers to it.
  await store.commit(() => insertMessage(store, channelMessage(4), unreadFor(list)));
  expect(store.dbs.messageRecipientLists.get(4)).toBe(1);
});

test("a change to one message's list writes it inline for that message alone; the shared list and its cached copy stay", async () => {
  const store = newStore();
  const list = users(10);
  for (const id of [1, 2]) await store.commit(() => insertMessage(store, channelMessage(id), unreadFor(list)));
  // Read outside a transaction: the decoded shared list is cached now.
  const cached = recipientList(store, 1);
  expect(recipientList(store, 2)).toBe(cached!);
  await store.commit(() => addUserRows(store, channelMessage(1), [30], 0));
  expect(recipientList(store, 1)).toEqual([...list, 30]);
  expect(store.dbs.messageRecipientLists.get(1)).toEqual([...list, 30]);
  expect(recipientList(store, 2)).toEqual(list);
  expect(cached).toEqual(list);
  await store.commit(() => removeUserRows(store, [{ message: channelMessage(2), rows: new Map([[3, 0]]) }]));
  expect(recipientList(store, 2)).toEqual(list.filter((id) => id !== 3));
  expect(store.dbs.sharedRecipientLists.get(1)).toEqual(list);
  // The next send to the unchanged list still shares it.
  await store.commit(() => insertMessage(store, channelMessage(3), unreadFor(list)));
  expect(store.dbs.messageRecipientLists.get(3)).toBe(1);
});

test("a list written by a transaction that rolled back is never referred to, even when its ID comes again with other content", async () => {
  const store = newStore();
  const first = users(10);
  const other = users(10, 100);
  const failed = store.commit(() => {
    insertMessage(store, channelMessage(1), unreadFor(first));
    throw new Error("rolled back");
  });
  await expect(failed).rejects.toThrow("rolled back");
  expect(store.dbs.sharedRecipientLists.get(1)).toBeUndefined();
  // The message ID (and so the list ID) is given out again, to a message with another list.
  await store.commit(() => insertMessage(store, channelMessage(1, 6), unreadFor(other)));
  expect(recipientList(store, 1)).toEqual(other);
  // The rolled-back list's content again: a list of its own, not the reused ID.
  await store.commit(() => insertMessage(store, channelMessage(2), unreadFor(first)));
  expect(store.dbs.messageRecipientLists.get(2)).toBe(2);
  expect(recipientList(store, 2)).toEqual(first);
  expect(recipientList(store, 1)).toEqual(other);
});

test("within one transaction (a bulk load) later messages refer to the list the first one wrote", async () => {
  const store = newStore();
  const list = users(15);
  await store.commit(() => {
    for (let id = 1; id <= 50; id++) insertMessageWithRows(store, channelMessage(id), new Map([[1, 0]]), list);
  });
  expect(sharedCount(store)).toBe(1);
  for (let id = 1; id <= 50; id++) expect(store.dbs.messageRecipientLists.get(id)).toBe(1);
  expect(recipientList(store, 50)).toEqual(list);
});

test("emptying the store forgets the shared lists: sends afterwards write their own", async () => {
  const store = newStore();
  const list = users(10);
  await store.commit(() => insertMessage(store, channelMessage(1), unreadFor(list)));
  expect(recipientList(store, 1)).toEqual(list);
  // As realm deletion does (src/actions/realm.ts).
  await store.commit(() => {
    clearAllButMeta(store);
    StoreCache.invalidateAll(store);
  });
  expect(sharedCount(store)).toBe(0);
  expect(recipientList(store, 1)).toBeUndefined();
  await store.commit(() => insertMessage(store, channelMessage(2), unreadFor(list)));
  expect(store.dbs.messageRecipientLists.get(2)).toBe(2);
  expect(recipientList(store, 2)).toEqual(list);
});
