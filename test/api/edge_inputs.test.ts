/** Inputs at the edges: characters past U+FFFF, oversized keys, encoded paths, prototype names. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectSuccess, startTestServer, type TestServer } from "../kit";

let s: TestServer;
let denmark: number;
beforeAll(async () => {
  s = await startTestServer();
  denmark = await s.createChannel("iago", "Denmark", ["iago", "hamlet"]);
});
afterAll(() => s.stop());

describe("characters past U+FFFF (emoji) in keys", () => {
  test("topics, search prefixes, bot storage keys and navigation views starting with an emoji are found", async () => {
    expectSuccess(await s.as("hamlet").post("/messages", { type: "stream", to: denmark, topic: "🎉 party", content: "𝒜lpha cake tonight" }));
    expectSuccess(await s.as("hamlet").post("/messages", { type: "stream", to: denmark, topic: "plain", content: "hello" }));
    const topics = expectSuccess(await s.as("hamlet").get(`/users/me/${denmark}/topics`)).topics.map((t: any) => t.name);
    expect(topics).toEqual(expect.arrayContaining(["🎉 party", "plain"]));
    const found = expectSuccess(await s.as("hamlet").get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow: [{ operator: "search", operand: "𝒜lp" }] }));
    // U+1D49C is a letter past U+FFFF: words made of such letters are found by prefix too.
    expect(found.messages.length).toBe(1);
    expectSuccess(await s.as("hamlet").put("/bot_storage", { storage: { "😀": "v" } }));
    expect(expectSuccess(await s.as("hamlet").get("/bot_storage")).storage).toEqual({ "😀": "v" });
    expectSuccess(await s.as("hamlet").post("/navigation_views", { fragment: "😀view", is_pinned: true, name: "Smile" }));
    expect(expectSuccess(await s.as("hamlet").get("/navigation_views")).navigation_views.map((v: any) => v.fragment)).toContain("😀view");
  });
});

describe("values too large for an index key are refused or hashed, never a 500", () => {
  test("long fragments, bot storage keys, huge direct-message groups; long push tokens work", async () => {
    expectError(await s.as("hamlet").post("/navigation_views", { fragment: "x".repeat(3000), is_pinned: true, name: "X" }), 400, "BAD_REQUEST");
    expectError(await s.as("hamlet").put("/bot_storage", { storage: { ["k".repeat(3000)]: "v" } }), 400, "BAD_REQUEST");
    const token = "t".repeat(4000);
    expectSuccess(await s.as("hamlet").post("/users/me/android_gcm_reg_id", { token }));
    expectSuccess(await s.as("hamlet").delete("/users/me/android_gcm_reg_id", { token }));
    const many = Array.from({ length: 600 }, (_, i) => 100000 + i);
    expectError(await s.as("hamlet").post("/messages", { type: "direct", to: many, content: "hi all" }), 400, "BAD_REQUEST");
    expectError(await s.as("hamlet").get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow: [{ operator: "dm", operand: many }] }), 400, "BAD_NARROW");
  });

  test("a group mention of a name longer than any key, and a view's fragment too long to exist, are 4xx", async () => {
    const long = "a".repeat(6000);
    const rendered = expectSuccess(await s.as("hamlet").post("/messages/render", { content: `@*${long.slice(0, 4100)}*` })).rendered;
    expect(rendered).not.toContain("user-group-mention");
    // A topic link's topic is looked up in the store: one longer than any key links without `with`.
    await s.createChannel("iago", "Long topics", ["hamlet"]);
    const topic = "t".repeat(2500);
    const linked = expectSuccess(await s.as("hamlet").post("/messages/render", { content: `#**Long topics>${topic}**` })).rendered;
    expect(linked).toContain(`/topic/${topic}"`);
    expectSuccess(await s.as("hamlet").post("/messages", { type: "stream", to: "Long topics", topic: "t", content: `#**Long topics>${topic}**` }));
    for (const path of [`/navigation_views/${long}`]) {
      expectError(await s.as("hamlet").patch(path, { is_pinned: true }), 404, "NOT_FOUND");
      expectError(await s.as("hamlet").delete(path), 404, "NOT_FOUND");
    }
  });
});

describe("encoded path segments are decoded once", () => {
  test("'%25E0' and malformed encodings are 4xx, not 500", async () => {
    expect((await s.as("desdemona").delete("/realm/domains/%25E0")).status).toBe(400);
    expect((await s.as("desdemona").delete("/realm/emoji/%25E0")).status).toBe(400);
    expect((await s.as("hamlet").delete("/navigation_views/%E0%A4%A")).status).toBe(400);
  });
});

describe("names that are Object.prototype keys", () => {
  test("'__proto__' or 'constructor' as a choice or a language are rejected", async () => {
    const field = expectSuccess(await s.as("iago").post("/realm/profile_fields", { field_type: 3, name: "Team", field_data: { a: { text: "A", order: "1" } } })).id;
    for (const value of ["__proto__", "constructor"]) {
      expectError(await s.as("hamlet").patch("/users/me/profile_data", { data: [{ id: field, value }] }), 400, "BAD_REQUEST");
      expectError(await s.as("hamlet").patch("/settings", { default_language: value }), 400, "BAD_REQUEST", "Invalid default_language");
      expectError(await s.as("iago").patch("/realm/user_settings_defaults", { default_language: value }), 400, "BAD_REQUEST");
    }
    expectError(await s.as("iago").patch("/realm/user_settings_defaults", { notification_sound: "../../etc/passwd" }), 400, "BAD_REQUEST");
  });
});

describe("queues, lookups and listings respect each viewer", () => {
  test("a queue narrowed to is:mentioned gets the messages that mention its user", async () => {
    const { register, drainEvents } = await import("../kit/events");
    const state = await register(s.as("hamlet"), { event_types: ["message"], narrow: [["is", "mentioned"]] });
    expectSuccess(await s.as("iago").post("/messages", { type: "stream", to: denmark, topic: "t", content: "@**King Hamlet** look" }));
    expectSuccess(await s.as("iago").post("/messages", { type: "stream", to: denmark, topic: "t", content: "nobody here" }));
    const events = await drainEvents(s.as("hamlet"), state.queue_id);
    expect(events.map((e) => e.message.content)).toEqual(["@**King Hamlet** look"]);
    expect(events[0].flags).toContain("mentioned");
  });

  test("hidden emails stay hidden in presence lookups and bot listings", async () => {
    const { getUser, putUser } = await import("../../src/store/users");
    const h = s.server.h;
    const owner = await s.createUser("quiet");
    await h.store.commit(() => putUser(h.store, { ...getUser(h.store, owner.id)!, email_address_visibility: 4 }));
    expectError(await s.as("othello").get(`/users/${owner.email}/presence`), 400, "BAD_REQUEST", "No such user");
    expectSuccess(await s.as(owner).post("/bots", { full_name: "Quiet bot", short_name: "quietbot" }));
    const bots = expectSuccess(await s.as(owner).get("/bots")).bots;
    const quiet = bots.find((b: any) => b.full_name === "Quiet bot");
    expect(quiet.owner).toBe(`user${owner.id}@${new URL(s.url).hostname}`);
  });
});
