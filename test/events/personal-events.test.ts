/** State + events stay consistent for per-user settings, avatars and profile fields. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, startTestServer, type TestServer } from "../kit";
import { captureEvents, register, verifyAction } from "../kit/events";
import { identiconPng } from "../../src/avatars/identicon";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const others = (result: { types: Record<string, string[]> }, who: string) =>
  Object.entries(result.types).filter(([name, types]) => name !== who && types.length > 0).map(([name]) => name);

describe("verifyAction: personal state", () => {
  test("alert words reach only their owner", async () => {
    const r = await verifyAction(s, () => s.as("hamlet").post("/users/me/alert_words", { alert_words: ["ghost"] }));
    expect(r.types.hamlet).toEqual(["alert_words"]);
    expect(others(r, "hamlet")).toEqual([]);
    await verifyAction(s, () => s.as("hamlet").delete("/users/me/alert_words", { alert_words: ["ghost"] }), { viewers: ["hamlet"] });
  });

  test("muting and unmuting", async () => {
    const r = await verifyAction(s, () => s.as("hamlet").post(`/users/me/muted_users/${s.users.othello.id}`));
    expect(r.types.hamlet).toEqual(["muted_users"]);
    expect(others(r, "hamlet")).toEqual([]);
    await verifyAction(s, () => s.as("hamlet").delete(`/users/me/muted_users/${s.users.othello.id}`), { viewers: ["hamlet", "othello"] });
  });

  test("saved snippets: add, update, remove", async () => {
    let id = 0;
    const r = await verifyAction(s, async () => {
      id = expectSuccess(await s.as("cordelia").post("/saved_snippets", { title: "T", content: "C" })).saved_snippet_id;
    });
    expect(others(r, "cordelia")).toEqual([]);
    await verifyAction(s, () => s.as("cordelia").patch(`/saved_snippets/${id}`, { content: "D" }), { viewers: ["cordelia"] });
    await verifyAction(s, () => s.as("cordelia").delete(`/saved_snippets/${id}`), { viewers: ["cordelia"] });
  });

  test("avatar upload and reset reach everyone", async () => {
    const image = new File([identiconPng("x", 32) as BlobPart], "a.png", { type: "image/png" });
    const r = await verifyAction(s, () => s.as("othello").post("/users/me/avatar", { file: image }, { multipart: true }));
    for (const types of Object.values(r.types)) expect(types).toEqual(["realm_user/update"]);
    await verifyAction(s, () => s.as("othello").delete("/users/me/avatar"), { viewers: ["othello", "hamlet"] });
  });

  test("custom profile fields and values", async () => {
    let fieldId = 0;
    const r = await verifyAction(s, async () => {
      fieldId = expectSuccess(await s.as("iago").post("/realm/profile_fields", { field_type: 1, name: "Phone" })).id;
    });
    for (const types of Object.values(r.types)) expect(types).toEqual(["custom_profile_fields"]);
    const params = { registerParams: {}, viewers: ["hamlet", "othello", "polonius"] as const };
    await verifyAction(s, () => s.as("hamlet").patch("/users/me/profile_data", { data: [{ id: fieldId, value: "555" }] }), { viewers: [...params.viewers] });
    await verifyAction(s, () => s.as("hamlet").delete("/users/me/profile_data", { data: [fieldId] }), { viewers: [...params.viewers] });
    await verifyAction(s, () => s.as("iago").delete(`/realm/profile_fields/${fieldId}`), { viewers: ["iago", "hamlet"] });
  });
});

describe("user status", () => {
  test("set text and emoji, go away and come back, clear — events to everyone", async () => {
    const r = await verifyAction(s, () => s.as("hamlet").post("/users/me/status", { status_text: "In a meeting", emoji_name: "calendar" }));
    for (const types of Object.values(r.types)) expect(types).toEqual(["user_status"]);
    expect(r.events.othello[0]).toMatchObject({ user_id: s.users.hamlet.id, status_text: "In a meeting", emoji_name: "calendar", emoji_code: "1f4c5", reaction_type: "unicode_emoji" });
    const away = await verifyAction(s, () => s.as("hamlet").post("/users/me/status", { away: true }), { viewers: ["hamlet", "othello"] });
    expect(away.types.hamlet).toEqual(["user_status", "user_settings/update"]);
    const status = expectSuccess(await s.as("othello").get(`/users/${s.users.hamlet.id}/status`)).status;
    expect(status).toEqual({ away: true, status_text: "In a meeting", emoji_name: "calendar", emoji_code: "1f4c5", reaction_type: "unicode_emoji" });
    await verifyAction(s, () => s.as("hamlet").post("/users/me/status", { away: false, status_text: "", emoji_name: "" }), { viewers: ["hamlet", "othello"] });
    expect(expectSuccess(await s.as("othello").get(`/users/${s.users.hamlet.id}/status`)).status).toEqual({});
  });

  test("Zulip's validation errors", async () => {
    const { expectError } = await import("../kit");
    expectError(await s.as("hamlet").post("/users/me/status", {}), 400, "BAD_REQUEST", "Client did not pass any new values.");
    expectError(await s.as("hamlet").post("/users/me/status", { status_text: "x".repeat(61) }), 400, "BAD_REQUEST", "status_text is too long (limit: 60 characters)");
    expectError(await s.as("hamlet").post("/users/me/status", { emoji_code: "1f4c5" }), 400, "BAD_REQUEST", "Client must pass emoji_name if they pass either emoji_code or reaction_type.");
    expectError(await s.as("hamlet").post("/users/me/status", { emoji_name: "no_such_emoji" }), 400, "BAD_REQUEST", "Emoji 'no_such_emoji' does not exist");
    expectError(await s.as("hamlet").post("/users/me/status", { emoji_name: "smile", reaction_type: "realm_emoji", emoji_code: "1" }), 400, "BAD_REQUEST", "Invalid custom emoji.");
    expectError(await s.as("hamlet").get("/users/99999/status"), 400, "BAD_REQUEST", "No such user");
  });
});

describe("topic visibility (user_topics)", () => {
  test("mute, follow and reset a topic; legacy muted_topics; events to the user only", async () => {
    const { expectError } = await import("../kit");
    const created = expectSuccess(await s.as("hamlet").post("/users/me/subscriptions", { subscriptions: [{ name: "Denmark" }] }));
    expect(created.result).toBe("success");
    const denmark = expectSuccess(await s.as("hamlet").get("/get_stream_id", { stream: "Denmark" })).stream_id;
    const r = await verifyAction(s, () => s.as("hamlet").post("/user_topics", { stream_id: denmark, topic: "Castle", visibility_policy: 1 }));
    expect(r.types.hamlet).toEqual(["muted_topics", "user_topic"]);
    expect(others(r, "hamlet")).toEqual([]);
    expect(r.events.hamlet[1]).toMatchObject({ stream_id: denmark, topic_name: "Castle", visibility_policy: 1 });
    // zulip-terminal asks for muted_topics without user_topic: it gets the legacy list and event.
    const legacy = { registerParams: { event_types: ["muted_topics", "subscription"], fetch_event_types: ["muted_topics"] }, viewers: ["hamlet" as const] };
    const zt = await verifyAction(s, () => s.as("hamlet").post("/user_topics", { stream_id: denmark, topic: "Ghost", visibility_policy: 1 }), legacy);
    expect(zt.events.hamlet[0].muted_topics).toEqual([
      ["Denmark", "Castle", expect.any(Number)],
      ["Denmark", "Ghost", expect.any(Number)],
    ]);
    await verifyAction(s, () => s.as("hamlet").patch("/users/me/subscriptions/muted_topics", { stream: "Denmark", topic: "ghost", op: "remove" }), legacy);
    // "(no topic)" names the empty topic here too.
    await verifyAction(s, () => s.as("hamlet").post("/user_topics", { stream_id: denmark, topic: "", visibility_policy: 1 }), legacy);
    const unmuted = await verifyAction(s, () => s.as("hamlet").patch("/users/me/subscriptions/muted_topics", { stream: "Denmark", topic: "(no topic)", op: "remove" }), legacy);
    expect(unmuted.events.hamlet.map((e) => e.muted_topics.map((m: unknown[]) => m[1]))).toEqual([["Castle"]]);
    await verifyAction(s, () => s.as("hamlet").post("/user_topics", { stream_id: denmark, topic: "castle", visibility_policy: 3 }), { viewers: ["hamlet"] });
    await verifyAction(s, () => s.as("hamlet").post("/user_topics", { stream_id: denmark, topic: "Castle", visibility_policy: 0 }), { viewers: ["hamlet"] });
    // Setting the current policy again is a no-op success.
    expectSuccess(await s.as("hamlet").post("/user_topics", { stream_id: denmark, topic: "Castle", visibility_policy: 0 }));
    expectError(await s.as("hamlet").post("/user_topics", { stream_id: denmark, topic: "x", visibility_policy: 7 }), 400, "BAD_REQUEST", "Invalid visibility_policy");
    expectError(await s.as("hamlet").post("/user_topics", { stream_id: 99999, topic: "x", visibility_policy: 1 }), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await s.as("hamlet").post("/user_topics", { stream_id: denmark, topic: "x".repeat(61), visibility_policy: 1 }), 400, "BAD_REQUEST");
  });

  test("a private channel the user cannot see is an invalid channel", async () => {
    const { expectError } = await import("../kit");
    expectSuccess(await s.as("iago").post("/users/me/subscriptions", { subscriptions: [{ name: "secret" }], invite_only: true }));
    const secret = expectSuccess(await s.as("iago").get("/get_stream_id", { stream: "secret" })).stream_id;
    expectError(await s.as("polonius").post("/user_topics", { stream_id: secret, topic: "x", visibility_policy: 1 }), 400, "BAD_REQUEST", "Invalid channel ID");
  });
});

describe("drafts", () => {
  test("create, list, edit, delete, with events to the owner only", async () => {
    const { expectError } = await import("../kit");
    const denmark = expectSuccess(await s.as("hamlet").get("/get_stream_id", { stream: "Denmark" })).stream_id;
    let ids: number[] = [];
    const r = await verifyAction(s, async () => {
      ids = expectSuccess(
        await s.as("hamlet").post("/drafts", {
          drafts: [
            { type: "stream", to: [denmark], topic: "sync drafts", content: "Let's add backend support.", timestamp: 1595479019 },
            { type: "private", to: [s.users.othello.id], topic: "", content: "psst" },
            { type: "", to: [], topic: "", content: "unaddressed" },
          ],
        }),
      ).ids;
    });
    expect(r.types.hamlet).toEqual(["drafts/add"]);
    expect(others(r, "hamlet")).toEqual([]);
    const listed = expectSuccess(await s.as("hamlet").get("/drafts"));
    expect(listed.count).toBe(3);
    expect(listed.drafts.map((d: any) => d.id).sort()).toEqual([...ids].sort());
    expect(listed.drafts.at(-1)).toEqual({ id: ids[0], type: "stream", to: [denmark], topic: "sync drafts", content: "Let's add backend support.", timestamp: 1595479019 });
    await verifyAction(s, () => s.as("hamlet").patch(`/drafts/${ids[1]}`, { draft: { type: "private", to: [s.users.othello.id, s.users.iago.id], topic: "", content: "psst!" } }), { viewers: ["hamlet"] });
    await verifyAction(s, () => s.as("hamlet").delete(`/drafts/${ids[2]}`), { viewers: ["hamlet"] });
    expectError(await s.as("othello").delete(`/drafts/${ids[0]}`), 404, "BAD_REQUEST", "Draft does not exist");
    expectError(await s.as("hamlet").post("/drafts", { drafts: [{ type: "stream", to: [], topic: "t", content: "c" }] }), 400, "BAD_REQUEST", "Must specify exactly 1 stream ID for stream messages");
    expectError(await s.as("hamlet").post("/drafts", { drafts: [{ type: "private", to: [99999], topic: "", content: "c" }] }), 400, "BAD_REQUEST", "Invalid user ID 99999");
    expectError(await s.as("hamlet").post("/drafts", { drafts: [{ type: "", to: [], topic: "", content: "c", timestamp: -5 }] }), 400, "BAD_REQUEST", "Timestamp must not be negative.");
    expectError(await s.as("hamlet").post("/drafts", { drafts: [{ type: "weird", to: [], topic: "", content: "c" }] }), 400, "BAD_REQUEST");
    expect(expectSuccess(await s.as("hamlet").get("/drafts")).count).toBe(2);
  });

  test("turning synchronization off deletes the stored drafts (no drafts event, as Zulip); none can be stored until it is on again", async () => {
    const { expectError } = await import("../kit");
    expectSuccess(await s.as("cordelia").post("/drafts", { drafts: [{ type: "", to: [], topic: "", content: "kept locally" }] }));
    // A client's state would keep its drafts: Zulip deletes them on the server only, so no verifyAction here.
    const queue = await captureEvents(s, ["cordelia"]);
    expectSuccess(await s.as("cordelia").patch("/settings", { enable_drafts_synchronization: false }));
    expect((await queue.collect()).cordelia.map((e) => `${e.type}/${e.op}`)).toEqual(["user_settings/update"]);
    expect((await register(s.as("cordelia"))).drafts).toEqual([]);
    expectError(await s.as("cordelia").post("/drafts", { drafts: [{ type: "", to: [], topic: "", content: "c" }] }), 400, "BAD_REQUEST", "User has disabled synchronizing drafts.");
    // Back on: the drafts stored before are gone, not brought back unannounced.
    await verifyAction(s, () => s.as("cordelia").patch("/settings", { enable_drafts_synchronization: true }), { viewers: ["cordelia"] });
    expect(expectSuccess(await s.as("cordelia").get("/drafts")).drafts).toEqual([]);
  });
});

describe("navigation views (FL 390)", () => {
  test("pin a built-in view, add, rename, unpin and remove a custom one", async () => {
    const { expectError } = await import("../kit");
    const r = await verifyAction(s, () => s.as("hamlet").post("/navigation_views", { fragment: "narrow/is/starred", is_pinned: true }));
    expect(r.types.hamlet).toEqual(["navigation_view/add"]);
    expect(others(r, "hamlet")).toEqual([]);
    const viewers = { viewers: ["hamlet" as const] };
    await verifyAction(s, () => s.as("hamlet").post("/navigation_views", { fragment: "narrow/channel/9-design", is_pinned: false, name: "Design" }), viewers);
    await verifyAction(s, () => s.as("hamlet").patch("/navigation_views/narrow/channel/9-design", { name: "Design work", is_pinned: true }), viewers);
    expect(expectSuccess(await s.as("hamlet").get("/navigation_views")).navigation_views).toEqual([
      { fragment: "narrow/channel/9-design", is_pinned: true, name: "Design work" },
      { fragment: "narrow/is/starred", is_pinned: true },
    ]);
    expectError(await s.as("hamlet").patch("/navigation_views/narrow/is/starred", { name: "Stars" }), 400, "BAD_REQUEST", "Built-in views cannot have a custom name.");
    expectError(await s.as("hamlet").patch("/navigation_views/inbox", { is_pinned: false }), 404, "NOT_FOUND", "Navigation view does not exist.");
    expectError(await s.as("hamlet").post("/navigation_views", { fragment: " ", is_pinned: true }), 400, "BAD_REQUEST", "fragment cannot be blank");
    expectError(await s.as("hamlet").post("/navigation_views", { fragment: "narrow/is/starred", is_pinned: false }), 400, "BAD_REQUEST", "Navigation view already exists.");
    expectError(await s.as("hamlet").post("/navigation_views", { fragment: "narrow/custom", is_pinned: false }), 400, "BAD_REQUEST", "Custom views must have a valid name.");
    await verifyAction(s, () => s.as("hamlet").delete("/navigation_views/narrow/channel/9-design"), viewers);
    expectError(await s.as("hamlet").delete("/navigation_views/narrow/channel/9-design"), 404, "NOT_FOUND");
    expect(expectSuccess(await s.as("othello").get("/navigation_views")).navigation_views).toEqual([]);
  });
});
