/**
 * A channel message's recipients are its active subscribers, computed once per
 * subscriber list and set of deactivated accounts (src/actions/message_send.ts,
 * recipientsOf): each send must follow subscribing, unsubscribing, deactivation and
 * reactivation in between. And the topic rules the send checks once per topic scan
 * (src/actions/message_content.ts, normalizeTopic).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { expectError, expectSuccess, startTestServer, type CastName, type TestServer } from "../kit";
import { messageRecipientIds } from "../../src/store/user_messages";
import { getMessage } from "../../src/store/messages";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

test("each send goes to the channel's active subscribers of that moment", async () => {
  const name = "recipients of the moment";
  const channelId = await s.createChannel("iago", name, ["othello", "hamlet", "polonius"]);
  const send = async () => expectSuccess(await s.as("othello").post("/messages", { type: "stream", to: channelId, topic: "t", content: "words" })).id as number;
  const recipients = (id: number) => [...messageRecipientIds(s.server.h.store, getMessage(s.server.h.store, id)!)];
  const ids = (...who: CastName[]) => who.map((w) => s.users[w].id).sort((a, b) => a - b);

  expect(recipients(await send())).toEqual(ids("othello", "hamlet", "polonius"));
  expect(recipients(await send())).toEqual(ids("othello", "hamlet", "polonius"));
  expectSuccess(await s.as("iago").delete(`/users/${s.users.polonius.id}`));
  expect(recipients(await send())).toEqual(ids("othello", "hamlet"));
  expectSuccess(await s.as("iago").post(`/users/${s.users.polonius.id}/reactivate`));
  expect(recipients(await send())).toEqual(ids("othello", "hamlet", "polonius"));
  expectSuccess(await s.as("hamlet").delete("/users/me/subscriptions", { subscriptions: [name] }));
  expect(recipients(await send())).toEqual(ids("othello", "polonius"));
  expectSuccess(await s.as("cordelia").post("/users/me/subscriptions", { subscriptions: [{ name }] }));
  expect(recipients(await send())).toEqual(ids("othello", "polonius", "cordelia"));
});

test("a topic with a control character is refused at its position; a long one is cut to 60 characters", async () => {
  const channelId = await s.createChannel("iago", "topic rules", ["othello"]);
  const send = (topic: string) => s.as("othello").post("/messages", { type: "stream", to: channelId, topic, content: "words" });
  expectError(await send("castle 😀 \u0007 ghost"), 400, "BAD_REQUEST", "Invalid character in topic, at position 10!");
  const long = "😀".repeat(30) + "x".repeat(40);
  const id = expectSuccess(await send(long)).id as number;
  expect(getMessage(s.server.h.store, id)!.topic).toBe("😀".repeat(30) + "x".repeat(27) + "...");
  // 60 characters in more than 60 code units: kept whole.
  const sixty = "😀".repeat(60);
  expect(getMessage(s.server.h.store, expectSuccess(await send(sixty)).id as number)!.topic).toBe(sixty);
});
