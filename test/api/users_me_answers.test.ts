import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, startTestServer, type TestServer } from "../kit";

/**
 * GET /users/me keeps a serialized answer per account (src/views/users.ts,
 * ownUserView): each write that changes what it shows must show at once.
 */
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const me = async () => expectSuccess(await s.as("hamlet").get("/users/me"));

describe("GET /users/me after writes", () => {
  test("max_message_id follows sends, deletions and new rows", async () => {
    await me();
    const channel = await s.createChannel("iago", "answers", ["hamlet", "othello"]);
    const first = expectSuccess(await s.as("othello").post("/messages", { type: "stream", to: channel, topic: "t", content: "one" })).id;
    expect((await me()).max_message_id).toBe(first);
    const second = expectSuccess(await s.as("othello").post("/messages", { type: "stream", to: channel, topic: "t", content: "two" })).id;
    expect((await me()).max_message_id).toBe(second);
    // A message hamlet does not receive leaves it where it was.
    const dm = expectSuccess(await s.as("othello").post("/messages", { type: "private", to: JSON.stringify([s.users.iago.id]), content: "not for hamlet" })).id;
    expect(dm).toBeGreaterThan(second);
    expect((await me()).max_message_id).toBe(second);
    // Deleting the newest brings back the one before.
    expectSuccess(await s.as("iago").delete(`/messages/${second}`));
    expect((await me()).max_message_id).toBe(first);
  });

  test("the account's own fields and profile values", async () => {
    await me();
    expectSuccess(await s.as("hamlet").patch("/settings", { full_name: "Prince Hamlet" }));
    expect((await me()).full_name).toBe("Prince Hamlet");
    const field = expectSuccess(await s.as("iago").post("/realm/profile_fields", { field_type: 1, name: "Answers phone" })).id;
    expect((await me()).profile_data).toEqual({});
    expectSuccess(await s.as("hamlet").patch("/users/me/profile_data", { data: [{ id: field, value: "+45 1" }] }));
    expect((await me()).profile_data).toEqual({ [String(field)]: { value: "+45 1", rendered_value: "<p>+45 1</p>" } });
    expectSuccess(await s.as("hamlet").patch("/users/me/profile_data", { data: [{ id: field, value: "+45 2" }] }));
    expect((await me()).profile_data[String(field)].value).toBe("+45 2");
    expectSuccess(await s.as("iago").delete(`/realm/profile_fields/${field}`));
    expect((await me()).profile_data).toEqual({});
  });
});
