import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Type as t } from "@sinclair/typebox";
import { expectError, expectSchema, expectSuccess, startTestServer, type TestServer } from "../kit";
import { register, verifyAction } from "../kit/events";
import { DefaultStreamGroup } from "../../src/schemas/channels";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const viewers = { viewers: ["iago" as const, "hamlet" as const, "polonius" as const] };

async function createChannel(name: string, params: Record<string, unknown> = {}): Promise<number> {
  expectSuccess(await s.as("iago").post("/users/me/subscriptions", { subscriptions: [{ name }], ...params }));
  return expectSuccess(await s.as("iago").get("/get_stream_id", { stream: name })).stream_id;
}

async function groupsSeenBy(who: "iago" | "hamlet" | "polonius") {
  const state = await register(s.as(who), { fetch_event_types: ["default_stream_groups"] });
  expectSchema(t.Array(DefaultStreamGroup), state.realm_default_stream_groups);
  return state.realm_default_stream_groups as { id: number; name: string; description: string; streams: number[] }[];
}

describe("default channel groups (Zulip's default stream groups)", () => {
  test("administrators create, rename, fill and delete groups; non-guests follow along, guests see none", async () => {
    const zebra = await createChannel("dcg zebra");
    const apple = await createChannel("dcg apple");
    const mango = await createChannel("dcg mango");
    const created = await verifyAction(
      s,
      async () => expectSuccess(await s.as("iago").post("/default_stream_groups/create", { group_name: "Tech", description: "Code", stream_names: ["dcg zebra", "dcg apple"] })),
      viewers,
    );
    expect(created.types.iago).toEqual(["default_stream_groups"]);
    expect(created.types.hamlet).toEqual(["default_stream_groups"]);
    expect(created.types.polonius).toEqual([]);
    let groups = await groupsSeenBy("hamlet");
    const tech = groups.find((g) => g.name === "Tech")!;
    // Channels in name order, as IDs (FL 330).
    expect(tech).toEqual({ name: "Tech", id: tech.id, description: "Code", streams: [apple, zebra] });
    expect(await groupsSeenBy("polonius")).toEqual([]);

    expectSuccess(await s.as("iago").post("/default_stream_groups/create", { group_name: "Arts", description: "", stream_names: [] }));
    // Groups in name order.
    expect((await groupsSeenBy("iago")).map((g) => g.name)).toEqual(["Arts", "Tech"]);

    await verifyAction(s, () => s.as("iago").patch(`/default_stream_groups/${tech.id}`, { new_group_name: "Engineering", new_description: "All code" }), viewers);
    await verifyAction(s, () => s.as("iago").patch(`/default_stream_groups/${tech.id}/streams`, { op: "add", stream_names: ["dcg mango"] }), viewers);
    await verifyAction(s, () => s.as("iago").patch(`/default_stream_groups/${tech.id}/streams`, { op: "remove", stream_names: ["dcg zebra"] }), viewers);
    groups = await groupsSeenBy("hamlet");
    expect(groups.find((g) => g.id === tech.id)).toEqual({ name: "Engineering", id: tech.id, description: "All code", streams: [apple, mango] });

    await verifyAction(s, () => s.as("iago").delete(`/default_stream_groups/${tech.id}`), viewers);
    expect((await groupsSeenBy("hamlet")).map((g) => g.name)).toEqual(["Arts"]);
  });

  test("Zulip's errors, and nothing written by a refused request", async () => {
    await createChannel("dcg errors");
    const defaultId = await createChannel("dcg default", { is_default_stream: true });
    expect(defaultId).toBeGreaterThan(0);
    const create = (params: Record<string, unknown>) => s.as("iago").post("/default_stream_groups/create", { group_name: "Err", description: "", stream_names: ["dcg errors"], ...params });
    expectError(await s.as("hamlet").post("/default_stream_groups/create", { group_name: "X", description: "", stream_names: [] }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    expectError(await create({ group_name: "   " }), 400, "BAD_REQUEST", "Invalid default channel group name '   '");
    expectError(await create({ group_name: "x".repeat(61) }), 400, "BAD_REQUEST", "Default channel group name too long (limit: 60 characters)");
    expectError(await create({ stream_names: ["dcg nowhere"] }), 400, "BAD_REQUEST", "Invalid channel name 'dcg nowhere'");
    expectError(await create({ stream_names: ["dcg default"] }), 400, "BAD_REQUEST", "'dcg default' is a default channel and cannot be added to 'Err'");
    expectError(await create({ stream_names: "not json" }), 400, "BAD_REQUEST");
    expect((await groupsSeenBy("iago")).some((g) => g.name === "Err")).toBe(false);

    expectSuccess(await create({}));
    expectError(await create({}), 400, "BAD_REQUEST", "Default channel group 'Err' already exists");
    const err = (await groupsSeenBy("iago")).find((g) => g.name === "Err")!;
    expectError(await s.as("iago").patch(`/default_stream_groups/${err.id}`, {}), 400, "BAD_REQUEST", 'You must pass "new_description" or "new_group_name".');
    expectError(await s.as("iago").patch(`/default_stream_groups/${err.id}`, { new_group_name: "Err" }), 400, "BAD_REQUEST", "This default channel group is already named 'Err'");
    expectError(await s.as("iago").patch("/default_stream_groups/99999", { new_group_name: "Y" }), 400, "BAD_REQUEST", "Default channel group with id '99999' does not exist.");
    expectError(await s.as("iago").patch(`/default_stream_groups/${err.id}/streams`, { op: "add", stream_names: ["dcg errors"] }), 400, "BAD_REQUEST", "Channel 'dcg errors' is already present in default channel group 'Err'");
    expectError(await s.as("iago").patch(`/default_stream_groups/${err.id}/streams`, { op: "remove", stream_names: ["dcg default"] }), 400, "BAD_REQUEST", "Channel 'dcg default' is not present in default channel group 'Err'");
    expectError(await s.as("iago").patch(`/default_stream_groups/${err.id}/streams`, { op: "swap", stream_names: [] }), 400, "BAD_REQUEST", 'Invalid value for "op". Specify one of "add" or "remove".');
    expectError(await s.as("hamlet").delete(`/default_stream_groups/${err.id}`), 400, "UNAUTHORIZED_PRINCIPAL");
    expectError(await s.as("iago").delete("/default_stream_groups/abc"), 400, "BAD_REQUEST", "Invalid group ID");
    expect((await groupsSeenBy("iago")).find((g) => g.id === err.id)).toEqual(err);
  });

  test("an archived channel leaves every group, announced to non-guests", async () => {
    const keep = await createChannel("dcg keep");
    const gone = await createChannel("dcg gone");
    expectSuccess(await s.as("iago").post("/default_stream_groups/create", { group_name: "Archive test", description: "", stream_names: ["dcg keep", "dcg gone"] }));
    const r = await verifyAction(s, () => s.as("iago").delete(`/streams/${gone}`), viewers);
    expect(r.types.hamlet).toContain("default_stream_groups");
    expect(r.types.polonius).not.toContain("default_stream_groups");
    expect((await groupsSeenBy("hamlet")).find((g) => g.name === "Archive test")!.streams).toEqual([keep]);
  });

  test("the default_streams event lists channel IDs, as register does at this feature level", async () => {
    const id = await createChannel("dcg becomes default");
    const r = await verifyAction(s, () => s.as("iago").patch(`/streams/${id}`, { is_default_stream: true }), viewers);
    const event = r.events.hamlet.find((e: any) => e.type === "default_streams")!;
    expect(event.default_streams).toContain(id);
    expect(event.default_streams.every((x: unknown) => typeof x === "number")).toBe(true);
  });
});
