/**
 * A channel message's recipients are its active subscribers, computed once per
 * subscriber list and set of deactivated accounts (src/actions/message_send.ts,
 * recipientsOf): each send must follow subscribing, unsubscribing, deactivation and
 * reactivation in between.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { expectSuccess, startTestServer, type CastName, type TestServer } from "../kit";
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
