/** A sent message's recipient list, encoded once per shared list, is stored as the same bytes as a plain put of the list, and reads back as it. */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../../src/store/db";
import { recipientList, type MessageRecord } from "../../src/store/messages";
import { RecipientFlags } from "../../src/store/recipient_flags";
import { insertMessage } from "../../src/store/user_messages";
import { messageRecord } from "../kit/records";

const dir = mkdtempSync(join(tmpdir(), "hearth-recipient-list-bytes-"));
const store = new Store(dir);
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const channelMessage = (id: number): MessageRecord =>
  messageRecord({ id, sender_id: 1, type: "stream", channel_id: 3, topic: "t", dm_user_ids: null, recipient_id: 9, content: `m ${id}`, rendered_content: `<p>m ${id}</p>`, timestamp: 1 });

test("the same bytes as put(id, ids), for a list shared by several sends and for others", async () => {
  const shared = Array.from({ length: 150 }, (_, i) => i * 37 + 1);
  const small = [1, 5, 70_000, 2 ** 31 + 5];
  const lists = [shared, shared, small, shared, small];
  for (const [i, ids] of lists.entries()) {
    const flags = new RecipientFlags(ids, 0);
    flags.set(1, 1);
    await store.commit(() => insertMessage(store, channelMessage(100 + i), flags));
  }
  const db = store.dbs.messageRecipientLists as any;
  await store.commit(() => db.put(999, shared));
  await store.commit(() => db.put(998, small));
  for (const [i, ids] of lists.entries()) {
    expect(recipientList(store, 100 + i)).toEqual(ids);
    expect(Buffer.from(db.getBinary(100 + i))).toEqual(Buffer.from(db.getBinary(ids === shared ? 999 : 998)));
  }
});
