import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectSuccess, startTestServer, type TestServer } from "../kit";
import { register, verifyAction } from "../kit/events";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

let n = 0;
const fresh = (base: string) => `${base} ${++n}`;

async function archivedChannel(members: ("hamlet" | "othello" | "cordelia")[]): Promise<number> {
  const id = await s.createChannel("hamlet", fresh("Phoenix"), members);
  expectSuccess(await s.as("hamlet").delete(`/streams/${id}`));
  return id;
}

describe("PATCH /streams/{id} is_archived=false (FL 388)", () => {
  test("clients without archived_channels get the channel anew: stream create, and subscribers their subscription", async () => {
    const id = await archivedChannel(["hamlet", "othello"]);
    const r = await verifyAction(s, async () => expectSuccess(await s.as("hamlet").patch(`/streams/${id}`, { is_archived: false })), {
      viewers: ["hamlet", "othello", "cordelia"],
      registerParams: { include_subscribers: true },
    });
    expect(r.types.hamlet).toEqual(["stream/create", "subscription/add"]);
    expect(r.types.othello).toEqual(["stream/create", "subscription/add"]);
    expect(r.types.cordelia).toEqual(["stream/create", "subscription/peer_add"]);
    expect(r.events.othello[1].subscriptions[0]).toMatchObject({ stream_id: id, is_archived: false, subscribers: [s.users.hamlet.id, s.users.othello.id].sort((a, b) => a - b) });
    const channel = expectSuccess(await s.as("cordelia").get(`/streams/${id}`)).stream;
    expect(channel.is_archived).toBe(false);
    expect(expectSuccess(await s.as("cordelia").get("/streams")).streams.map((c: any) => c.stream_id)).toContain(id);
    // Its subscribers can post again.
    expectSuccess(await s.as("othello").post("/messages", { type: "stream", to: id, topic: "back", content: "We are back." }));
  });

  test("clients with archived_channels get stream update is_archived false, nothing else", async () => {
    const id = await archivedChannel(["hamlet", "cordelia"]);
    const r = await verifyAction(s, async () => expectSuccess(await s.as("hamlet").patch(`/streams/${id}`, { is_archived: false })), {
      viewers: ["hamlet", "cordelia", "othello"],
      registerParams: { client_capabilities: { archived_channels: true } },
    });
    for (const who of ["hamlet", "cordelia", "othello"]) {
      expect(r.events[who]).toMatchObject([{ type: "stream", op: "update", stream_id: id, property: "is_archived", value: false }]);
    }
    const state = await register(s.as("cordelia"), { client_capabilities: { archived_channels: true } });
    expect(state.subscriptions.find((c: any) => c.stream_id === id).is_archived).toBe(false);
  });

  test("only channel administrators; a live channel is not archived; true archives; other changes apply after unarchiving", async () => {
    const id = await archivedChannel(["hamlet"]);
    expectError(await s.as("othello").patch(`/streams/${id}`, { is_archived: false }), 400, "BAD_REQUEST", "You do not have permission to administer this channel.");
    // An archived channel takes other changes too (FL 362), and stays archived.
    expectSuccess(await s.as("hamlet").patch(`/streams/${id}`, { description: "still archived" }));
    expect(expectSuccess(await s.as("hamlet").get(`/streams/${id}`)).stream).toMatchObject({ is_archived: true, description: "still archived" });
    expectSuccess(await s.as("hamlet").patch(`/streams/${id}`, { is_archived: false, description: "revived" }));
    expect(expectSuccess(await s.as("hamlet").get(`/streams/${id}`)).stream).toMatchObject({ is_archived: false, description: "revived" });
    expectError(await s.as("hamlet").patch(`/streams/${id}`, { is_archived: false }), 400, "BAD_REQUEST", "Channel is not archived");
    expectSuccess(await s.as("hamlet").patch(`/streams/${id}`, { is_archived: true }));
    expect(expectSuccess(await s.as("hamlet").get(`/streams/${id}`)).stream.is_archived).toBe(true);
    // Administrators may unarchive any channel they can administer.
    expectSuccess(await s.as("iago").patch(`/streams/${id}`, { is_archived: false }));
  });
});

describe("deactivating a user subscribed to archived channels (FL 377, 428)", () => {
  test("peer_remove reaches the viewers of the archived channel that keep archived channels; state and events agree with and without archived_channels", async () => {
    const leaver = await s.createUser("leaver");
    const id = await s.createChannel("hamlet", fresh("Attic"), ["hamlet", "othello"]);
    expectSuccess(await s.as("hamlet").post("/users/me/subscriptions", { subscriptions: [{ name: expectSuccess(await s.as("hamlet").get(`/streams/${id}`)).stream.name }], principals: [leaver.id] }));
    expectSuccess(await s.as("hamlet").delete(`/streams/${id}`));
    for (const registerParams of [{ client_capabilities: { archived_channels: true }, include_subscribers: true }, { include_subscribers: true }]) {
      const r = await verifyAction(s, async () => {
        // Deactivated, then back, so the second round deactivates again.
        if (registerParams.client_capabilities) expectSuccess(await s.as("iago").delete(`/users/${leaver.id}`));
        else expectSuccess(await s.as("iago").post(`/users/${leaver.id}/reactivate`));
      }, { viewers: ["othello"], registerParams });
      const peers = r.events.othello.filter((e: any) => e.type === "subscription" && e.stream_ids.includes(id));
      // A client without the capability was told the channel is gone: nothing about it.
      expect(peers).toMatchObject(registerParams.client_capabilities ? [{ op: "peer_remove", user_ids: [leaver.id] }] : []);
    }
  });
});
