/**
 * The per-recipient rows of a message (src/store/user_messages.ts, src/store/unread.ts): flags 0 are kept only
 * as the "unread" index row (implicit, through the recipient list, for recent channel
 * messages), and each message lists its recipients in one row. These check that the
 * compact form reads back exactly like one flags row per recipient.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../../src/store/db";
import { MessageFlag, type MessageRecord } from "../../src/store/messages";
import { loadPendingUnreadIndex } from "../../src/store/unread";
import { channelMessageRecord as channelMessage } from "../kit/records";
import { deleteMessageRows, getUserFlags, insertMessage, messageRecipientFlags, newestMessageIdOf, removeUserRows, addUserRows, setUserFlags, userMessageIds } from "../../src/store/user_messages";

const dir = mkdtempSync(join(tmpdir(), "hearth-user-messages-"));
const store = new Store(dir);
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});


test("flags 0 are stored as the unread row alone and read back as 0", async () => {
  const m = channelMessage(10);
  await store.commit(() => insertMessage(store, m, new Map([[1, MessageFlag.read], [2, 0], [3, MessageFlag.mentioned]])));
  expect(store.dbs.userMessages.get([2, 10])).toBeUndefined();
  expect(getUserFlags(store, 2, 10)).toBe(0);
  expect(getUserFlags(store, 1, 10)).toBe(MessageFlag.read);
  expect(getUserFlags(store, 3, 10)).toBe(MessageFlag.mentioned);
  expect(getUserFlags(store, 4, 10)).toBeUndefined();
  expect(messageRecipientFlags(store, m)).toEqual(new Map([[1, MessageFlag.read], [2, 0], [3, MessageFlag.mentioned]]));

  // Read, then unread again: back to the unread row alone.
  await store.commit(() => setUserFlags(store, 2, m, 0, MessageFlag.read));
  expect(store.dbs.userMessages.get([2, 10])).toBe(MessageFlag.read);
  expect(getUserFlags(store, 2, 10)).toBe(MessageFlag.read);
  await store.commit(() => setUserFlags(store, 2, m, MessageFlag.read, 0));
  expect(store.dbs.userMessages.get([2, 10])).toBeUndefined();
  expect(getUserFlags(store, 2, 10)).toBe(0);
});

test("rows added and removed later keep the recipient list exact", async () => {
  const m = channelMessage(20);
  await store.commit(() => insertMessage(store, m, new Map([[1, MessageFlag.read], [2, 0]])));
  await store.commit(() => setUserFlags(store, 4, m, undefined, MessageFlag.read | MessageFlag.historical));
  expect(messageRecipientFlags(store, m)).toEqual(
    new Map([[1, MessageFlag.read], [2, 0], [4, MessageFlag.read | MessageFlag.historical]]),
  );
  await store.commit(() => removeUserRows(store, [{ message: m, rows: new Map([[2, 0]]) }]));
  expect(getUserFlags(store, 2, 20)).toBeUndefined();
  expect(messageRecipientFlags(store, m)).toEqual(new Map([[1, MessageFlag.read], [4, MessageFlag.read | MessageFlag.historical]]));
  // Several at once (a move into another channel).
  await store.commit(() => addUserRows(store, m, [6, 5], MessageFlag.read));
  expect([...messageRecipientFlags(store, m).keys()]).toEqual([1, 4, 5, 6]);
  expect(getUserFlags(store, 5, 20)).toBe(MessageFlag.read);
  await store.commit(() => removeUserRows(store, [{ message: m, rows: new Map([[5, MessageFlag.read], [6, MessageFlag.read]]) }]));
  expect([...messageRecipientFlags(store, m).keys()]).toEqual([1, 4]);

  await store.commit(() => deleteMessageRows(store, [{ message: m, recipients: messageRecipientFlags(store, m) }]));
  expect(store.dbs.messageRecipientLists.get(20)).toBeUndefined();
  expect(getUserFlags(store, 1, 20)).toBeUndefined();
  expect(getUserFlags(store, 4, 20)).toBeUndefined();
});

test("a message stored before recipient lists existed keeps every holder when one is added", async () => {
  // Older data folders: flags rows only, no recipient list.
  const m: MessageRecord = { ...channelMessage(25), type: "private", channel_id: null, topic: "", dm_user_ids: [1, 2, 3] };
  await store.commit(() => {
    store.dbs.messages.put(m.id, m);
    store.dbs.userMessages.put([1, m.id], MessageFlag.read);
    store.dbs.userMessages.put([2, m.id], MessageFlag.starred);
  });
  expect(messageRecipientFlags(store, m)).toEqual(new Map([[1, MessageFlag.read], [2, MessageFlag.starred]]));
  await store.commit(() => addUserRows(store, m, [3], MessageFlag.read));
  expect(store.dbs.messageRecipientLists.get(m.id)).toEqual([1, 2, 3]);
  expect(messageRecipientFlags(store, m)).toEqual(new Map([[1, MessageFlag.read], [2, MessageFlag.starred], [3, MessageFlag.read]]));
});

test("a user's messages merge flags rows and unread rows in order, each once", async () => {
  const ids = [30, 31, 32, 33];
  await store.commit(() => {
    insertMessage(store, channelMessage(30), new Map([[7, 0]]));
    insertMessage(store, channelMessage(31), new Map([[7, MessageFlag.read]]));
    insertMessage(store, channelMessage(32), new Map([[7, MessageFlag.starred]]));
    insertMessage(store, channelMessage(33), new Map([[7, 0]]));
    // A flags row of 0 beside its unread row, as stores written before the compact form hold.
    store.dbs.userMessages.put([7, 33], 0);
  });
  expect([...userMessageIds(store, 7, 0, "newer")]).toEqual(ids);
  expect([...userMessageIds(store, 7, Number.MAX_SAFE_INTEGER, "older")]).toEqual([...ids].reverse());
  expect([...userMessageIds(store, 7, 32, "older")]).toEqual([32, 31, 30]);
  expect(newestMessageIdOf(store, 7)).toBe(33);
  expect(newestMessageIdOf(store, 8)).toBe(-1);
});

test("IDs given out again after a rollback keep each user's pending list sorted and without repeats", async () => {
  // The server builds the index at start, from committed data; then sends add to it.
  loadPendingUnreadIndex(store);
  // A batch that rolled back gave out 61 and 62; the next sends get them again.
  await store.commit(() => {
    insertMessage(store, channelMessage(60), new Map([[9, 0]]));
    insertMessage(store, channelMessage(63), new Map([[9, 0]]));
  });
  await store.commit(() => {
    insertMessage(store, channelMessage(61), new Map([[9, 0]]));
    insertMessage(store, channelMessage(62), new Map([[9, 0]]));
    insertMessage(store, channelMessage(62), new Map([[9, 0]]));
  });
  expect([...userMessageIds(store, 9, 0, "newer")]).toEqual([60, 61, 62, 63]);
  expect([...userMessageIds(store, 9, Number.MAX_SAFE_INTEGER, "older")]).toEqual([63, 62, 61, 60]);
  expect([...userMessageIds(store, 9, 61, "older")]).toEqual([61, 60]);
});
