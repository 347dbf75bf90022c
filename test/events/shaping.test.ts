import { describe, expect, test } from "bun:test";
import { parseCapabilities } from "../../src/events/capabilities";
import { shapeForClient } from "../../src/events/shaping";

describe("capability shaping", () => {
  const realm = { emptyTopicDisplayName: () => "general chat" };
  const none = parseCapabilities({});

  test("an event type without a rule passes unchanged", () => {
    const event = { type: "realm_emoji", op: "update", realm_emoji: {} };
    expect(shapeForClient(event, none, realm)).toEqual([event]);
  });

  test("bulk deletion splits per message, each with the empty topic's display name", () => {
    const event = { type: "delete_message", message_ids: [1, 2], message_type: "stream", stream_id: 3, topic: "" };
    expect(shapeForClient(event, none, realm)).toEqual([
      { type: "delete_message", message_id: 1, message_type: "stream", stream_id: 3, topic: "general chat" },
      { type: "delete_message", message_id: 2, message_type: "stream", stream_id: 3, topic: "general chat" },
    ]);
    const caps = parseCapabilities({ bulk_message_deletion: true, empty_topic_name: true });
    expect(shapeForClient(event, caps, realm)).toEqual([event]);
  });

  test("events about an archived channel reach archived_channels clients only, without their marker (FL 362)", () => {
    const peer = { type: "subscription", op: "peer_add", stream_ids: [3], user_ids: [9], only_with_archived_channels: true };
    const update = { type: "stream", op: "update", stream_id: 3, name: "Attic", property: "description", value: "d", rendered_description: "<p>d</p>", only_with_archived_channels: true };
    expect(shapeForClient(peer, none, realm)).toEqual([]);
    expect(shapeForClient(update, none, realm)).toEqual([]);
    const caps = parseCapabilities({ archived_channels: true });
    const { only_with_archived_channels: _p, ...plainPeer } = peer;
    const { only_with_archived_channels: _u, ...plainUpdate } = update;
    expect(shapeForClient(peer, caps, realm)).toEqual([plainPeer]);
    expect(shapeForClient(update, caps, realm)).toEqual([plainUpdate]);
  });

  test("a rule may drop the event for a client without the capability", () => {
    const typing = { type: "typing", op: "start", message_type: "stream", stream_id: 3, topic: "t" };
    expect(shapeForClient(typing, none, realm)).toEqual([]);
    expect(shapeForClient(typing, parseCapabilities({ stream_typing_notifications: true, empty_topic_name: true }), realm)).toEqual([typing]);
  });
});
