/** Message reminders: create, list, delete, delivery by the Notification Bot (fake clock). */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectSchema, expectSuccess, startTestServer, type TestServer } from "../kit";
import { register, verifyAction } from "../kit/events";
import { deliverDueScheduledMessages } from "../../src/actions/scheduled_messages";
import { CreateReminderResponse, RemindersResponse } from "../../src/schemas/scheduled_messages";

let s: TestServer;
let denmark: number;
const viewers = { viewers: ["hamlet", "othello"] as ("hamlet" | "othello")[] };
const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;
const tickLater = () => deliverDueScheduledMessages(s.server.h, Date.now() / 1000 + 10 * 86400);

beforeAll(async () => {
  s = await startTestServer();
  denmark = await s.createChannel("iago", "Denmark", ["iago", "hamlet", "othello"]);
});
afterAll(() => s.stop());

async function remindersOf(who: "hamlet" | "othello") {
  const body = expectSuccess(await s.as(who).get("/reminders"));
  expectSchema(RemindersResponse, body);
  return body.reminders as any[];
}
async function newestOf(who: "hamlet" | "othello") {
  return expectSuccess(await s.as(who).get("/messages", { anchor: "newest", num_before: 1, num_after: 0, apply_markdown: false })).messages[0];
}

describe("POST and GET /reminders", () => {
  test("a reminder for a channel message: Zulip's Reminder object and text, event to the owner only", async () => {
    const target = expectSuccess(await s.as("othello").post("/messages", { type: "stream", to: denmark, topic: "castle", content: "Meet at the gate" })).id;
    const at = inAnHour();
    let id = 0;
    const result = await verifyAction(s, async () => {
      const body = expectSuccess(await s.as("hamlet").post("/reminders", { message_id: target, scheduled_delivery_timestamp: at, note: "bring a torch" }));
      expectSchema(CreateReminderResponse, body);
      id = body.reminder_id;
    }, viewers);
    expect(result.types).toEqual({ hamlet: ["reminders/add"], othello: [] });
    const [reminder] = await remindersOf("hamlet");
    const channelPath = `${s.url}/#narrow/channel/${denmark}-Denmark/topic/castle`;
    expect(reminder).toMatchObject({ reminder_id: id, type: "private", to: [s.users.hamlet.id], scheduled_delivery_timestamp: at, failed: false, reminder_target_message_id: target });
    expect(reminder.content).toBe(
      `You requested a reminder for #**Denmark>castle@${target}**. Note:\n > bring a torch\n\n` +
        `@_**Othello, the Moor of Venice|${s.users.othello.id}** [said](${channelPath}/near/${target}):\n\`\`\`quote\nMeet at the gate\n\`\`\``,
    );
    // A link into this server's web app renders relative, as Zulip renders it.
    expect(reminder.rendered_content).toContain(`href="#narrow/channel/${denmark}-Denmark/topic/castle/near/${target}"`);
    expect(reminder.rendered_content).toContain("<blockquote>");
    expect(await remindersOf("othello")).toEqual([]);
    expect((await register(s.as("hamlet"), { fetch_event_types: ["reminders"] })).reminders).toEqual([reminder]);
    expectSuccess(await s.as("hamlet").delete(`/reminders/${id}`));
  });

  test("soonest first; a direct message links its conversation", async () => {
    const dm = expectSuccess(await s.as("othello").post("/messages", { type: "direct", to: [s.users.hamlet.id], content: "a secret" })).id;
    const later = expectSuccess(await s.as("hamlet").post("/reminders", { message_id: dm, scheduled_delivery_timestamp: inAnHour() + 60 })).reminder_id;
    const sooner = expectSuccess(await s.as("hamlet").post("/reminders", { message_id: dm, scheduled_delivery_timestamp: inAnHour() })).reminder_id;
    const list = await remindersOf("hamlet");
    expect(list.map((r) => r.reminder_id)).toEqual([sooner, later]);
    const ids = [s.users.hamlet.id, s.users.othello.id].sort((a, b) => a - b).join(",");
    expect(list[0].content).toBe(
      `You requested a reminder for the following direct message.\n\n@_**Othello, the Moor of Venice|${s.users.othello.id}** [said](${s.url}/#narrow/dm/${ids}/near/${dm}):\n\`\`\`quote\na secret\n\`\`\``,
    );
    for (const r of list) expectSuccess(await s.as("hamlet").delete(`/reminders/${r.reminder_id}`));
  });

  test("validation: future time, a message the caller can read, the note limit from register", async () => {
    const target = expectSuccess(await s.as("hamlet").post("/messages", { type: "stream", to: denmark, topic: "t", content: "x" })).id;
    const state = await register(s.as("hamlet"), { fetch_event_types: ["realm"] });
    expect(state.max_reminder_note_length).toBe(1000);
    expectError(await s.as("hamlet").post("/reminders", { message_id: target, scheduled_delivery_timestamp: 1000 }), 400, "BAD_REQUEST", "Scheduled delivery time must be in the future.");
    expectError(await s.as("hamlet").post("/reminders", { message_id: 999999, scheduled_delivery_timestamp: inAnHour() }), 400, "BAD_REQUEST", "Invalid message(s)");
    // Cordelia cannot read a DM between others.
    const dm = expectSuccess(await s.as("othello").post("/messages", { type: "direct", to: [s.users.hamlet.id], content: "private" })).id;
    expectError(await s.as("cordelia").post("/reminders", { message_id: dm, scheduled_delivery_timestamp: inAnHour() }), 400, "BAD_REQUEST", "Invalid message(s)");
    expectError(
      await s.as("hamlet").post("/reminders", { message_id: target, scheduled_delivery_timestamp: inAnHour(), note: "n".repeat(1001) }),
      400,
      "BAD_REQUEST",
      "Maximum reminder note length: 1000 characters",
    );
    expectError(await s.as("hamlet").post("/reminders", { scheduled_delivery_timestamp: inAnHour() }), 400, "REQUEST_VARIABLE_MISSING");
    expectSuccess(await s.as("hamlet").post("/reminders", { message_id: target, scheduled_delivery_timestamp: inAnHour(), note: "n".repeat(1000) }));
    expect(await remindersOf("hamlet")).toHaveLength(1);
    for (const r of await remindersOf("hamlet")) expectSuccess(await s.as("hamlet").delete(`/reminders/${r.reminder_id}`));
  });
});

describe("DELETE /reminders/{id}", () => {
  test("owner only; a remove event; 404 afterwards; scheduled messages are not reminders", async () => {
    const target = expectSuccess(await s.as("hamlet").post("/messages", { type: "stream", to: denmark, topic: "t", content: "y" })).id;
    const id = expectSuccess(await s.as("hamlet").post("/reminders", { message_id: target, scheduled_delivery_timestamp: inAnHour() })).reminder_id;
    expectError(await s.as("othello").delete(`/reminders/${id}`), 404, "BAD_REQUEST", "Reminder does not exist");
    expectError(await s.as("hamlet").delete(`/scheduled_messages/${id}`), 404, "BAD_REQUEST", "Scheduled message does not exist");
    const result = await verifyAction(s, () => s.as("hamlet").delete(`/reminders/${id}`), viewers);
    expect(result.events.hamlet.map((e) => [e.type, e.op, e.reminder_id])).toEqual([["reminders", "remove", id]]);
    expect(result.types.othello).toEqual([]);
    expectError(await s.as("hamlet").delete(`/reminders/${id}`), 404, "BAD_REQUEST", "Reminder does not exist");
    const scheduled = expectSuccess(await s.as("hamlet").post("/scheduled_messages", { type: "direct", to: [s.users.othello.id], content: "z", scheduled_delivery_timestamp: inAnHour() })).scheduled_message_id;
    expectError(await s.as("hamlet").delete(`/reminders/${scheduled}`), 404, "BAD_REQUEST", "Reminder does not exist");
    expectSuccess(await s.as("hamlet").delete(`/scheduled_messages/${scheduled}`));
  });
});

describe("delivery", () => {
  test("a due reminder arrives as a direct message from the Notification Bot, even if the message was deleted since", async () => {
    const target = expectSuccess(await s.as("othello").post("/messages", { type: "stream", to: denmark, topic: "deliver", content: "Do the thing" })).id;
    const id = expectSuccess(await s.as("hamlet").post("/reminders", { message_id: target, scheduled_delivery_timestamp: inAnHour() })).reminder_id;
    const [stored] = await remindersOf("hamlet");
    expect(await deliverDueScheduledMessages(s.server.h)).toBe(0);
    expectSuccess(await s.as("iago").delete(`/messages/${target}`));

    const result = await verifyAction(s, () => tickLater(), viewers);
    expect(result.types.othello).toEqual([]);
    expect(result.types.hamlet.sort()).toEqual(["message", "reminders/remove"]);
    expect(result.events.hamlet.find((e) => e.type === "reminders")!.reminder_id).toBe(id);
    const delivered = await newestOf("hamlet");
    expect(delivered.sender_email).toBe("notification-bot@zulip.com");
    expect(delivered.type).toBe("private");
    expect(delivered.display_recipient.map((r: any) => r.id).sort()).toEqual([s.users.hamlet.id, delivered.sender_id].sort((a, b) => a - b));
    expect(delivered.content).toBe(stored.content);
    expect(delivered.flags).not.toContain("read");
    expect(await remindersOf("hamlet")).toEqual([]);
    expect(await tickLater()).toBe(0);
  });

  test("a reminder that cannot be delivered (its owner was deactivated) stays listed as failed, and is not retried", async () => {
    const horatio = await s.createUser("horatio");
    const target = expectSuccess(await s.as(horatio).post("/messages", { type: "stream", to: denmark, topic: "t", content: "z" })).id;
    const id = expectSuccess(await s.as(horatio).post("/reminders", { message_id: target, scheduled_delivery_timestamp: inAnHour() })).reminder_id;
    expectSuccess(await s.as("iago").delete(`/users/${horatio.id}`));
    await tickLater();
    expectSuccess(await s.as("iago").post(`/users/${horatio.id}/reactivate`));
    const [failed] = expectSuccess(await s.as(horatio).get("/reminders")).reminders;
    expect(failed).toMatchObject({ reminder_id: id, failed: true });
    expect(await tickLater()).toBe(0);
  });
});
