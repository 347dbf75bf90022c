import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectSuccess, startTestServer, type TestServer } from "../kit";
import { verifyAction } from "../events-kit";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const ONLY_HAMLET = (types: Record<string, string[]>, expected: string[]) => {
  for (const [who, got] of Object.entries(types)) expect(got).toEqual(who === "hamlet" ? expected : []);
};

describe("alert words", () => {
  test("add (trimmed, case-insensitive dedupe) and remove; the whole list in each event", async () => {
    const added = await verifyAction(s, async () => {
      const body = expectSuccess(await s.as("hamlet").post("/users/me/alert_words", { alert_words: ["Denmark", " elsinore ", "denmark", ""] }));
      expect(body.alert_words).toEqual(["Denmark", "elsinore"]);
    });
    ONLY_HAMLET(added.types, ["alert_words"]);
    const removed = await verifyAction(s, async () => {
      const body = expectSuccess(await s.as("hamlet").delete("/users/me/alert_words", { alert_words: ["DENMARK"] }));
      expect(body.alert_words).toEqual(["elsinore"]);
    });
    ONLY_HAMLET(removed.types, ["alert_words"]);
    expect(expectSuccess(await s.as("hamlet").get("/users/me/alert_words")).alert_words).toEqual(["elsinore"]);
    expectError(await s.as("hamlet").post("/users/me/alert_words", { alert_words: ["x".repeat(101)] }), 400, "BAD_REQUEST", "alert_words[0] is too long (limit: 100 characters)");
  });
});

describe("muted users", () => {
  test("mute and unmute, with Zulip's errors", async () => {
    const muted = await verifyAction(s, async () => {
      expectSuccess(await s.as("hamlet").post(`/users/me/muted_users/${s.users.othello.id}`));
    });
    ONLY_HAMLET(muted.types, ["muted_users"]);
    expect(muted.events.hamlet[0].muted_users).toEqual([{ id: s.users.othello.id, timestamp: expect.any(Number) }]);
    expectError(await s.as("hamlet").post(`/users/me/muted_users/${s.users.othello.id}`), 400, "BAD_REQUEST", "User already muted");
    expectError(await s.as("hamlet").post(`/users/me/muted_users/${s.users.hamlet.id}`), 400, "BAD_REQUEST", "Cannot mute self");
    expectError(await s.as("hamlet").post(`/users/me/muted_users/99999`), 400, "BAD_REQUEST", "No such user");
    const unmuted = await verifyAction(s, async () => {
      expectSuccess(await s.as("hamlet").delete(`/users/me/muted_users/${s.users.othello.id}`));
    });
    ONLY_HAMLET(unmuted.types, ["muted_users"]);
    expectError(await s.as("hamlet").delete(`/users/me/muted_users/${s.users.othello.id}`), 400, "BAD_REQUEST", "User is not muted");
  });
});

describe("saved snippets", () => {
  test("create, edit, delete; events add/update/remove to the owner only", async () => {
    let id = 0;
    const created = await verifyAction(s, async () => {
      id = expectSuccess(await s.as("hamlet").post("/saved_snippets", { title: "Greeting", content: "Good morrow!" })).saved_snippet_id;
    });
    ONLY_HAMLET(created.types, ["saved_snippets/add"]);
    const edited = await verifyAction(s, async () => {
      expectSuccess(await s.as("hamlet").patch(`/saved_snippets/${id}`, { content: "Good night, sweet prince." }));
    });
    ONLY_HAMLET(edited.types, ["saved_snippets/update"]);
    const list = expectSuccess(await s.as("hamlet").get("/saved_snippets")).saved_snippets;
    expect(list).toEqual([{ id, title: "Greeting", content: "Good night, sweet prince.", date_created: expect.any(Number) }]);
    expect(expectSuccess(await s.as("othello").get("/saved_snippets")).saved_snippets).toEqual([]);
    // Another user's snippet does not exist for them.
    expectError(await s.as("othello").delete(`/saved_snippets/${id}`), 404, "BAD_REQUEST", "Saved snippet does not exist.");
    const deleted = await verifyAction(s, async () => {
      expectSuccess(await s.as("hamlet").delete(`/saved_snippets/${id}`));
    });
    ONLY_HAMLET(deleted.types, ["saved_snippets/remove"]);
    expectError(await s.as("hamlet").post("/saved_snippets", { title: " ", content: "x" }), 400, "BAD_REQUEST", "Title cannot be empty.");
    expectError(await s.as("hamlet").patch(`/saved_snippets/${id}`, { title: "x" }), 404, "BAD_REQUEST", "Saved snippet does not exist.");
  });
});

describe("user status", () => {
  const EVERYONE = ["desdemona", "iago", "shiva", "hamlet", "othello", "cordelia", "polonius"];

  test("text and emoji: one user_status event with the changed fields to everyone", async () => {
    const r = await verifyAction(s, async () => {
      expectSuccess(await s.as("hamlet").post("/users/me/status", { status_text: " To be, or not to be ", emoji_name: "thinking", emoji_code: "1f914", reaction_type: "unicode_emoji" }));
    });
    for (const v of EVERYONE) expect(r.types[v]).toEqual(["user_status"]);
    expect(r.events.othello[0]).toMatchObject({ user_id: s.users.hamlet.id, status_text: "To be, or not to be", emoji_name: "thinking", emoji_code: "1f914", reaction_type: "unicode_emoji" });
    expect(expectSuccess(await s.as("othello").get(`/users/${s.users.hamlet.id}/status`)).status).toEqual({
      status_text: "To be, or not to be",
      emoji_name: "thinking",
      emoji_code: "1f914",
      reaction_type: "unicode_emoji",
    });
    // Only the fields passed change; "" clears.
    await verifyAction(s, async () => {
      expectSuccess(await s.as("hamlet").post("/users/me/status", { emoji_name: "" }));
    });
    await verifyAction(s, async () => {
      expectSuccess(await s.as("hamlet").post("/users/me/status", { status_text: "" }));
    });
    expect(expectSuccess(await s.as("othello").get(`/users/${s.users.hamlet.id}/status`)).status).toEqual({});
  });

  test("away mirrors presence_enabled, both ways", async () => {
    const r = await verifyAction(s, async () => {
      expectSuccess(await s.as("cordelia").post("/users/me/status", { away: true }));
    });
    expect(r.types.cordelia).toEqual(["user_settings/update", "user_status"]);
    expect(r.types.othello).toEqual(["user_status"]);
    expect(expectSuccess(await s.as("othello").get(`/users/${s.users.cordelia.id}/status`)).status).toEqual({ away: true });
    const back = await verifyAction(s, async () => {
      expectSuccess(await s.as("cordelia").patch("/settings", { presence_enabled: true }));
    });
    expect(back.types.othello).toEqual(["user_status"]);
    expect(back.events.othello[0]).toMatchObject({ user_id: s.users.cordelia.id, away: false });
  });

  test("errors", async () => {
    expectError(await s.as("hamlet").post("/users/me/status", {}), 400, "BAD_REQUEST", "Client did not pass any new values.");
    expectError(await s.as("hamlet").post("/users/me/status", { status_text: "x".repeat(61) }), 400, "BAD_REQUEST", "status_text is too long (limit: 60 characters)");
    expectError(await s.as("hamlet").post("/users/me/status", { emoji_code: "1f914" }), 400, "BAD_REQUEST", "Client must pass emoji_name if they pass either emoji_code or reaction_type.");
    expectError(await s.as("hamlet").post("/users/me/status", { emoji_name: "invalid", emoji_code: "zzz" }), 400, "BAD_REQUEST", "Emoji 'invalid' does not exist");
  });
});
