import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectSuccess, startTestServer, type TestServer } from "../kit";
import { register, verifyAction, drainEvents } from "../kit/events";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const MODERN = {
  slim_presence: true,
  client_capabilities: { user_settings_object: true, bulk_message_deletion: true, empty_topic_name: true, simplified_presence_events: true },
};

describe("presence", () => {
  test("first report: a presence event to everyone, legacy format, consistent with register", async () => {
    const r = await verifyAction(s, async () => {
      const body = expectSuccess(await s.as("hamlet").post("/users/me/presence", { status: "active" }));
      expect(body.presences["hamlet@zulip.test"].aggregated.status).toBe("active");
      expect(body.server_timestamp).toBeNumber();
    });
    for (const v of Object.keys(s.users)) expect(r.types[v]).toEqual(["presence"]);
    expect(r.events.othello[0]).toMatchObject({ user_id: s.users.hamlet.id, email: "hamlet@zulip.test", presence: { website: { status: "active", client: "website", pushable: false } } });
  });

  test("modern format for slim_presence + simplified_presence_events (the mobile app)", async () => {
    const r = await verifyAction(
      s,
      async () => {
        const body = expectSuccess(await s.as("cordelia").post("/users/me/presence", { status: "idle", slim_presence: true, ping_only: false }));
        expect(body.presences[String(s.users.cordelia.id)]).toEqual({ active_timestamp: expect.any(Number), idle_timestamp: expect.any(Number) });
        expect(body.presence_last_update_id).toBeGreaterThan(0);
      },
      { registerParams: MODERN, viewers: ["hamlet", "cordelia"] },
    );
    expect(r.events.hamlet[0].presences[String(s.users.cordelia.id)]).toBeDefined();
    const state = await register(s.as("hamlet"), MODERN);
    expect(Object.keys(state.presences)).toContain(String(s.users.cordelia.id));
  });

  test("repeated pings with the same status send no event; ping_only returns no presences", async () => {
    const { queue_id } = await register(s.as("othello"), { event_types: ["presence"] });
    const body = expectSuccess(await s.as("hamlet").post("/users/me/presence", { status: "active", ping_only: true }));
    expect(body.presences).toBeUndefined();
    expect(await drainEvents(s.as("othello"), queue_id)).toEqual([]);
  });

  test("last_update_id returns only newer rows", async () => {
    const first = expectSuccess(await s.as("hamlet").post("/users/me/presence", { status: "active", last_update_id: -1 }));
    const again = expectSuccess(await s.as("hamlet").post("/users/me/presence", { status: "active", last_update_id: first.presence_last_update_id }));
    expect(Object.keys(again.presences)).toEqual([String(s.users.hamlet.id)]);
  });

  test("GET /realm/presence and GET /users/{id}/presence", async () => {
    const realm = expectSuccess(await s.as("othello").get("/realm/presence"));
    expect(realm.presences["hamlet@zulip.test"].website.status).toBe("active");
    const one = expectSuccess(await s.as("othello").get(`/users/${s.users.hamlet.id}/presence`));
    // FL 487's modern fields and FL 497's legacy entries and server_timestamp, together.
    expect(Object.keys(one.presence).sort()).toEqual(["active_timestamp", "aggregated", "idle_timestamp", "website"]);
    expect(one.presence.aggregated).toEqual({ status: "active", timestamp: expect.any(Number) });
    expect(one.presence.active_timestamp).toBe(one.presence.aggregated.timestamp);
    expect(Number.isInteger(one.presence.idle_timestamp)).toBe(true);
    expect(Math.abs(one.server_timestamp - Date.now() / 1000)).toBeLessThan(600);
    expectSuccess(await s.as("othello").get(`/users/hamlet@zulip.test/presence`));
    expectError(await s.as("othello").get(`/users/${s.users.polonius.id}/presence`), 400, "BAD_REQUEST", `No presence data for ${s.users.polonius.id}`);
    expectError(await s.as("hamlet").post("/users/me/presence", { status: "away" }), 400, "BAD_REQUEST", "Invalid status: away");
  });

  test("presence_enabled=false hides the user", async () => {
    expectSuccess(await s.as("shiva").post("/users/me/presence", { status: "active" }));
    expectSuccess(await s.as("shiva").patch("/settings", { presence_enabled: false }));
    const realm = expectSuccess(await s.as("othello").get("/realm/presence"));
    expect(realm.presences["shiva@zulip.test"]).toBeUndefined();
  });
});
