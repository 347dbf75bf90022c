/**
 * Events are typed from the schemas the tests check delivered events against: the
 * type check (`tsc`, the first step of `npm test`) refuses an event no schema
 * describes. The lines marked @ts-expect-error fail that check if they ever type-check.
 */
import { expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { EventSchemas, type TypedEvent } from "../../src/schemas/events";

test("tx.notify takes only events the schemas describe", () => {
  const removed: TypedEvent = { type: "drafts", op: "remove", draft_id: 7 };
  // @ts-expect-error an event type no schema describes
  const unknownType: TypedEvent = { type: "no_such_event" };
  // @ts-expect-error a field of the wrong type
  const wrongField: TypedEvent = { type: "drafts", op: "remove", draft_id: "7" };
  // @ts-expect-error a required field missing
  const missingField: TypedEvent = { type: "user_topic", stream_id: 1, topic_name: "t", last_updated: 0 };
  expect(Value.Check(EventSchemas.drafts, { ...removed, id: 0 })).toBe(true);
  expect([unknownType, wrongField, missingField].map((e) => Value.Check(EventSchemas.drafts, { ...e, id: 0 }))).toEqual([false, false, false]);
});
