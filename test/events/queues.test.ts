import { describe, expect, spyOn, test } from "bun:test";
import { EventHub } from "../../src/events/hub";
import { parseCapabilities } from "../../src/events/capabilities";
import { QueueManager } from "../../src/events/queues";
import type { QueueSettings } from "../../src/events/event_queue";
import { eventsResponseFields } from "../../src/events/serialize";
import { parseNarrow } from "../../src/events/narrow";

/** Filtering and per-capability shaping, on a queue manager without HTTP. */
function setup() {
  const manager = new QueueManager({ heartbeatSecs: 60, maxEventsPerQueue: 100, maxQueues: 100, maxQueuesPerUser: 10, maxTotalEvents: 1000, gcIntervalSecs: 60 });
  const hub = new EventHub();
  hub.attach(manager);
  const queue = (userId: number, options: Partial<QueueSettings> & { caps?: Record<string, boolean> } = {}) =>
    manager.create({
      userId,
      eventTypes: null,
      allPublicStreams: false,
      narrow: [],
      applyMarkdown: false,
      clientGravatar: true,
      slimPresence: false,
      idleTimeoutSecs: 600,
      clientName: "test",
      ...options,
      capabilities: parseCapabilities(options.caps),
    });
  return { manager, hub, queue };
}

const streamMessage = (topic: string) => ({
  type: "message",
  message: { id: 7, type: "stream", stream_id: 3, display_recipient: "Denmark", subject: topic, sender_id: 1, sender_email: "iago@zulip.test" },
  flags: [],
});

describe("per-queue shaping", () => {
  test("delete_message: bulk for bulk_message_deletion clients, one event per message otherwise", () => {
    const { hub, queue } = setup();
    const bulk = queue(1, { caps: { bulk_message_deletion: true } });
    const single = queue(1);
    hub.publish({ type: "delete_message", message_ids: [4, 5], message_type: "private" }, [1]);
    expect(bulk.events).toEqual([{ type: "delete_message", message_ids: [4, 5], message_type: "private", id: 0 }]);
    expect(single.events).toEqual([
      { type: "delete_message", message_id: 4, message_type: "private", id: 0 },
      { type: "delete_message", message_id: 5, message_type: "private", id: 1 },
    ]);
  });

  test("the empty topic becomes the realm's display name for clients without empty_topic_name", () => {
    const { hub, queue } = setup();
    const modern = queue(1, { caps: { empty_topic_name: true, stream_typing_notifications: true } });
    const legacy = queue(1, { caps: { stream_typing_notifications: true } });
    hub.publish(streamMessage(""), [1]);
    hub.publish({ type: "typing", op: "start", message_type: "stream", stream_id: 3, topic: "" }, [1]);
    expect((modern.events[0].message as any).subject).toBe("");
    expect((legacy.events[0].message as any).subject).toBe("general chat");
    expect(legacy.events[1].topic).toBe("general chat");
  });

  test("presence: modern form for simplified_presence_events, legacy otherwise", () => {
    const { hub, queue } = setup();
    const modern = queue(1, { caps: { simplified_presence_events: true } });
    const legacy = queue(1);
    hub.publish(
      {
        type: "presence",
        presences: { "2": { active_timestamp: 10, idle_timestamp: 10 } },
        legacy: { user_id: 2, email: "hamlet@zulip.test", server_timestamp: 10, presence: { website: { client: "website", status: "active", timestamp: 10, pushable: false } } },
      },
      [1],
    );
    expect(modern.events[0]).toEqual({ type: "presence", presences: { "2": { active_timestamp: 10, idle_timestamp: 10 } }, id: 0 });
    expect(legacy.events[0]).toMatchObject({ type: "presence", user_id: 2, email: "hamlet@zulip.test" });
    expect(legacy.events[0].presences).toBeUndefined();
  });

  test("realm_linkifiers only for linkifier_url_template clients", () => {
    const { hub, queue } = setup();
    const modern = queue(1, { caps: { linkifier_url_template: true } });
    const legacy = queue(1);
    hub.publish({ type: "realm_linkifiers", realm_linkifiers: [] }, [1]);
    expect(modern.events.length).toBe(1);
    expect(legacy.events.length).toBe(0);
  });
});

describe("forms only the publisher can build, picked per capability", () => {
  test("a deactivated group's events and a single emoji's change reach each queue in its client's form, or not at all", () => {
    const { hub, queue } = setup();
    const modern = queue(1, { caps: { include_deactivated_groups: true, individual_emoji_changes: true } });
    const legacy = queue(1);
    const update = { type: "user_group", op: "update", group_id: 5, data: { deactivated: true } };
    hub.publish({ ...update, without_deactivated_groups: { type: "user_group", op: "remove", group_id: 5 } }, [1]);
    hub.publish({ type: "user_group", op: "update", group_id: 5, data: { name: "renamed" }, without_deactivated_groups: null }, [1]);
    expect(modern.events.map((e) => [e.op, e.data])).toEqual([
      ["update", { deactivated: true }],
      ["update", { name: "renamed" }],
    ]);
    expect(legacy.events.map((e) => e.op)).toEqual(["remove"]);
    expect(modern.events.every((e) => !("without_deactivated_groups" in e))).toBe(true);
    const emoji = { id: "3", name: "parrot", source_url: "/e/3.png", still_url: null, deactivated: false, author_id: 1 };
    hub.publish({ type: "realm_emoji", op: "update", realm_emoji: { "3": emoji }, individual: { type: "realm_emoji", op: "add", emoji } }, [1]);
    expect(modern.events.at(-1)).toMatchObject({ type: "realm_emoji", op: "add", emoji });
    expect(legacy.events.at(-1)).toEqual({ id: legacy.events.at(-1)!.id, type: "realm_emoji", op: "update", realm_emoji: { "3": emoji } });
  });
});

describe("per-queue filtering and targeting", () => {
  test("event_types and narrow (message events only; other types pass)", () => {
    const { hub, queue } = setup();
    const onlyMessages = queue(1, { eventTypes: ["message"] });
    const denmark = queue(1, { narrow: parseNarrow([["stream", "denmark"], { operator: "topic", operand: "Lunch", negated: false }]) });
    const notLunch = queue(1, { narrow: parseNarrow([{ operator: "topic", operand: "lunch", negated: true }]) });
    hub.publish(streamMessage("lunch"), [1]);
    hub.publish(streamMessage("dinner"), [1]);
    hub.publish({ type: "realm_user", op: "update", person: { user_id: 2 } }, [1]);
    expect(onlyMessages.events.map((e) => e.type)).toEqual(["message", "message"]);
    expect(denmark.events.map((e) => (e.message as any)?.subject ?? e.type)).toEqual(["lunch", "realm_user"]);
    expect(notLunch.events.map((e) => (e.message as any)?.subject ?? e.type)).toEqual(["dinner", "realm_user"]);
  });

  test("per-user flags, local_message_id for one queue, all_public_streams queues", () => {
    const { hub, queue } = setup();
    const senderTab = queue(1);
    const senderOtherTab = queue(1);
    const recipient = queue(2);
    const observer = queue(3, { allPublicStreams: true });
    const bystander = queue(4);
    hub.publish(streamMessage("t"), [1, 2], {
      perUser: new Map([[1, { flags: ["read"] }], [2, { flags: [] }]]),
      perQueue: new Map([[senderTab.id, { local_message_id: "1.5" }]]),
      toAllPublicStreamsQueues: true,
    });
    expect(senderTab.events[0]).toMatchObject({ flags: ["read"], local_message_id: "1.5" });
    expect(senderOtherTab.events[0].local_message_id).toBeUndefined();
    expect(recipient.events[0].flags).toEqual([]);
    expect(observer.events[0]).toMatchObject({ type: "message", flags: [] });
    expect(bystander.events).toEqual([]);
  });

  test("one user past their queue cap loses their own oldest queue, not anyone else's", () => {
    const { manager, queue } = setup();
    const other = queue(2);
    const first = queue(1);
    first.lastAccess -= 1000;
    for (let i = 0; i < 10; i++) queue(1);
    expect(manager.queuesOf(1).length).toBe(10);
    expect(manager.queuesOf(1)).not.toContain(first);
    expect(manager.queuesOf(2)).toEqual([other]);
  });

  test("a total-events cap drops the fullest queue", () => {
    const { manager, hub, queue } = setup();
    manager.limits.maxTotalEvents = 5;
    const abandoned = queue(1);
    const attentive = queue(2);
    for (let i = 0; i < 4; i++) hub.publish({ type: "realm_user", op: "update", person: { user_id: 9 } }, [1]);
    hub.publish({ type: "realm_user", op: "update", person: { user_id: 9 } }, [1, 2]);
    expect(manager.queuesOf(1)).toEqual([]);
    expect(manager.queuesOf(2)).toEqual([attentive]);
    expect(manager.pendingEventCount()).toBe(1);
    void abandoned;
  });
});

describe("message payloads per client", () => {
  test("apply_markdown picks rendered or raw content; avatar_url stays (Hearth serves every avatar, no Gravatar)", () => {
    const { hub, queue } = setup();
    const html = queue(1, { applyMarkdown: true, clientGravatar: false });
    const markdown = queue(1, { applyMarkdown: false, clientGravatar: true });
    const avatar = "http://127.0.0.1/user_avatars/7/0123.png";
    const message = { ...streamMessage("t").message, content: "**hi**", rendered_content: "<p><strong>hi</strong></p>", avatar_url: avatar };
    hub.publish({ type: "message", message, flags: [] }, [1]);
    expect(html.events[0].message).toMatchObject({ content: "<p><strong>hi</strong></p>", content_type: "text/html", avatar_url: avatar });
    expect(markdown.events[0].message).toMatchObject({ content: "**hi**", content_type: "text/x-markdown", avatar_url: avatar });
    expect((markdown.events[0].message as any).rendered_content).toBeUndefined();
    // The publisher's object is not modified.
    expect(message.rendered_content).toBe("<p><strong>hi</strong></p>");
  });

  test("stream typing events only for stream_typing_notifications clients", () => {
    const { hub, queue } = setup();
    const modern = queue(1, { caps: { stream_typing_notifications: true } });
    const legacy = queue(1);
    hub.publish({ type: "typing", op: "start", message_type: "stream", stream_id: 3, topic: "t", sender: { user_id: 2, email: "x" } }, [1]);
    hub.publish({ type: "typing", op: "start", message_type: "direct", sender: { user_id: 2, email: "x" }, recipients: [] }, [1]);
    expect(modern.events.length).toBe(2);
    expect(legacy.events.map((e) => e.message_type)).toEqual(["direct"]);
  });
});

describe("one message delivered to many queues", () => {
  test("queues with the same flags and content form share one payload; the JSON of each has its own id, flags and content", () => {
    const { hub, queue } = setup();
    const a = queue(1);
    const b = queue(2);
    const html = queue(3, { applyMarkdown: true });
    const starred = queue(4);
    const sender = queue(5);
    a.push({ type: "heartbeat" }); // a's next event ID is 1, b's is 0
    const noFlags = { flags: [] };
    const message = { id: 9, type: "stream", subject: "t", content: "**hi**", rendered_content: "<p><strong>hi</strong></p>" };
    hub.publish({ type: "message", message, flags: [] }, [1, 2, 3, 4, 5], {
      perUser: new Map<number, Record<string, unknown>>([
        [1, noFlags],
        [2, noFlags],
        [3, noFlags],
        [4, { flags: ["starred"] }],
        [5, { flags: ["read"] }],
      ]),
      perQueue: new Map([[sender.id, { local_message_id: "1.5" }]]),
    });
    const body = (q: typeof a) => JSON.parse(`{${eventsResponseFields(q.events, q.idJson, q.sources).json}}`).events.at(-1);
    const markdown = { id: 9, type: "stream", subject: "t", content: "**hi**", content_type: "text/x-markdown" };
    expect(body(a)).toEqual({ type: "message", id: 1, flags: [], message: markdown });
    expect(body(b)).toEqual({ type: "message", id: 0, flags: [], message: markdown });
    expect(a.sources[1]).toBe(b.sources[0]!);
    expect(a.sources).toHaveLength(a.events.length);
    expect(body(html)).toEqual({ type: "message", id: 0, flags: [], message: { ...markdown, content: "<p><strong>hi</strong></p>", content_type: "text/html" } });
    expect(body(starred)).toEqual({ type: "message", id: 0, flags: ["starred"], message: markdown });
    expect(body(sender)).toEqual({ type: "message", id: 0, flags: ["read"], local_message_id: "1.5", message: markdown });
    // The published objects are left as they were.
    expect(message.content).toBe("**hi**");
    expect(noFlags).toEqual({ flags: [] });
  });
});

describe("one bad queue does not stop a delivery", () => {
  test("register refuses narrow operands that are not strings or integers", () => {
    expect(() => parseNarrow([["stream", { toString: 1 }]])).toThrow("Invalid narrow");
    expect(() => parseNarrow([{ operator: "is", operand: {} }])).toThrow("Invalid narrow");
    expect(parseNarrow([["dm", [1, 2]], ["stream", "Denmark"], ["id", 7]])).toHaveLength(3);
  });

  test("a queue whose filter throws is dropped; the queues after it still get the event", () => {
    const { manager, hub, queue } = setup();
    const first = queue(1);
    // As a damaged saved queue could hold: a narrow operand that cannot become a string.
    const broken = queue(1, { narrow: [{ operator: "stream", operand: { toString: 1 }, negated: false }] });
    const last = queue(1);
    const errors = console.error;
    console.error = () => {};
    try {
      hub.publish(streamMessage("t"), [1]);
    } finally {
      console.error = errors;
    }
    expect(first.events).toHaveLength(1);
    expect(last.events).toHaveLength(1);
    expect(() => manager.access(broken.id, 1)).toThrow("Bad event queue ID");
  });
});

describe("background ticks", () => {
  test("an idle-queue collection that throws is logged and tried again at the next tick, not the end of the process", async () => {
    const ticking = new QueueManager({ heartbeatSecs: 60, maxEventsPerQueue: 100, maxQueues: 100, maxQueuesPerUser: 10, maxTotalEvents: 1000, gcIntervalSecs: 0.02 });
    let runs = 0;
    (ticking as unknown as { collectIdle(): void }).collectIdle = () => {
      runs++;
      throw new Error("a broken queue");
    };
    const logged = spyOn(console, "error").mockImplementation(() => {});
    try {
      ticking.startGc();
      for (let i = 0; i < 100 && runs < 3; i++) await Bun.sleep(10);
      expect(runs).toBeGreaterThanOrEqual(3);
      expect(String(logged.mock.calls[0]?.[0])).toContain("Collecting idle event queues failed");
    } finally {
      ticking.close(null);
      logged.mockRestore();
    }
  });
});

describe("parked polls", () => {
  test("events published in one run reach each parked poll in one answer, after the publishing, with that queue's own IDs", async () => {
    const { manager, hub, queue } = setup();
    const a = queue(1);
    const b = queue(2);
    const bystander = queue(3);
    a.push({ type: "heartbeat" }); // a's next event ID is 1, b's is 0
    manager.poll(a, 0, false); // acknowledges the heartbeat: nothing pending, so it parks
    const answers = new Map<string, number[]>();
    const parked = [a, b, bystander].map((q) => {
      const waiting = manager.poll(q, q.lastEventId, false, undefined, (events, own) => {
        answers.set(own.id, events.map((e) => e.id));
        return events.map((e) => ({ id: e.id, type: e.type }));
      });
      expect(waiting).toBeInstanceOf(Promise);
      return waiting as Promise<{ id: number; type: string }[]>;
    });
    hub.publish({ type: "realm_user", op: "update", person: { user_id: 1 } }, [1, 2]);
    hub.publish({ type: "message", message: { id: 9, type: "stream", subject: "t", content: "x", rendered_content: "<p>x</p>" }, flags: [] }, [1, 2]);
    // Not answered while the publisher runs: the answer takes what it published in one go.
    expect(answers.size).toBe(0);
    expect(await parked[0]).toEqual([
      { id: 1, type: "realm_user" },
      { id: 2, type: "message" },
    ]);
    expect(await parked[1]).toEqual([
      { id: 0, type: "realm_user" },
      { id: 1, type: "message" },
    ]);
    expect(answers.has(bystander.id)).toBe(false);
    expect(bystander.waiter).not.toBeNull();
    // The events stay queued until acknowledged; the next poll acknowledging them parks again.
    expect(a.events.map((e) => e.id)).toEqual([1, 2]);
    expect(manager.poll(a, 2, false)).toBeInstanceOf(Promise);
    expect(a.events).toEqual([]);
    manager.close(null);
    expect(await parked[2]).toEqual([]);
  });
});
