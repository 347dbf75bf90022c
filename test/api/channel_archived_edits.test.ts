/**
 * FL 362: an archived channel still takes subscribers, unsubscriptions and setting
 * changes (privacy, name, description …), but no messages. Its events reach only the
 * clients that declared `archived_channels`; the others were told at archiving that
 * the channel is gone and hear nothing more of it, so their state stays that of a
 * fresh register (which leaves archived channels out for them).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectSuccess, startTestServer, type CastName, type TestServer } from "../kit";
import { applyEvent, drainEvents, normalizeState, register, verifyAction } from "../kit/events";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

let n = 0;
const fresh = (base: string) => `${base} ${++n}`;
const WITH = { client_capabilities: { archived_channels: true }, include_subscribers: true };
const WITHOUT = { include_subscribers: true };

async function archivedChannel(members: CastName[], extra: Record<string, unknown> = {}): Promise<{ id: number; name: string }> {
  const name = fresh("Attic");
  const id = await s.createChannel("hamlet", name, members, extra);
  expectSuccess(await s.as("hamlet").delete(`/streams/${id}`));
  return { id, name };
}

const ofChannel = (id: number) => (e: any) => e.stream_id === id || e.stream_ids?.includes(id) || e.subscriptions?.some((x: any) => x.stream_id === id) || e.streams?.some((x: any) => x.stream_id === id);

describe("subscribing to and unsubscribing from an archived channel (FL 362)", () => {
  test("others subscribed: the new subscriber gets its subscription, the viewers peer_add, with archived_channels; nothing without", async () => {
    for (const registerParams of [WITH, WITHOUT]) {
      const { id, name } = await archivedChannel(["hamlet", "cordelia"]);
      let answer: any;
      const r = await verifyAction(
        s,
        async () => {
          answer = expectSuccess(await s.as("hamlet").post("/users/me/subscriptions", { subscriptions: [{ name }], principals: [s.users.othello.id], send_new_subscription_messages: false }));
        },
        { viewers: ["hamlet", "othello", "cordelia", "iago"], registerParams },
      );
      expect(answer).toMatchObject({ subscribed: { [String(s.users.othello.id)]: [name] }, already_subscribed: {} });
      if (registerParams === WITH) {
        expect(r.types.othello).toEqual(["subscription/add"]);
        expect(r.events.othello[0].subscriptions).toMatchObject([{ stream_id: id, is_archived: true }]);
        for (const who of ["hamlet", "cordelia", "iago"]) expect(r.events[who]).toMatchObject([{ type: "subscription", op: "peer_add", stream_ids: [id], user_ids: [s.users.othello.id] }]);
      } else {
        for (const who of ["hamlet", "othello", "cordelia", "iago"]) expect(r.events[who]).toEqual([]);
      }
      const members = expectSuccess(await s.as("cordelia").get(`/streams/${id}/members`)).subscribers;
      expect(members).toContain(s.users.othello.id);
    }
  });

  test("subscribing oneself and leaving again; the Notification Bot still tells whom someone else subscribed", async () => {
    const { id, name } = await archivedChannel(["hamlet"]);
    const r = await verifyAction(s, async () => expectSuccess(await s.as("othello").post("/users/me/subscriptions", { subscriptions: [{ name }] })), {
      viewers: ["othello", "hamlet"],
      registerParams: WITH,
    });
    expect(r.types).toEqual({ othello: ["subscription/add"], hamlet: ["subscription/peer_add"] });
    const left = await verifyAction(s, async () => expect(expectSuccess(await s.as("othello").delete("/users/me/subscriptions", { subscriptions: [name] })).removed).toEqual([name]), {
      viewers: ["othello", "hamlet", "cordelia"],
      registerParams: WITHOUT,
    });
    expect(left.events).toEqual({ othello: [], hamlet: [], cordelia: [] });
    const back = await verifyAction(s, async () => expectSuccess(await s.as("hamlet").post("/users/me/subscriptions", { subscriptions: [{ name }], principals: [s.users.othello.id] })), {
      viewers: ["othello", "hamlet"],
      registerParams: WITH,
    });
    // The direct message names the channel, as Zulip's does for any channel.
    expect(back.types.othello).toEqual(["subscription/add", "message"]);
    expect(back.events.othello[1].message.content).toContain(`#**${name}**`);
    expect(back.events.othello[0].subscriptions[0]).toMatchObject({ stream_id: id, is_archived: true });
  });

  test("one request over a live and an archived channel: the live subscription reaches every client, the archived one only archived_channels clients", async () => {
    const live = fresh("Porch");
    await s.createChannel("hamlet", live, ["hamlet"]);
    const { id, name } = await archivedChannel(["hamlet"]);
    const r = await verifyAction(s, async () => expectSuccess(await s.as("cordelia").post("/users/me/subscriptions", { subscriptions: [{ name: live }, { name }] })), {
      viewers: ["cordelia"],
      registerParams: WITHOUT,
    });
    expect(r.types.cordelia).toEqual(["subscription/add"]);
    expect(r.events.cordelia[0].subscriptions.map((x: any) => x.name)).toEqual([live]);
    const state = await register(s.as("cordelia"), WITH);
    expect(state.subscriptions.find((x: any) => x.stream_id === id)).toMatchObject({ name, is_archived: true });
  });

  test("a subscription's own settings change on an archived channel: an update for archived_channels clients only", async () => {
    const { id } = await archivedChannel(["hamlet"]);
    for (const [registerParams, expected] of [[WITH, ["subscription/update"]], [WITHOUT, []]] as const) {
      const r = await verifyAction(s, async () => expectSuccess(await s.as("hamlet").post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: id, property: "color", value: registerParams === WITH ? "#aabbcc" : "#ccbbaa" }] })), {
        viewers: ["hamlet"],
        registerParams,
      });
      expect(r.types.hamlet).toEqual([...expected]);
    }
  });

  test("a private archived channel: subscribers removed by an administrator lose sight of it, in the clients that kept it", async () => {
    const { id, name } = await archivedChannel(["hamlet", "othello"], { invite_only: true });
    const r = await verifyAction(s, async () => expectSuccess(await s.as("iago").delete("/users/me/subscriptions", { subscriptions: [name], principals: [s.users.othello.id] })), {
      viewers: ["othello", "hamlet", "iago"],
      registerParams: WITH,
    });
    expect(r.types.othello).toEqual(["subscription/remove", "stream/delete"]);
    expect(r.types.hamlet).toEqual(["subscription/peer_remove"]);
    expect(r.events.iago.filter(ofChannel(id)).map((e: any) => `${e.type}/${e.op}`)).toEqual(["subscription/peer_remove"]);
  });
});

describe("register (FL 362)", () => {
  test("never_subscribed lists archived channels for archived_channels clients only", async () => {
    const { id } = await archivedChannel(["hamlet"]);
    const never = async (params: Record<string, unknown>) => (await register(s.as("cordelia"), params)).never_subscribed.map((c: any) => c.stream_id);
    expect(await never(WITH)).toContain(id);
    expect(await never(WITHOUT)).not.toContain(id);
  });
});

describe("a role change over an archived private channel", () => {
  test("an administrator sees it: stream create and its subscribers for archived_channels clients, nothing for the others", async () => {
    const { id } = await archivedChannel(["hamlet"], { invite_only: true });
    for (const registerParams of [WITH, WITHOUT]) {
      const u = await s.createUser(fresh("promoted").replace(" ", ""));
      const r = await verifyAction(s, async () => expectSuccess(await s.as("iago").patch(`/users/${u.id}`, { role: 200 })), { viewers: ["iago"], registerParams });
      const own = await register(s.as(u), registerParams);
      expect(own.never_subscribed.some((c: any) => c.stream_id === id)).toBe(registerParams === WITH);
      expect(r.events.iago.filter(ofChannel(id))).toEqual([]);
      // The promoted user's own queue, registered before, gets what its state lacks.
      const v = await s.createUser(fresh("promoted").replace(" ", ""));
      const before = await register(s.as(v), registerParams);
      expectSuccess(await s.as("iago").patch(`/users/${v.id}`, { role: 200 }));
      const events = await drainEvents(s.as(v), before.queue_id);
      expect(events.filter(ofChannel(id)).map((e: any) => `${e.type}/${e.op}`)).toEqual(registerParams === WITH ? ["stream/create", "subscription/peer_add"] : []);
      // Its state with those events applied is a fresh register's.
      for (const e of events) applyEvent(before, e);
      expect(normalizeState(before)).toEqual(normalizeState(await register(s.as(v), registerParams)));
    }
  });
});

describe("PATCH /streams/{id} on an archived channel (FL 362)", () => {
  test("name and description change; archived_channels clients get the updates, the others nothing", async () => {
    for (const registerParams of [WITH, WITHOUT]) {
      const { id } = await archivedChannel(["hamlet", "othello"]);
      const renamed = fresh("Loft");
      const r = await verifyAction(s, async () => expectSuccess(await s.as("hamlet").patch(`/streams/${id}`, { new_name: renamed, description: "Old **things**" })), {
        viewers: ["hamlet", "othello", "cordelia"],
        registerParams,
      });
      for (const who of ["hamlet", "othello", "cordelia"]) {
        if (registerParams === WITH) {
          expect(r.events[who].map((e: any) => e.property)).toEqual(["name", "description"]);
          expect(r.events[who][0]).toMatchObject({ type: "stream", op: "update", stream_id: id, value: renamed });
        } else expect(r.events[who]).toEqual([]);
      }
      expect(expectSuccess(await s.as("cordelia").get(`/streams/${id}`)).stream).toMatchObject({ name: renamed, description: "Old **things**", is_archived: true });
    }
  });

  test("public to private: who loses sight gets stream delete, the subscribers the update; only with archived_channels", async () => {
    for (const registerParams of [WITH, WITHOUT]) {
      const { id } = await archivedChannel(["hamlet", "othello"]);
      const r = await verifyAction(s, async () => expectSuccess(await s.as("hamlet").patch(`/streams/${id}`, { is_private: true })), {
        viewers: ["hamlet", "othello", "cordelia", "iago"],
        registerParams,
      });
      if (registerParams === WITH) {
        expect(r.events.hamlet).toMatchObject([{ type: "stream", op: "update", property: "invite_only", value: true, history_public_to_subscribers: false }]);
        expect(r.types.othello).toEqual(["stream/update"]);
        expect(r.types.iago).toEqual(["stream/update"]);
        expect(r.events.cordelia).toMatchObject([{ type: "stream", op: "delete", stream_ids: [id] }]);
      } else {
        expect(r.events).toEqual({ hamlet: [], othello: [], cordelia: [], iago: [] });
      }
      expectError(await s.as("cordelia").get(`/streams/${id}`), 400, "BAD_REQUEST", "Invalid channel ID");
      expect(expectSuccess(await s.as("othello").get(`/streams/${id}`)).stream).toMatchObject({ invite_only: true, is_archived: true });
    }
  });

  test("private to public: who comes into sight gets stream create and the subscribers; a group setting changes too", async () => {
    const { id } = await archivedChannel(["hamlet"], { invite_only: true });
    const r = await verifyAction(s, async () => expectSuccess(await s.as("hamlet").patch(`/streams/${id}`, { is_private: false })), {
      viewers: ["hamlet", "cordelia"],
      registerParams: WITH,
    });
    expect(r.types.cordelia).toEqual(["stream/create", "subscription/peer_add"]);
    expect(r.events.cordelia[0].streams[0]).toMatchObject({ stream_id: id, is_archived: true, invite_only: false });
    const moderators = expectSuccess(await s.as("iago").get("/user_groups")).user_groups.find((g: any) => g.name === "role:moderators").id;
    const g = await verifyAction(s, async () => expectSuccess(await s.as("iago").patch(`/streams/${id}`, { can_remove_subscribers_group: JSON.stringify({ new: moderators }) })), {
      viewers: ["cordelia"],
      registerParams: WITH,
    });
    expect(g.events.cordelia).toMatchObject([{ type: "stream", op: "update", property: "can_remove_subscribers_group", value: moderators }]);
  });

  test("still refused: sending to it, making it a default channel; only its administrators change it", async () => {
    const { id, name } = await archivedChannel(["hamlet", "othello"]);
    expectError(await s.as("othello").post("/messages", { type: "stream", to: id, topic: "t", content: "Anyone?" }), 400, "BAD_REQUEST", /^Not authorized to send to channel/);
    expectError(await s.as("iago").patch(`/streams/${id}`, { is_default_stream: true }), 400, "BAD_REQUEST", "Invalid channel ID");
    expectError(await s.as("othello").patch(`/streams/${id}`, { description: "mine now" }), 400, "BAD_REQUEST", "You do not have permission to administer this channel.");
    expect(expectSuccess(await s.as("hamlet").get("/streams", { exclude_archived: false })).streams.find((c: any) => c.stream_id === id)).toMatchObject({ name, is_archived: true, description: "" });
  });

  test("unarchiving after subscriptions changed while archived: clients without archived_channels learn the current subscribers", async () => {
    const { id, name } = await archivedChannel(["hamlet"]);
    expectSuccess(await s.as("hamlet").post("/users/me/subscriptions", { subscriptions: [{ name }], principals: [s.users.othello.id], send_new_subscription_messages: false }));
    const r = await verifyAction(s, async () => expectSuccess(await s.as("hamlet").patch(`/streams/${id}`, { is_archived: false })), {
      viewers: ["othello", "cordelia"],
      registerParams: WITHOUT,
    });
    expect(r.types.othello).toEqual(["stream/create", "subscription/add"]);
    expect(r.events.cordelia[1]).toMatchObject({ type: "subscription", op: "peer_add", user_ids: [s.users.hamlet.id, s.users.othello.id].sort((a, b) => a - b) });
  });
});
