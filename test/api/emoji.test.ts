import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Type as t } from "@sinclair/typebox";
import { expectError, expectSchema, expectSuccess, startTestServer, type TestServer } from "../kit";
import { verifyAction } from "../kit/events";
import { identiconPng } from "../../src/avatars/identicon";
import { success } from "../../src/schemas/common";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const RealmEmojiItem = t.Object({
  id: t.String(),
  name: t.String(),
  source_url: t.String(),
  still_url: t.Union([t.String(), t.Null()]),
  deactivated: t.Boolean(),
  author_id: t.Integer(),
});
const png = () => new File([identiconPng(String(Math.random()), 32) as BlobPart], "e.png", { type: "image/png" });

describe("realm emoji", () => {
  test("upload, list, serve, deactivate — with realm_emoji events to everyone", async () => {
    const r = await verifyAction(s, () => s.as("hamlet").post("/realm/emoji/party_parrot", { file: png() }, { multipart: true }), {
      viewers: ["hamlet", "othello", "polonius"],
    });
    for (const types of Object.values(r.types)) expect(types).toEqual(["realm_emoji/update"]);
    const list = expectSuccess(await s.as("othello").get("/realm/emoji"));
    expectSchema(success({ emoji: t.Record(t.String(), RealmEmojiItem) }), list);
    const [emoji] = Object.values(list.emoji) as any[];
    expect(emoji).toMatchObject({ name: "party_parrot", deactivated: false, author_id: s.users.hamlet.id });
    const image = await fetch(emoji.source_url);
    expect(image.status).toBe(200);
    expect(image.headers.get("content-type")).toBe("image/png");
    expectError(await s.as("othello").delete("/realm/emoji/party_parrot"), 400, "BAD_REQUEST");
    await verifyAction(s, () => s.as("hamlet").delete("/realm/emoji/party_parrot"), { viewers: ["hamlet", "othello"] });
    const after = expectSuccess(await s.as("othello").get("/realm/emoji")).emoji;
    expect(after[emoji.id].deactivated).toBe(true);
    // Old messages still show it.
    expect((await fetch(emoji.source_url)).status).toBe(200);
    expectError(await s.as("hamlet").delete("/realm/emoji/party_parrot"), 400, "BAD_REQUEST", "Emoji 'party_parrot' does not exist");
    // The name is free again once deactivated.
    expectSuccess(await s.as("othello").post("/realm/emoji/party_parrot", { file: png() }, { multipart: true }));
  });

  test("clients with individual_emoji_changes get add and update_one (FL 491)", async () => {
    const params = { registerParams: { client_capabilities: { individual_emoji_changes: true } }, viewers: ["hamlet" as const, "othello" as const] };
    const added = await verifyAction(s, () => s.as("hamlet").post("/realm/emoji/single", { file: png() }, { multipart: true }), params);
    expect(added.types.othello).toEqual(["realm_emoji/add"]);
    expect(added.events.othello[0].emoji).toMatchObject({ name: "single", deactivated: false });
    const removed = await verifyAction(s, () => s.as("hamlet").delete("/realm/emoji/single"), params);
    expect(removed.events.othello[0]).toMatchObject({ op: "update_one", data: { deactivated: true } });
  });

  test("names, duplicates, files and permissions", async () => {
    expectSuccess(await s.as("iago").post("/realm/emoji/hearth", { file: png() }, { multipart: true }));
    expectError(await s.as("hamlet").post("/realm/emoji/hearth", { file: png() }, { multipart: true }), 400, "BAD_REQUEST", "A custom emoji with this name already exists.");
    expectError(await s.as("hamlet").post("/realm/emoji/Bad%20Name", { file: png() }, { multipart: true }), 400, "BAD_REQUEST");
    expectError(await s.as("hamlet").post("/realm/emoji/fine", {}, { multipart: true }), 400, "BAD_REQUEST", "You must upload exactly one file.");
    expectError(await s.as("hamlet").post("/realm/emoji/fine", { file: new File(["not an image"], "x.png") }, { multipart: true }), 400, "BAD_REQUEST", "Invalid image format");
    // Guests are not in role:members, the default can_add_custom_emoji_group.
    expectError(await s.as("polonius").post("/realm/emoji/guesty", { file: png() }, { multipart: true }), 400, "UNAUTHORIZED_PRINCIPAL");
    expectSuccess(await s.as("iago").delete("/realm/emoji/hearth"));
    expect((await fetch(`${s.url}/user_avatars/1/emoji/images/999.png`)).status).toBe(404);
    // The emoji path must not shadow the avatar of user 1 (the notification bot).
    const { getUser } = await import("../../src/store/users");
    const { avatarUrl } = await import("../../src/views/avatars");
    expect((await fetch(avatarUrl(s.server.h, getUser(s.server.h.store, 1)!))).status).toBe(200);
  });

  test("server_emoji_data_url serves code_to_names without credentials", async () => {
    const register = expectSuccess(await s.as("hamlet").post("/register", { fetch_event_types: ["realm"] }));
    const res = await fetch(register.server_emoji_data_url);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.code_to_names["1f600"]).toContain("grinning");
    expect(body.code_to_names["1f44d"]).toEqual(expect.arrayContaining(["thumbs_up", "+1"]));
    // Zulip's name first; every emoji Unicode lists is there, those outside Zulip's names by their CLDR names.
    expect(body.code_to_names["1f600"][0]).toBe("grinning");
    expect(body.code_to_names["1f980"]).toContain("crab");
    expect(body.code_to_names["1f1e9-1f1ea"]).toEqual(["flag_germany"]);
    expect(Object.keys(body.code_to_names).length).toBeGreaterThan(1800);
  });
});

describe("Unicode emoji outside Zulip's names", () => {
  test("a reaction by the CLDR name alone (as the Python bindings' react() sends it); a status with a name Hearth does not know and its code", async () => {
    const { othello, hamlet } = s.users;
    const id = expectSuccess(await s.as("hamlet").post("/messages", { type: "direct", to: JSON.stringify([othello.id]), content: "hi" })).id;
    expectSuccess(await s.as("othello").post(`/messages/${id}/reactions`, { emoji_name: "weary_face" }));
    const reactions = expectSuccess(await s.as("hamlet").get(`/messages/${id}`)).message.reactions;
    expect(reactions).toContainEqual(expect.objectContaining({ emoji_name: "weary_face", emoji_code: "1f629", reaction_type: "unicode_emoji" }));
    // Zulip's name for the emoji (not in Hearth's table) with its code, as the apps send a status.
    expectSuccess(await s.as("hamlet").post("/users/me/status", { status_text: "tired", emoji_name: "weary", emoji_code: "1f629", reaction_type: "unicode_emoji" }));
    expect(expectSuccess(await s.as("othello").get(`/users/${hamlet.id}/status`)).status).toMatchObject({ emoji_name: "weary", emoji_code: "1f629" });
    // A name Hearth knows must still name its own code.
    expectError(await s.as("hamlet").post("/users/me/status", { emoji_name: "crab", emoji_code: "1f629", reaction_type: "unicode_emoji" }), 400, "BAD_REQUEST", "Invalid emoji code.");
  });
});

describe("custom emoji in a user status", () => {
  test("a status takes a custom emoji by name, as reactions do (one emoji check for both)", async () => {
    const id = expectSuccess(await s.as("hamlet").post("/realm/emoji/status_star", { file: png() }, { multipart: true }));
    expect(id).toBeDefined();
    const listed = Object.values(expectSuccess(await s.as("othello").get("/realm/emoji")).emoji) as any[];
    expect(listed.find((e) => e.name === "status_star")).toMatchObject({ name: "status_star", deactivated: false, author_id: s.users.hamlet.id });
    expectSuccess(await s.as("hamlet").post("/users/me/status", { status_text: "shining", emoji_name: "status_star", reaction_type: "realm_emoji" }));
    const status = expectSuccess(await s.as("othello").get(`/users/${s.users.hamlet.id}/status`)).status;
    expect(status).toMatchObject({ status_text: "shining", emoji_name: "status_star", reaction_type: "realm_emoji" });
    expectError(await s.as("hamlet").post("/users/me/status", { emoji_name: "no_such_emoji", reaction_type: "realm_emoji" }), 400, "BAD_REQUEST", "Emoji 'no_such_emoji' does not exist");
  });
});
