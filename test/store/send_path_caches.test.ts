/**
 * What a send reads from memory instead of the store, each checked against every
 * writer of what it keeps: subscription rows (src/store/subscriptions.ts), users'
 * topic policies (src/store/user_topics.ts), whether a
 * topic exists (src/store/message_indexes.ts), conversations' recipient IDs
 * (src/store/messages.ts), and the pending unread index grouped by recipient list
 * (src/store/unread.ts), which must read exactly as one row per recipient.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Store } from "../../src/store/db";
import { existingRecipientId, MessageFlag, recipientIdFor } from "../../src/store/messages";
import { topicExists } from "../../src/store/message_topics";
import { getSubscription, putSubscription, type SubscriptionRecord } from "../../src/store/subscriptions";
import { unreadMessageIds } from "../../src/store/unread";
import { getUserTopic, putUserTopic, VisibilityPolicy } from "../../src/store/user_topics";
import { deleteMessageRows, getUserFlags, insertMessage, replaceMessage, setUserFlags, userMessageIds } from "../../src/store/user_messages";
import { channelMessageRecord as channelMessage } from "../kit/records";

const dir = mkdtempSync(join(tmpdir(), "hearth-send-path-caches-"));
const store = new Store(dir);
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});


const subscription = (userId: number, extra: Partial<SubscriptionRecord> = {}): SubscriptionRecord => ({
  channel_id: 3, user_id: userId, active: true, color: "#fff", is_muted: false, pin_to_top: false,
  desktop_notifications: null, email_notifications: null, wildcard_mentions_notify: null, push_notifications: null, audible_notifications: null, ...extra,
});

test("subscription rows follow every write and a rolled-back one", async () => {
  expect(getSubscription(store, 3, 7)).toBeUndefined();
  await store.commit(() => putSubscription(store, subscription(7)));
  expect(getSubscription(store, 3, 7)?.is_muted).toBe(false);
  await store.commit(() => putSubscription(store, subscription(7, { is_muted: true })));
  expect(getSubscription(store, 3, 7)?.is_muted).toBe(true);
  await expect(
    store.commit(() => {
      putSubscription(store, subscription(7, { active: false }));
      expect(getSubscription(store, 3, 7)?.active).toBe(false);
      throw new Error("roll back");
    }),
  ).rejects.toThrow("roll back");
  expect(getSubscription(store, 3, 7)).toMatchObject({ active: true, is_muted: true });
  await store.commit(() => putSubscription(store, subscription(7, { active: false })));
  expect(getSubscription(store, 3, 7)?.active).toBe(false);
});

test("a topic exists from its first message until its last one leaves, by deletion or by a move", async () => {
  const flags = new Map([[1, MessageFlag.read]]);
  expect(topicExists(store, 4, "Castle")).toBe(false);
  const a = channelMessage(100, 4, "Castle");
  const b = channelMessage(101, 4, "castle");
  await store.commit(() => insertMessage(store, a, flags));
  expect(topicExists(store, 4, "castle")).toBe(true);
  await store.commit(() => insertMessage(store, b, flags));
  await store.commit(() => deleteMessageRows(store, [{ message: a, recipients: flags }]));
  expect(topicExists(store, 4, "CASTLE")).toBe(true);
  // Its last message moves to another topic: gone from here, there now.
  expect(topicExists(store, 4, "ghost")).toBe(false);
  await store.commit(() => replaceMessage(store, b, { ...b, topic: "ghost" }));
  expect(topicExists(store, 4, "castle")).toBe(false);
  expect(topicExists(store, 4, "ghost")).toBe(true);
  // A message rolled back leaves no topic behind.
  await expect(
    store.commit(() => {
      insertMessage(store, channelMessage(102, 4, "rolled"), flags);
      throw new Error("roll back");
    }),
  ).rejects.toThrow("roll back");
  expect(topicExists(store, 4, "rolled")).toBe(false);
  await store.commit(() => deleteMessageRows(store, [{ message: { ...b, topic: "ghost" }, recipients: flags }]));
  expect(topicExists(store, 4, "ghost")).toBe(false);
});

test("a recipient ID read before its allocation commits, or after one rolled back, is not kept", async () => {
  expect(existingRecipientId(store, "d:1,2")).toBeUndefined();
  await expect(
    store.commit(() => {
      recipientIdFor(store, "d:1,2");
      throw new Error("roll back");
    }),
  ).rejects.toThrow("roll back");
  expect(existingRecipientId(store, "d:1,2")).toBeUndefined();
  const id = await store.commit(() => recipientIdFor(store, "d:1,2"));
  expect(existingRecipientId(store, "d:1,2")).toBe(id);
  expect(await store.commit(() => recipientIdFor(store, "d:1,2"))).toBe(id);
});

test("implicit unread rows grouped by recipient list read as one row per recipient", async () => {
  // Two channels' lists, a list that changes (a new subscriber), exceptions, a rolled-back send, marks read.
  // 23 and 24: two lists with the same length, ends and sum (the index's key for a list).
  const lists: Record<number, number[]> = { 20: [1, 2, 3, 4], 21: [2, 3, 5], 22: [1, 2, 3, 4, 6], 23: [1, 3, 6, 8], 24: [1, 4, 5, 8] };
  const model = new Map<number, Map<number, number>>();
  let id = 1000;
  const sent: number[] = [];
  const send = async (channelId: number, exceptions: [number, number][]) => {
    const flags = new Map(lists[channelId].map((u) => [u, 0]));
    for (const [u, bits] of exceptions) flags.set(u, bits);
    const m = channelMessage(++id, channelId, "t");
    await store.commit(() => insertMessage(store, m, flags));
    model.set(m.id, flags);
    sent.push(m.id);
    return m;
  };
  for (let round = 0; round < 6; round++) {
    await send(20, [[1, MessageFlag.read]]);
    await send(21, round % 2 === 0 ? [[3, MessageFlag.mentioned]] : []);
    if (round === 3) {
      await expect(
        store.commit(() => {
          insertMessage(store, channelMessage(id + 1, 21, "t"), new Map([[2, 0], [9, 0]]));
          throw new Error("roll back");
        }),
      ).rejects.toThrow("roll back");
    }
    await send(round < 3 ? 20 : 22, [[4, MessageFlag.read | MessageFlag.starred]]);
    await send(23, []);
    await send(24, [[5, MessageFlag.starred]]);
  }
  // A recipient marks one read, another marks their mention read.
  const first = channelMessage(sent[0], 20, "t");
  await store.commit(() => setUserFlags(store, 2, first, 0, MessageFlag.read));
  model.get(sent[0])!.set(2, MessageFlag.read);
  const second = channelMessage(sent[1], 21, "t");
  await store.commit(() => setUserFlags(store, 3, second, MessageFlag.mentioned, MessageFlag.mentioned | MessageFlag.read));
  model.get(sent[1])!.set(3, MessageFlag.mentioned | MessageFlag.read);

  for (const user of [1, 2, 3, 4, 5, 6, 8, 9]) {
    const held = sent.filter((m) => model.get(m)!.has(user));
    const unread = held.filter((m) => !(model.get(m)!.get(user)! & MessageFlag.read));
    for (const m of sent) expect({ user, m, flags: getUserFlags(store, user, m) }).toEqual({ user, m, flags: model.get(m)!.get(user) });
    expect({ user, unread: [...unreadMessageIds(store, user, 0, "newer")].filter((m) => m > 1000) }).toEqual({ user, unread });
    expect({ user, unread: [...unreadMessageIds(store, user, Number.MAX_SAFE_INTEGER, "older")].filter((m) => m > 1000) }).toEqual({ user, unread: unread.toReversed() });
    expect({ user, held: [...userMessageIds(store, user, Number.MAX_SAFE_INTEGER, "older")].filter((m) => m > 1000) }).toEqual({ user, held: held.toReversed() });
    // A walk from the middle.
    const middle = sent[7];
    expect([...unreadMessageIds(store, user, middle, "older")].filter((m) => m > 1000)).toEqual(unread.filter((m) => m <= middle).toReversed());
  }
});

test("users' topic policies follow every write, removals and a rolled-back one", async () => {
  const policy = (topic: string, visibility_policy: number) => ({ stream_id: 6, topic_name: topic, visibility_policy, last_updated: 1 });
  expect(getUserTopic(store, 7, 6, "Castle")).toBeUndefined();
  await store.commit(() => putUserTopic(store, 7, policy("Castle", VisibilityPolicy.FOLLOWED)));
  expect(getUserTopic(store, 7, 6, "castle")?.visibility_policy).toBe(VisibilityPolicy.FOLLOWED);
  expect(getUserTopic(store, 8, 6, "castle")).toBeUndefined();
  await store.commit(() => putUserTopic(store, 8, policy("castle", VisibilityPolicy.MUTED)));
  expect(getUserTopic(store, 8, 6, "Castle")?.visibility_policy).toBe(VisibilityPolicy.MUTED);
  await expect(
    store.commit(() => {
      putUserTopic(store, 7, policy("Castle", VisibilityPolicy.INHERIT));
      expect(getUserTopic(store, 7, 6, "Castle")).toBeUndefined();
      throw new Error("roll back");
    }),
  ).rejects.toThrow("roll back");
  expect(getUserTopic(store, 7, 6, "Castle")?.visibility_policy).toBe(VisibilityPolicy.FOLLOWED);
  await store.commit(() => putUserTopic(store, 7, policy("Castle", VisibilityPolicy.INHERIT)));
  expect(getUserTopic(store, 7, 6, "Castle")).toBeUndefined();
  expect(getUserTopic(store, 8, 6, "Castle")?.visibility_policy).toBe(VisibilityPolicy.MUTED);
});
