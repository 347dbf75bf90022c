import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { expectError, expectSchema, expectSuccess, recordPublished, startTestServer, type TestServer } from "../kit";
import { Type as t } from "@sinclair/typebox";
import { success } from "../../src/schemas/common";
import { verifyAction } from "../kit/events";

let s: TestServer;
let published: ReturnType<typeof recordPublished>;
beforeAll(async () => {
  s = await startTestServer();
  published = recordPublished(s);
});
afterAll(() => s.stop());
beforeEach(() => published.clear());

const AlertWordsResponse = success({ alert_words: t.Array(t.String()) });
const SavedSnippet = t.Object({ id: t.Integer(), title: t.String(), content: t.String(), date_created: t.Integer() });

describe("alert words", () => {
  test("add (deduplicated, case-insensitive), list, remove; events to the owner only", async () => {
    expectSchema(AlertWordsResponse, expectSuccess(await s.as("hamlet").get("/users/me/alert_words")));
    let body = expectSuccess(await s.as("hamlet").post("/users/me/alert_words", { alert_words: ["Denmark", "ghost", "denmark"] }));
    expect(body.alert_words).toEqual(["Denmark", "ghost"]);
    body = expectSuccess(await s.as("hamlet").post("/users/me/alert_words", { alert_words: ["GHOST", "skull"] }));
    expect(body.alert_words).toEqual(["Denmark", "ghost", "skull"]);
    body = expectSuccess(await s.as("hamlet").delete("/users/me/alert_words", { alert_words: ["denmark"] }));
    expect(body.alert_words).toEqual(["ghost", "skull"]);
    expect(expectSuccess(await s.as("hamlet").get("/users/me/alert_words")).alert_words).toEqual(["ghost", "skull"]);
    expect(expectSuccess(await s.as("othello").get("/users/me/alert_words")).alert_words).toEqual([]);
    const events = published.ofType("alert_words");
    expect(events.length).toBe(3);
    for (const e of events) expect(e.userIds).toEqual([s.users.hamlet.id]);
    expect(events[2].event.alert_words).toEqual(["ghost", "skull"]);
  });

  test("bad input is rejected without writing", async () => {
    expectError(await s.as("cordelia").post("/users/me/alert_words", { alert_words: ["ok", "x".repeat(101)] }), 400, "BAD_REQUEST", "alert_words[1] is too long (limit: 100 characters)");
    expectError(await s.as("cordelia").post("/users/me/alert_words", { alert_words: "nope" }), 400, "BAD_REQUEST");
    expectError(await s.as("cordelia").post("/users/me/alert_words", { alert_words: [1] }), 400, "BAD_REQUEST", "alert_words[0] is not a string");
    expect(expectSuccess(await s.as("cordelia").get("/users/me/alert_words")).alert_words).toEqual([]);
    expect(published.events).toEqual([]);
  });
});

describe("muted users", () => {
  test("mute and unmute with Zulip's errors; muted_users events to the muter", async () => {
    const othello = s.users.othello.id;
    expectSuccess(await s.as("hamlet").post(`/users/me/muted_users/${othello}`));
    expectError(await s.as("hamlet").post(`/users/me/muted_users/${othello}`), 400, "BAD_REQUEST", "User already muted");
    expectError(await s.as("hamlet").post(`/users/me/muted_users/${s.users.hamlet.id}`), 400, "BAD_REQUEST", "Cannot mute self");
    expectError(await s.as("hamlet").post(`/users/me/muted_users/99999`), 400, "BAD_REQUEST", "No such user");
    expectError(await s.as("hamlet").post(`/users/me/muted_users/abc`), 400, "BAD_REQUEST", "Invalid user ID");
    const [muted] = published.ofType("muted_users");
    expect(muted.userIds).toEqual([s.users.hamlet.id]);
    expect(muted.event.muted_users).toEqual([{ id: othello, timestamp: expect.any(Number) }]);
    expectSuccess(await s.as("hamlet").delete(`/users/me/muted_users/${othello}`));
    expectError(await s.as("hamlet").delete(`/users/me/muted_users/${othello}`), 400, "BAD_REQUEST", "User is not muted");
    expect(published.ofType("muted_users")[1].event.muted_users).toEqual([]);
  });
});

describe("saved snippets", () => {
  test("create, list, edit, delete; others never see them", async () => {
    const created = expectSuccess(await s.as("hamlet").post("/saved_snippets", { title: "Greeting", content: "Hello **world**" }));
    expectSchema(success({ saved_snippet_id: t.Integer() }), created);
    const id = created.saved_snippet_id;
    const list = expectSuccess(await s.as("hamlet").get("/saved_snippets"));
    expectSchema(success({ saved_snippets: t.Array(SavedSnippet) }), list);
    expect(list.saved_snippets).toEqual([{ id, title: "Greeting", content: "Hello **world**", date_created: expect.any(Number) }]);
    expect(expectSuccess(await s.as("othello").get("/saved_snippets")).saved_snippets).toEqual([]);
    expectError(await s.as("othello").patch(`/saved_snippets/${id}`, { title: "Mine" }), 404, "BAD_REQUEST", "Saved snippet does not exist.");
    expectSuccess(await s.as("hamlet").patch(`/saved_snippets/${id}`, { title: "Hi" }));
    expect(expectSuccess(await s.as("hamlet").get("/saved_snippets")).saved_snippets[0]).toMatchObject({ title: "Hi", content: "Hello **world**" });
    expectError(await s.as("othello").delete(`/saved_snippets/${id}`), 404, "BAD_REQUEST");
    expectSuccess(await s.as("hamlet").delete(`/saved_snippets/${id}`));
    expect(expectSuccess(await s.as("hamlet").get("/saved_snippets")).saved_snippets).toEqual([]);
    const ops = published.ofType("saved_snippets").map((e) => [e.event.op, e.userIds]);
    expect(ops).toEqual([
      ["add", [s.users.hamlet.id]],
      ["update", [s.users.hamlet.id]],
      ["remove", [s.users.hamlet.id]],
    ]);
    expect(published.ofType("saved_snippets")[2].event.saved_snippet_id).toBe(id);
  });

  test("empty title or content", async () => {
    expectError(await s.as("hamlet").post("/saved_snippets", { title: " ", content: "x" }), 400, "BAD_REQUEST", "Title cannot be empty.");
    expectError(await s.as("hamlet").post("/saved_snippets", { title: "x", content: "" }), 400, "BAD_REQUEST", "Content cannot be empty.");
    expectError(await s.as("hamlet").post("/saved_snippets", { title: "x" }), 400, "REQUEST_VARIABLE_MISSING");
  });
});

describe("bot storage (zulip_bots' StateHandler)", () => {
  test("put, get all or some keys, remove some or all; storage is per account", async () => {
    const bot = await s.createBot("hamlet", { full_name: "State bot", short_name: "statebot" });
    const client = s.as(bot);
    expectSuccess(await client.put("/bot_storage", { storage: { score: "10", "player name": "Ophelia" } }));
    expect(expectSuccess(await client.get("/bot_storage")).storage).toEqual({ score: "10", "player name": "Ophelia" });
    expect(expectSuccess(await client.get("/bot_storage", { keys: ["score"] })).storage).toEqual({ score: "10" });
    expectError(await client.get("/bot_storage", { keys: ["nope"] }), 400, "BAD_REQUEST", "Key does not exist.");
    expect(expectSuccess(await s.as("hamlet").get("/bot_storage")).storage).toEqual({});
    expectError(await client.put("/bot_storage", { storage: { score: 11 } }), 400, "BAD_REQUEST");
    expectSuccess(await client.delete("/bot_storage", { keys: ["score"] }));
    expectError(await client.delete("/bot_storage", { keys: ["score"] }), 400, "BAD_REQUEST", "Key does not exist.");
    expectSuccess(await client.delete("/bot_storage"));
    expect(expectSuccess(await client.get("/bot_storage")).storage).toEqual({});
    expectError(await client.put("/bot_storage", { storage: { big: "x".repeat(10_000_000) } }), 400, "BAD_REQUEST", "Request exceeds storage limit by 3 characters. The limit is 10000000 characters.");
    expect(expectSuccess(await client.get("/bot_storage")).storage).toEqual({});
  });
});

describe("onboarding steps", () => {
  test("register lists the steps left; marking one seen tells the user's clients (state and events agree)", async () => {
    const state = expectSuccess(await s.as("cordelia").post("/register", { fetch_event_types: JSON.stringify(["onboarding_steps"]) }));
    const names = state.onboarding_steps.map((step: any) => step.name);
    expect(names).toContain("intro_inbox_view_modal");
    expect(names).not.toContain("navigation_tour_video"); // no video on this server
    expect(state.onboarding_steps.find((step: any) => step.name === "narrow_to_dm_with_welcome_bot_new_user")).toEqual({ type: "one_time_action", name: "narrow_to_dm_with_welcome_bot_new_user" });
    const r = await verifyAction(
      s,
      async () => {
        expectSuccess(await s.as("cordelia").post("/users/me/onboarding_steps", { onboarding_step: "intro_inbox_view_modal" }));
        // Again: nothing changes, the list is sent again.
        expectSuccess(await s.as("cordelia").post("/users/me/onboarding_steps", { onboarding_step: "intro_inbox_view_modal" }));
      },
      { viewers: ["cordelia", "hamlet"], registerParams: { event_types: ["onboarding_steps"] } },
    );
    expect(r.types.cordelia).toEqual(["onboarding_steps", "onboarding_steps"]);
    expect(r.types.hamlet).toEqual([]);
    const after = expectSuccess(await s.as("cordelia").post("/register", { fetch_event_types: JSON.stringify(["onboarding_steps"]) }));
    expect(after.onboarding_steps.map((step: any) => step.name)).toEqual(names.filter((n: string) => n !== "intro_inbox_view_modal"));
    expectError(await s.as("cordelia").post("/users/me/onboarding_steps", { onboarding_step: "nope" }), 400, "BAD_REQUEST", "Unknown onboarding_step: nope");
    // Zulip's @human_users_only.
    const asBot = s.as(await s.createBot("cordelia", { full_name: "Steps bot", short_name: "stepsbot" }));
    expectError(await asBot.post("/users/me/onboarding_steps", { onboarding_step: "intro_inbox_view_modal" }), 400, "BAD_REQUEST", "This endpoint does not accept bot requests.");
  });
});
