import { expect, test } from "bun:test";
import { eventsResponseFields } from "../../src/events/serialize";

test("GET /events bodies built from cached message JSON equal plain JSON", () => {
  const message = { id: 7, content: '<p>hi "there" \\ ünïcode</p>', reactions: [], display_recipient: "Denmark" };
  const events = [
    { type: "message", message, flags: ["read"], id: 3 },
    { type: "message", message, flags: [], id: 4, local_message_id: "12.01" },
    { type: "heartbeat", id: 5 },
    { type: "message", message: null, id: 6 },
  ];
  const first = JSON.parse(`{${eventsResponseFields(events, JSON.stringify("q-1")).json}}`);
  expect(first).toEqual({ events, queue_id: "q-1" });
  // The cached message JSON serves later polls too, and stays correct.
  expect(JSON.parse(`{${eventsResponseFields([events[1]], JSON.stringify("q-2")).json}}`)).toEqual({ events: [events[1]], queue_id: "q-2" });
});
