import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Type as t } from "@sinclair/typebox";
import { expectError, expectSchema, expectSuccess, startTestServer, type TestServer } from "../kit";
import { verifyAction } from "../kit/events";
import { success } from "../../src/schemas/common";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const ChannelFolder = t.Object({
  id: t.Integer(),
  name: t.String(),
  description: t.String(),
  rendered_description: t.String(),
  creator_id: t.Union([t.Integer(), t.Null()]),
  date_created: t.Integer(),
  is_archived: t.Boolean(),
  order: t.Integer(),
});
const viewers = { viewers: ["iago" as const, "hamlet" as const, "polonius" as const] };

describe("channel folders (FL 389)", () => {
  test("administrators create, rename, reorder and archive; everyone follows along", async () => {
    let engineering = 0;
    const r = await verifyAction(
      s,
      async () => {
        engineering = expectSuccess(await s.as("iago").post("/channel_folders/create", { name: "Engineering", description: "**Code** talk" })).channel_folder_id;
      },
      viewers,
    );
    for (const types of Object.values(r.types)) expect(types).toEqual(["channel_folder/add"]);
    const design = expectSuccess(await s.as("iago").post("/channel_folders/create", { name: "Design" })).channel_folder_id;
    const list = expectSuccess(await s.as("hamlet").get("/channel_folders"));
    expectSchema(success({ channel_folders: t.Array(ChannelFolder) }), list);
    expect(list.channel_folders.map((f: any) => [f.name, f.order])).toEqual([["Engineering", 0], ["Design", 1]]);
    expect(list.channel_folders[0].rendered_description).toContain("<strong>Code</strong>");
    await verifyAction(s, () => s.as("iago").patch("/channel_folders", { order: [design, engineering] }), viewers);
    await verifyAction(s, () => s.as("iago").patch(`/channel_folders/${design}`, { name: "UX", description: "new" }), viewers);
    await verifyAction(s, () => s.as("iago").patch(`/channel_folders/${design}`, { is_archived: true }), viewers);
    expect(expectSuccess(await s.as("hamlet").get("/channel_folders")).channel_folders.map((f: any) => f.name)).toEqual(["Engineering"]);
    expect(expectSuccess(await s.as("hamlet").get("/channel_folders", { include_archived: true })).channel_folders.map((f: any) => f.name)).toEqual(["UX", "Engineering"]);
  });

  test("channels go into a folder at creation or later, and out with folder_id=null", async () => {
    const folder = expectSuccess(await s.as("iago").post("/channel_folders/create", { name: "Ops" })).channel_folder_id;
    expectSuccess(await s.as("iago").post("/users/me/subscriptions", { subscriptions: [{ name: "deploys" }], folder_id: folder }));
    const id = expectSuccess(await s.as("iago").get("/get_stream_id", { stream: "deploys" })).stream_id;
    expect(expectSuccess(await s.as("hamlet").get(`/streams/${id}`)).stream.folder_id).toBe(folder);
    const out = await verifyAction(s, () => s.as("iago").patch(`/streams/${id}`, { folder_id: null }), { viewers: ["iago", "hamlet"] });
    expect(out.events.hamlet[0]).toMatchObject({ type: "stream", op: "update", property: "folder_id", value: null });
    expect(expectSuccess(await s.as("hamlet").get(`/streams/${id}`)).stream.folder_id).toBeNull();
    await verifyAction(s, () => s.as("iago").patch(`/streams/${id}`, { folder_id: folder }), { viewers: ["hamlet"] });
    expect(expectSuccess(await s.as("hamlet").get(`/streams/${id}`)).stream.folder_id).toBe(folder);
    expectError(await s.as("iago").patch(`/streams/${id}`, { folder_id: 9999 }), 400, "BAD_REQUEST", "Invalid channel folder ID");
    // A folder with a live channel in it cannot be archived (Zulip's check_channel_folder_in_use).
    expectError(await s.as("iago").patch(`/channel_folders/${folder}`, { is_archived: true }), 400, "BAD_REQUEST", "You need to remove all the channels from this folder to archive it.");
    expectSuccess(await s.as("iago").patch(`/streams/${id}`, { folder_id: null }));
    expectSuccess(await s.as("iago").patch(`/channel_folders/${folder}`, { is_archived: true }));
  });

  test("errors", async () => {
    expectError(await s.as("hamlet").post("/channel_folders/create", { name: "Mine" }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    expectError(await s.as("iago").post("/channel_folders/create", { name: " " }), 400, "BAD_REQUEST");
    expectError(await s.as("iago").post("/channel_folders/create", { name: "x".repeat(61) }), 400, "BAD_REQUEST");
    expectError(await s.as("iago").patch("/channel_folders/9999", { name: "Nope" }), 400, "BAD_REQUEST", "Invalid channel folder ID");
    expectError(await s.as("iago").patch("/channel_folders", { order: [1] }), 400, "BAD_REQUEST", "Invalid order mapping");
  });
});
