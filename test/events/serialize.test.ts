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

test("the poll route's whole body equals plain JSON, for shared and unshared events", async () => {
  const { QueueManager } = await import("../../src/events/queues");
  const { parseCapabilities } = await import("../../src/events/capabilities");
  const { eventsResponseBody } = await import("../../src/events/serialize");
  const manager = new QueueManager();
  const settings = (userId: number) => ({ userId, eventTypes: null, allPublicStreams: false, narrow: [], capabilities: parseCapabilities({}), applyMarkdown: false, clientGravatar: true, slimPresence: false, idleTimeoutSecs: 600, clientName: "t" });
  const a = manager.create(settings(1));
  const b = manager.create(settings(2));
  manager.deliver({ type: "heartbeat" }, [1], {});
  const message = { id: 9, content: 'a "quoted" ünïcode \\ text', rendered_content: "<p>x</p>", type: "stream", subject: "t" };
  const read = { flags: ["read"] };
  manager.deliver({ type: "message", message, flags: [] }, [1, 2], { perUser: { get: (id) => (id === 1 ? read : { flags: [] }) }, perQueue: new Map([[b.id, { local_message_id: "1.5" }]]) });
  for (const q of [a, b, a]) {
    const parsed = JSON.parse(eventsResponseBody(q.events, q.idJson));
    expect(parsed).toEqual({ result: "success", msg: "", events: JSON.parse(JSON.stringify(q.events)), queue_id: q.id });
  }
  expect(JSON.parse(eventsResponseBody(a.events, a.idJson)).events.map((e: any) => e.id)).toEqual([0, 1]);
  expect(JSON.parse(eventsResponseBody(b.events, b.idJson)).events[0]).toMatchObject({ id: 0, local_message_id: "1.5", flags: [], message: { content: message.content, content_type: "text/x-markdown" } });
  expect(JSON.parse(eventsResponseBody([], a.idJson)).events).toEqual([]);
});

test("a source that is not the event's own (another message) is not used for its JSON", () => {
  const mine = { type: "message", message: { id: 1, content: "mine" }, flags: [] };
  const other = { type: "message", message: { id: 2, content: "other" }, flags: ["read"] };
  const queued = [{ ...mine, id: 0 }];
  // Warm the other source's shared JSON first, as another queue's answer would.
  eventsResponseFields([{ ...other, id: 5 }], '"q"', [other]);
  expect(JSON.parse(`{${eventsResponseFields(queued, '"q"', [other]).json}}`)).toEqual({ events: queued, queue_id: "q" });
  expect(JSON.parse(`{${eventsResponseFields(queued, '"q"', [mine]).json}}`)).toEqual({ events: queued, queue_id: "q" });
});
