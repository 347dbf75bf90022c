import { runZulipJs } from "../clients/zulip-js";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expectError, expectSchema, expectSuccess, startTestServer, type CastName, type Params, type TestServer } from "../kit";
import { verifyAction } from "../kit/events";
import { GetStreamIdResponse, GetStreamResponse, GetStreamsResponse, GetSubscribersResponse, GetSubscriptionsResponse, GetUserGroupsResponse, StreamEmailResponse, SubscribeResponse, SubscriptionStatusResponse } from "../../src/schemas/channels";
import { Store } from "../../src/store/db";
import { doInitRealm } from "../../src/actions/realm";
import { SuccessEnvelope } from "../../src/schemas/common";

let s: TestServer;
let groupId: (name: string) => number;
beforeAll(async () => {
  s = await startTestServer();
  const groups = expectSuccess(await s.as("hamlet").get("/user_groups")).user_groups;
  groupId = (name) => groups.find((g: any) => g.name === name).id;
});
afterAll(() => s.stop());

let counter = 0;
const fresh = (prefix: string) => `${prefix} ${++counter}`;

async function create(who: CastName, name: string, params: Params = {}): Promise<number> {
  expectSuccess(await s.as(who).post("/users/me/subscriptions", { subscriptions: [{ name }], ...params }));
  return expectSuccess(await s.as(who).get("/get_stream_id", { stream: name })).stream_id;
}

describe("reading channels", () => {
  test("GET /streams: public, subscribed, include_all (include_all_active, its old name, for everyone since FL 356), include_can_access_content, include_default", async () => {
    const pub = await create("hamlet", fresh("Pub"));
    const priv = await create("hamlet", fresh("Priv"), { invite_only: true });
    const ids = async (who: CastName, params: Params = {}) => {
      const body = expectSuccess(await s.as(who).get("/streams", params));
      expectSchema(GetStreamsResponse, body);
      return body.streams.map((c: any) => c.stream_id);
    };
    expect(await ids("othello")).toContain(pub);
    expect(await ids("othello")).not.toContain(priv);
    expect(await ids("hamlet")).toEqual(expect.arrayContaining([pub, priv]));
    expect(await ids("hamlet", { include_public: false })).toEqual(expect.arrayContaining([pub, priv]));
    expect(await ids("othello", { include_public: false })).not.toContain(pub);
    expect(await ids("hamlet", { include_subscribed: false, include_public: false })).toEqual([]);
    expect(await ids("iago", { include_all_active: true })).toEqual(expect.arrayContaining([pub, priv]));
    // Everyone may ask for all; what comes back is still what they may see.
    for (const flag of ["include_all", "include_all_active"]) {
      const all = await ids("othello", { [flag]: true, include_public: false, include_subscribed: false });
      expect(all).toContain(pub);
      expect(all).not.toContain(priv);
    }
    const content = await ids("othello", { include_can_access_content: true, include_public: false, include_subscribed: false });
    expect(content).toContain(pub);
    expect(content).not.toContain(priv);
    // A guest reaches no public channel's content without a subscription.
    expect(await ids("polonius", { include_can_access_content: true, include_public: false, include_subscribed: false })).not.toContain(pub);
    const withDefault = expectSuccess(await s.as("othello").get("/streams", { include_default: true })).streams;
    expect(withDefault.every((c: any) => typeof c.is_default === "boolean")).toBe(true);
  });

  test("GET /streams/{id}, /get_stream_id, members and subscription status", async () => {
    const name = fresh("Lookup");
    const id = await create("hamlet", name, { principals: [s.users.hamlet.id, s.users.cordelia.id] });
    const one = expectSuccess(await s.as("othello").get(`/streams/${id}`));
    expectSchema(GetStreamResponse, one);
    expect(one.stream).toMatchObject({ stream_id: id, name, subscriber_count: 2, is_archived: false });
    const byName = expectSuccess(await s.as("othello").get("/get_stream_id", { stream: name.toUpperCase() }));
    expectSchema(GetStreamIdResponse, byName);
    expect(byName.stream_id).toBe(id);
    const members = expectSuccess(await s.as("othello").get(`/streams/${id}/members`));
    expectSchema(GetSubscribersResponse, members);
    expect(members.subscribers).toEqual([s.users.hamlet.id, s.users.cordelia.id]);
    const status = expectSuccess(await s.as("othello").get(`/users/${s.users.cordelia.id}/subscriptions/${id}`));
    expectSchema(SubscriptionStatusResponse, status);
    expect(status.is_subscribed).toBe(true);
    expect(expectSuccess(await s.as("othello").get(`/users/${s.users.othello.id}/subscriptions/${id}`)).is_subscribed).toBe(false);
    expectError(await s.as("othello").get("/streams/999999"), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await s.as("othello").get("/streams/abc"), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await s.as("othello").get("/get_stream_id", { stream: "nope" }), 400, "BAD_REQUEST", "Invalid channel name 'nope'");
    expectError(await s.as("othello").get("/get_stream_id"), 400, "REQUEST_VARIABLE_MISSING");
    expectError(await s.as("othello").get(`/users/999999/subscriptions/${id}`), 400, "BAD_REQUEST");
    // Guests see only what they are subscribed to.
    expectError(await s.as("polonius").get(`/streams/${id}`), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await s.as("polonius").get(`/streams/${id}/members`), 400, "BAD_REQUEST", "Invalid channel ID");
  });

  test("GET /users/me/subscriptions with include_subscribers", async () => {
    const id = await create("shiva", fresh("Mine"), { principals: [s.users.shiva.id, s.users.iago.id] });
    const body = expectSuccess(await s.as("shiva").get("/users/me/subscriptions", { include_subscribers: true }));
    expectSchema(GetSubscriptionsResponse, body);
    expect(body.subscriptions.find((c: any) => c.stream_id === id).subscribers).toEqual([s.users.iago.id, s.users.shiva.id]);
    const plain = expectSuccess(await s.as("shiva").get("/users/me/subscriptions"));
    expect("subscribers" in plain.subscriptions[0]).toBe(false);
  });

  test("GET /user_groups: the system groups, with role-derived members", async () => {
    const body = expectSuccess(await s.as("polonius").get("/user_groups"));
    expectSchema(GetUserGroupsResponse, body);
    const byName = Object.fromEntries(body.user_groups.map((g: any) => [g.name, g]));
    expect(Object.keys(byName)).toEqual(
      expect.arrayContaining(["role:internet", "role:everyone", "role:members", "role:fullmembers", "role:moderators", "role:administrators", "role:owners", "role:nobody"]),
    );
    expect(byName["role:owners"].members).toEqual([s.users.desdemona.id]);
    expect(byName["role:administrators"].members).toEqual([s.users.iago.id]);
    expect(byName["role:administrators"].direct_subgroup_ids).toEqual([byName["role:owners"].id]);
    expect(byName["role:everyone"].members).toEqual([s.users.polonius.id]);
    expect(byName["role:members"].members).toContain(s.users.hamlet.id);
    expect(byName["role:fullmembers"].members).toContain(s.users.hamlet.id);
    expect(byName["role:nobody"].members).toEqual([]);
    expect(byName["role:members"].is_system_group).toBe(true);
  });
});

describe("PATCH /streams/{stream_id}", () => {
  test("an edit racing the channel's first message keeps first_message_id", async () => {
    const name = fresh("Racing");
    const id = await create("hamlet", name);
    const [sent] = await Promise.all([
      s.as("hamlet").post("/messages", { type: "stream", to: name, topic: "t", content: "first" }),
      s.as("hamlet").patch(`/streams/${id}`, { description: "edited meanwhile" }),
    ]);
    const messageId = expectSuccess(sent).id;
    const stream = expectSuccess(await s.as("hamlet").get(`/streams/${id}`)).stream;
    expect(stream).toMatchObject({ description: "edited meanwhile", first_message_id: messageId });
  });
  test("the creator and administrators may edit; other members may not", async () => {
    const id = await create("hamlet", fresh("Editable"));
    expectError(await s.as("othello").patch(`/streams/${id}`, { description: "nope" }), 400, "BAD_REQUEST", "You do not have permission to administer this channel.");
    const newName = fresh("Renamed");
    expectSuccess(await s.as("hamlet").patch(`/streams/${id}`, { new_name: newName, description: "Now with *emphasis*" }));
    const stream = expectSuccess(await s.as("othello").get(`/streams/${id}`)).stream;
    expect(stream).toMatchObject({ name: newName, description: "Now with *emphasis*", rendered_description: "<p>Now with <em>emphasis</em></p>" });
    expectSuccess(await s.as("iago").patch(`/streams/${id}`, { description: "" }, { query: true }));
    expect(expectSuccess(await s.as("othello").get(`/streams/${id}`)).stream.rendered_description).toBe("");
    const other = fresh("Taken");
    await create("othello", other);
    expectError(await s.as("hamlet").patch(`/streams/${id}`, { new_name: other.toLowerCase() }), 400, "BAD_REQUEST", `Channel name '${other.toLowerCase()}' is already taken.`);
    expectError(await s.as("hamlet").patch(`/streams/${id}`, { new_name: "" }), 400, "BAD_REQUEST", "Channel name can't be empty.");
    expectError(await s.as("hamlet").patch(`/streams/${id}`, { is_web_public: true }), 400, "BAD_REQUEST");
    expectError(await s.as("hamlet").patch(`/streams/${id}`, { message_retention_days: 5 }), 400, "UNAUTHORIZED_PRINCIPAL");
    expectSuccess(await s.as("desdemona").patch(`/streams/${id}`, { message_retention_days: 5 }));
    expect(expectSuccess(await s.as("othello").get(`/streams/${id}`)).stream.message_retention_days).toBe(5);
  });

  test("group settings take the {new, old} form; old must match; stream_post_policy maps to can_send_message_group", async () => {
    const id = await create("hamlet", fresh("Groups"));
    expectSuccess(await s.as("hamlet").patch(`/streams/${id}`, { can_send_message_group: { new: groupId("role:administrators"), old: groupId("role:everyone") } }));
    let stream = expectSuccess(await s.as("hamlet").get(`/streams/${id}`)).stream;
    expect(stream).toMatchObject({ can_send_message_group: groupId("role:administrators"), stream_post_policy: 2, is_announcement_only: true });
    expectError(
      await s.as("hamlet").patch(`/streams/${id}`, { can_send_message_group: { new: groupId("role:members"), old: groupId("role:everyone") } }),
      400,
      "BAD_REQUEST",
      "'old' value does not match the expected value.",
    );
    expectSuccess(await s.as("hamlet").patch(`/streams/${id}`, { stream_post_policy: 4 }));
    stream = expectSuccess(await s.as("hamlet").get(`/streams/${id}`)).stream;
    expect(stream.can_send_message_group).toBe(groupId("role:moderators"));
    // Handing administration to someone else takes it from the creator.
    expectSuccess(await s.as("hamlet").patch(`/streams/${id}`, { can_administer_channel_group: { new: { direct_members: [s.users.othello.id], direct_subgroups: [] } } }));
    expectError(await s.as("hamlet").patch(`/streams/${id}`, { description: "mine?" }), 400, "BAD_REQUEST");
    expectSuccess(await s.as("othello").patch(`/streams/${id}`, { description: "theirs" }));
  });

  test("privacy changes: making a channel private hides it from non-subscribers (events verified)", async () => {
    const name = fresh("Going private");
    const id = await create("hamlet", name, { principals: [s.users.hamlet.id, s.users.cordelia.id] });
    const r = await verifyAction(s, async () => {
      expectSuccess(await s.as("hamlet").patch(`/streams/${id}`, { is_private: true }));
    }, { registerParams: { include_subscribers: true } });
    expect(r.types.hamlet).toEqual(["stream/update"]);
    expect(r.events.hamlet[0]).toMatchObject({ property: "invite_only", value: true, history_public_to_subscribers: false, is_web_public: false });
    expect(r.types.othello).toEqual(["stream/delete"]);
    expect(r.types.iago).toEqual(["stream/update"]);
    expect(r.types.polonius).toEqual([]);
    expectError(await s.as("othello").get(`/streams/${id}`), 400, "BAD_REQUEST", "Invalid channel ID");
    const back = await verifyAction(s, async () => {
      expectSuccess(await s.as("hamlet").patch(`/streams/${id}`, { is_private: false }));
    }, { registerParams: { include_subscribers: true } });
    expect(back.types.othello).toEqual(["stream/create", "subscription/peer_add"]);
    expect(back.types.polonius).toEqual([]);
  });

  test("group setting updates: stream update (plus stream_post_policy); widening can_subscribe_group shows a private channel", async () => {
    const id = await create("hamlet", fresh("Widening"), { invite_only: true });
    const posting = await verifyAction(s, async () => {
      expectSuccess(await s.as("hamlet").patch(`/streams/${id}`, { can_send_message_group: { new: groupId("role:moderators") } }));
    }, { viewers: ["hamlet", "iago", "othello"], registerParams: { include_subscribers: true } });
    expect(posting.events.hamlet.map((e) => [e.property, e.value])).toEqual([
      ["can_send_message_group", groupId("role:moderators")],
      ["stream_post_policy", 4],
      ["is_announcement_only", false],
    ]);
    expect(posting.types.othello).toEqual([]);
    const announcing = await verifyAction(s, async () => {
      expectSuccess(await s.as("hamlet").patch(`/streams/${id}`, { can_send_message_group: { new: groupId("role:administrators") } }));
    }, { viewers: ["hamlet"] });
    expect(announcing.events.hamlet.map((e) => [e.property, e.value])).toEqual([
      ["can_send_message_group", groupId("role:administrators")],
      ["stream_post_policy", 2],
      ["is_announcement_only", true],
    ]);
    // A group that no policy value stands for reads as 1, as everyone did: no deprecated events when it stays 1.
    expectSuccess(await s.as("hamlet").patch(`/streams/${id}`, { can_send_message_group: { new: groupId("role:everyone") } }));
    const unchanged = await verifyAction(s, async () => {
      expectSuccess(await s.as("hamlet").patch(`/streams/${id}`, { can_send_message_group: { new: { direct_members: [s.users.hamlet.id], direct_subgroups: [] } } }));
    }, { viewers: ["hamlet"] });
    expect(unchanged.events.hamlet.map((e) => e.property)).toEqual(["can_send_message_group"]);
    const widened = await verifyAction(s, async () => {
      expectSuccess(await s.as("hamlet").patch(`/streams/${id}`, { can_subscribe_group: { new: groupId("role:members") } }));
    }, { viewers: ["hamlet", "othello", "polonius"], registerParams: { include_subscribers: true } });
    expect(widened.types.othello).toEqual(["stream/create", "subscription/peer_add"]);
    expect(widened.types.hamlet).toEqual(["stream/update"]);
    expect(widened.types.polonius).toEqual([]);
  });

  test("topics_policy empty_topic_only needs every message in the empty topic", async () => {
    const name = fresh("Chatty");
    const id = await create("hamlet", name);
    expectSuccess(await s.as("hamlet").patch(`/streams/${id}`, { topics_policy: "allow_empty_topic" }));
    expectSuccess(await s.as("hamlet").post("/messages", { type: "channel", to: id, topic: "", content: "general" }));
    expectSuccess(await s.as("hamlet").patch(`/streams/${id}`, { topics_policy: "empty_topic_only" }));
    expect(expectSuccess(await s.as("hamlet").get(`/streams/${id}`)).stream.topics_policy).toBe("empty_topic_only");
    const other = await create("hamlet", fresh("Named"));
    expectSuccess(await s.as("hamlet").post("/messages", { type: "channel", to: other, topic: "lunch", content: "named" }));
    expectError(await s.as("hamlet").patch(`/streams/${other}`, { topics_policy: "empty_topic_only" }), 400, "BAD_REQUEST", /general chat/);
    expectError(await s.as("hamlet").patch(`/streams/${other}`, { topics_policy: "sometimes" }), 400, "BAD_REQUEST");
    // first_message_id follows the channel's first message.
    const first = expectSuccess(await s.as("hamlet").get(`/streams/${other}`)).stream.first_message_id;
    expect(typeof first).toBe("number");
  });

  test("rename and description updates reach everyone who sees the channel", async () => {
    const id = await create("hamlet", fresh("Described"));
    const r = await verifyAction(s, async () => {
      expectSuccess(await s.as("hamlet").patch(`/streams/${id}`, { new_name: fresh("Described anew"), description: "**bold**" }));
    });
    expect(r.types.othello).toEqual(["stream/update", "stream/update"]);
    expect(r.events.othello[1]).toMatchObject({ property: "description", value: "**bold**", rendered_description: "<p><strong>bold</strong></p>" });
    expect(r.types.polonius).toEqual([]);
  });
});

describe("archiving and default channels", () => {
  test("DELETE /streams/{id} archives: stream delete to its viewers; the channel disappears from lists", async () => {
    const id = await create("hamlet", fresh("Doomed"), { principals: [s.users.hamlet.id, s.users.polonius.id] });
    expectError(await s.as("othello").delete(`/streams/${id}`), 400, "BAD_REQUEST");
    const r = await verifyAction(s, async () => {
      expectSuccess(await s.as("hamlet").delete(`/streams/${id}`));
    });
    expect(r.types.othello).toEqual(["stream/delete"]);
    expect(r.types.polonius).toEqual(["stream/delete"]);
    expect(expectSuccess(await s.as("hamlet").get("/streams")).streams.map((c: any) => c.stream_id)).not.toContain(id);
    expect(expectSuccess(await s.as("hamlet").get("/streams", { exclude_archived: false })).streams.find((c: any) => c.stream_id === id).is_archived).toBe(true);
    expect(expectSuccess(await s.as("hamlet").get(`/streams/${id}`)).stream.is_archived).toBe(true);
    expectError(await s.as("hamlet").delete(`/streams/${id}`), 400, "BAD_REQUEST");
    // Clients with the archived_channels capability get an update instead and keep the channel.
    const id2 = await create("hamlet", fresh("Doomed too"));
    const r2 = await verifyAction(s, async () => {
      expectSuccess(await s.as("hamlet").delete(`/streams/${id2}`));
    }, { viewers: ["hamlet", "othello"], registerParams: { client_capabilities: { archived_channels: true } } });
    expect(r2.events.othello).toMatchObject([{ type: "stream", op: "update", property: "is_archived", value: true }]);
  });

  test("POST/DELETE /default_streams: administrators only, not private; new users join default channels", async () => {
    const name = fresh("Welcome");
    const id = await create("hamlet", name);
    const priv = await create("hamlet", fresh("Not default"), { invite_only: true });
    expectError(await s.as("hamlet").post("/default_streams", { stream_id: id }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    expectError(await s.as("iago").post("/default_streams", { stream_id: priv }), 400, "BAD_REQUEST");
    expectError(await s.as("iago").post("/default_streams", { stream_id: 999999 }), 400, "BAD_REQUEST", "Invalid channel ID");
    const r = await verifyAction(s, async () => {
      expectSuccess(await s.as("iago").post("/default_streams", { stream_id: id }));
    }, { viewers: ["hamlet", "polonius"] });
    expect(r.types.hamlet).toEqual(["default_streams"]);
    expect(r.types.polonius).toEqual([]);
    const newcomer = await s.createUser("rosalind");
    const subs = expectSuccess(await s.as(newcomer).get("/users/me/subscriptions")).subscriptions;
    expect(subs.map((c: any) => c.name)).toEqual([name]);
    expect(expectSuccess(await s.as("othello").get("/streams", { include_default: true })).streams.find((c: any) => c.stream_id === id).is_default).toBe(true);
    expectSuccess(await s.as("iago").delete("/default_streams", { stream_id: id }));
    expect(expectSuccess(await s.as("othello").get("/streams", { include_default: true })).streams.find((c: any) => c.stream_id === id).is_default).toBe(false);
  });
});

describe("GET /streams/{stream_id}/email_address", () => {
  test("for posters only; stable per sender", async () => {
    const name = fresh("Mail Room");
    const id = await create("hamlet", name);
    const body = expectSuccess(await s.as("hamlet").get(`/streams/${id}/email_address`));
    expectSchema(StreamEmailResponse, body);
    expect(body.email).toMatch(/^mail-room-\d+\.[0-9a-f]{32}@127\.0\.0\.1$/);
    expect(expectSuccess(await s.as("hamlet").get(`/streams/${id}/email_address`)).email).toBe(body.email);
    const own = expectSuccess(await s.as("hamlet").get(`/streams/${id}/email_address`, { sender_id: s.users.hamlet.id })).email;
    expect(own).not.toBe(body.email);
    expectError(await s.as("hamlet").get(`/streams/${id}/email_address`, { sender_id: s.users.othello.id }), 400, "BAD_REQUEST");
    expectError(await s.as("polonius").get(`/streams/${id}/email_address`), 400, "BAD_REQUEST", "Invalid channel ID");
    const quiet = await create("hamlet", fresh("Quiet"), { can_send_message_group: groupId("role:administrators") });
    expectError(await s.as("othello").get(`/streams/${quiet}/email_address`), 400, "BAD_REQUEST");
  });
});

describe("role changes move channel visibility", () => {
  test("a member made guest loses unsubscribed public channels; made member again regains them", async () => {
    const u = await s.createUser("fool");
    const id = await create("hamlet", fresh("Court"));
    const r = await verifyAction(s, async () => {
      expectSuccess(await s.as("iago").patch(`/users/${u.id}`, { role: 600 }));
    }, { viewers: ["hamlet"] });
    expect(r.types.hamlet).toContain("realm_user/update");
    expect(expectSuccess(await s.as(u).get("/streams")).streams.map((c: any) => c.stream_id)).not.toContain(id);
    expectSuccess(await s.as("iago").patch(`/users/${u.id}`, { role: 400 }));
    expect(expectSuccess(await s.as(u).get("/streams")).streams.map((c: any) => c.stream_id)).toContain(id);
  });
});

describe("role changes (events verified)", () => {
  test("member → guest → member: public channels leave and return, private ones seen by admins appear", async () => {
    const pub = await create("hamlet", fresh("Seen by members"), { principals: [s.users.hamlet.id, s.users.shiva.id] });
    const priv = await create("hamlet", fresh("Seen by admins"), { invite_only: true });
    const toGuest = await verifyAction(s, async () => {
      expectSuccess(await s.as("iago").patch(`/users/${s.users.cordelia.id}`, { role: 600 }));
    }, { viewers: ["cordelia", "hamlet"], registerParams: { include_subscribers: true } });
    expect(toGuest.events.cordelia.filter((e) => e.type === "stream").map((e) => e.op)).toContain("delete");
    expect(toGuest.events.cordelia.some((e) => e.type === "stream" && e.stream_ids?.includes(pub))).toBe(true);
    await verifyAction(s, async () => {
      expectSuccess(await s.as("iago").patch(`/users/${s.users.cordelia.id}`, { role: 400 }));
    }, { viewers: ["cordelia", "hamlet"], registerParams: { include_subscribers: true } });
    const toAdmin = await verifyAction(s, async () => {
      expectSuccess(await s.as("desdemona").patch(`/users/${s.users.cordelia.id}`, { role: 200 }));
    }, { viewers: ["cordelia"], registerParams: { include_subscribers: true } });
    expect(toAdmin.events.cordelia.some((e) => e.type === "stream" && e.op === "create" && e.streams[0].stream_id === priv)).toBe(true);
    await verifyAction(s, async () => {
      expectSuccess(await s.as("desdemona").patch(`/users/${s.users.cordelia.id}`, { role: 400 }));
    }, { viewers: ["cordelia"], registerParams: { include_subscribers: true } });
  });

  test("joining or leaving a private channel's administering group shows or hides the channel", async () => {
    const groupBody = expectSuccess(await s.as("hamlet").post("/user_groups/create", { name: fresh("Stewards"), description: "", members: [s.users.hamlet.id] }));
    const priv = await create("hamlet", fresh("Stewarded"), { invite_only: true, can_administer_channel_group: groupBody.group_id });
    const joined = await verifyAction(s, async () => {
      expectSuccess(await s.as("hamlet").post(`/user_groups/${groupBody.group_id}/members`, { add: [s.users.othello.id] }));
    }, { viewers: ["othello", "cordelia"], registerParams: { include_subscribers: true } });
    expect(joined.events.othello.some((e) => e.type === "stream" && e.op === "create" && e.streams[0].stream_id === priv)).toBe(true);
    expect(joined.events.cordelia.some((e) => e.type === "stream")).toBe(false);
    const left = await verifyAction(s, async () => {
      expectSuccess(await s.as("hamlet").post(`/user_groups/${groupBody.group_id}/members`, { delete: [s.users.othello.id] }));
    }, { viewers: ["othello"], registerParams: { include_subscribers: true } });
    expect(left.events.othello.some((e) => e.type === "stream" && e.op === "delete")).toBe(true);
  });

  test("joining a group nested in a private channel's administering group shows the channel", async () => {
    const outer = expectSuccess(await s.as("hamlet").post("/user_groups/create", { name: fresh("Wardens"), description: "", members: [s.users.hamlet.id] }));
    const inner = expectSuccess(await s.as("hamlet").post("/user_groups/create", { name: fresh("Deputies"), description: "", members: [s.users.hamlet.id] }));
    expectSuccess(await s.as("hamlet").post(`/user_groups/${outer.group_id}/subgroups`, { add: [inner.group_id] }));
    const priv = await create("hamlet", fresh("Warded"), { invite_only: true, can_administer_channel_group: outer.group_id });
    const joined = await verifyAction(s, async () => {
      expectSuccess(await s.as("hamlet").post(`/user_groups/${inner.group_id}/members`, { add: [s.users.othello.id] }));
    }, { viewers: ["othello"], registerParams: { include_subscribers: true } });
    expect(joined.events.othello.some((e) => e.type === "stream" && e.op === "create" && e.streams[0].stream_id === priv)).toBe(true);
  });

  test("deactivating a subscriber: peer_remove to the channel's viewers; reactivating: peer_add", async () => {
    const u = await s.createUser("gravedigger");
    await create("hamlet", fresh("Graveyard"), { principals: [s.users.hamlet.id, u.id] });
    const off = await verifyAction(s, async () => {
      expectSuccess(await s.as("iago").delete(`/users/${u.id}`));
    }, { viewers: ["hamlet", "othello", "polonius"], registerParams: { include_subscribers: true } });
    expect(off.types.hamlet).toContain("subscription/peer_remove");
    expect(off.types.polonius).not.toContain("subscription/peer_remove");
    await verifyAction(s, async () => {
      expectSuccess(await s.as("iago").post(`/users/${u.id}/reactivate`));
    }, { viewers: ["hamlet", "othello", "polonius"], registerParams: { include_subscribers: true } });
  });
});

describe("malformed requests are 400s, never 500s", () => {
  test("a table of bad inputs", async () => {
    const id = await create("hamlet", fresh("Robust"));
    const cases: [string, string, Params][] = [
      ["POST", "/users/me/subscriptions", { subscriptions: [{}] }],
      ["POST", "/users/me/subscriptions", { subscriptions: [{ name: 5 }] }],
      ["POST", "/users/me/subscriptions", { subscriptions: "not json" }],
      ["POST", "/users/me/subscriptions", { subscriptions: [{ name: "x" }], principals: [1.5] }],
      ["POST", "/users/me/subscriptions", { subscriptions: [{ name: "x" }], principals: [1, "a@b.c"] }],
      ["POST", "/users/me/subscriptions", { subscriptions: [{ name: "x" }], message_retention_days: "sometimes" }],
      ["POST", "/users/me/subscriptions", { subscriptions: [{ name: "x" }], can_send_message_group: { direct_members: "all" } }],
      ["POST", "/users/me/subscriptions", { subscriptions: [{ name: "x" }], stream_post_policy: 9 }],
      ["POST", "/users/me/subscriptions", { subscriptions: [{ name: "x" }], folder_id: 3 }],
      ["DELETE", "/users/me/subscriptions", { subscriptions: [5] }],
      ["DELETE", "/users/me/subscriptions", {}],
      ["POST", "/users/me/subscriptions/properties", { subscription_data: [{ stream_id: "x", property: "color", value: "#000000" }] }],
      ["POST", "/users/me/subscriptions/properties", { subscription_data: [{ stream_id: id, property: "color", value: null }] }],
      ["POST", "/users/me/subscriptions/properties", { subscription_data: {} }],
      ["POST", `/users/me/subscriptions/${id}`, { property: "color" }],
      ["PATCH", `/streams/${id}`, { can_send_message_group: 2 }],
      ["PATCH", `/streams/${id}`, { can_send_message_group: { old: 2 } }],
      ["PATCH", `/streams/${id}`, { is_private: "maybe" }],
      ["PATCH", `/streams/${id}`, { folder_id: 4 }],
      ["PATCH", "/streams/99999999999999999999", { description: "x" }],
      ["DELETE", "/streams/-1", {}],
      ["GET", "/streams", { include_public: "yes" }],
      ["GET", `/streams/${id}/email_address`, { sender_id: "me" }],
      ["POST", "/default_streams", { stream_id: "one" }],
      ["GET", "/users/abc/subscriptions/1", {}],
    ];
    for (const [method, path, params] of cases) {
      const res = await s.as("iago").request(method, path, params);
      if (res.status !== 400) throw new Error(`${method} ${path} ${JSON.stringify(params)} → ${res.status} ${JSON.stringify(res.body)}`);
      expect(res.body.result).toBe("error");
    }
  });
});

describe("data folders from before user groups", () => {
  test("the system groups are created at server start", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "hearth-old-"));
    try {
      const store = new Store(dataDir);
      await doInitRealm(store, { realmName: "Old", ownerEmail: "old@zulip.test", ownerPassword: "old-password" });
      // Remove what realm init now writes, to look like a folder made before it did.
      await store.commit(() => {
        for (const key of [...store.dbs.userGroups.getKeys({})]) store.dbs.userGroups.remove(key);
        for (const key of [...store.dbs.userGroupsByName.getKeys({})]) store.dbs.userGroupsByName.remove(key);
        store.dbs.meta.remove(["counter", "user_group"]);
      });
      expect([...store.dbs.userGroups.getKeys({})]).toEqual([]);
      await store.close();
      const old = await startTestServer({ dataDir });
      try {
        const owner = old.server.h.store.dbs.users.get(4);
        const client = new (await import("../kit")).ApiClient(old.url, owner.email, owner.api_key);
        const groups = expectSuccess(await client.get("/user_groups")).user_groups;
        expect(groups.map((g: any) => g.name)).toContain("role:nobody");
        expect(groups.find((g: any) => g.name === "role:owners").members).toEqual([owner.id]);
        expectSuccess(await client.post("/users/me/subscriptions", { subscriptions: [{ name: "first" }] }));
      } finally {
        await old.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("zulip-js (under Node, as its users run it)", () => {
  test("subscribe, list channels and subscriptions, look up an ID, unsubscribe, archive", async () => {
    const name = fresh("From zulip-js");
    const config = { realm: s.url, username: s.users.othello.email, apiKey: s.users.othello.apiKey };
    const [added, streams, subscriptions, streamId] = (
      await runZulipJs(config, [
        { fn: "users.me.subscriptions.add", args: [{ subscriptions: JSON.stringify([{ name, description: "made by zulip-js" }]) }] },
        { fn: "streams.retrieve" },
        { fn: "streams.subscriptions.retrieve" },
        { fn: "streams.getStreamId", args: [name] },
      ])
    ).results;
    const [removed, archived] = (
      await runZulipJs(config, [
        { fn: "users.me.subscriptions.remove", args: [{ subscriptions: JSON.stringify([name]) }] },
        { fn: "streams.deleteById", args: [{ stream_id: streamId.stream_id }] },
      ])
    ).results;
    const out = { added, streams, subscriptions, streamId, removed, archived };
    expectSchema(SubscribeResponse, out.added);
    expect(out.added.subscribed[String(s.users.othello.id)]).toEqual([name]);
    expectSchema(GetStreamsResponse, out.streams);
    const found = out.streams.streams.find((c: any) => c.name === name);
    expect(found.description).toBe("made by zulip-js");
    expectSchema(GetSubscriptionsResponse, out.subscriptions);
    expect(out.subscriptions.subscriptions.map((c: any) => c.name)).toContain(name);
    expect(out.streamId).toMatchObject({ result: "success", stream_id: found.stream_id });
    expect(out.removed).toMatchObject({ result: "success", removed: [name], not_removed: [] });
    expectSchema(SuccessEnvelope, out.archived);
    expect(expectSuccess(await s.as("othello").get(`/streams/${found.stream_id}`)).stream.is_archived).toBe(true);
  });
});
