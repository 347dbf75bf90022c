import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectSchema, expectSuccess, recordPublished, startTestServer, type TestServer } from "../kit";
import { GetProfileFieldsResponse, GetUserResponse } from "../../src/schemas/users";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const fields = async () => expectSuccess(await s.as("hamlet").get("/realm/profile_fields")).custom_fields;

describe("custom profile fields", () => {
  test("administrators create fields of every type; everyone reads them; events to all", async () => {
    const published = recordPublished(s);
    const phone = expectSuccess(await s.as("iago").post("/realm/profile_fields", { field_type: 1, name: "Phone", hint: "Work phone", display_in_profile_summary: true }));
    expect(typeof phone.id).toBe("number");
    const team = expectSuccess(
      await s.as("iago").post("/realm/profile_fields", { field_type: 3, name: "Team", field_data: { a: { text: "Backend", order: "1" }, b: { text: "Frontend", order: "2" } } }),
    );
    const github = expectSuccess(await s.as("iago").post("/realm/profile_fields", { field_type: 7, field_data: { subtype: "github" } }));
    expectSuccess(await s.as("iago").post("/realm/profile_fields", { field_type: 4, name: "Birthday" }));
    expectSuccess(await s.as("iago").post("/realm/profile_fields", { field_type: 6, name: "Mentor" }));
    expectSuccess(await s.as("iago").post("/realm/profile_fields", { field_type: 5, name: "Website", editable_by_user: false }));
    const list = expectSuccess(await s.as("hamlet").get("/realm/profile_fields"));
    expectSchema(GetProfileFieldsResponse, list);
    expect(list.custom_fields.map((f: any) => f.name)).toEqual(["Phone", "Team", "GitHub", "Birthday", "Mentor", "Website"]);
    expect(list.custom_fields[1].field_data).toBe(JSON.stringify({ a: { text: "Backend", order: "1" }, b: { text: "Frontend", order: "2" } }));
    expect(list.custom_fields[0]).toMatchObject({ id: phone.id, type: 1, hint: "Work phone", display_in_profile_summary: true, required: false });
    const events = published.ofType("custom_profile_fields");
    expect(events.length).toBe(6);
    expect(events[5].event.fields.length).toBe(6);
    expect(events[5].userIds).toContain(s.users.polonius.id);
    expect(team.id).toBeGreaterThan(phone.id);
    expect(github.id).toBeGreaterThan(team.id);
  });

  test("validation: permissions, types, labels, choices, summary limit", async () => {
    expectError(await s.as("hamlet").post("/realm/profile_fields", { field_type: 1, name: "X" }), 400, "UNAUTHORIZED_PRINCIPAL");
    expectError(await s.as("iago").post("/realm/profile_fields", { field_type: 9, name: "X" }), 400, "BAD_REQUEST", "Invalid field type.");
    expectError(await s.as("iago").post("/realm/profile_fields", { field_type: 1, name: "" }), 400, "BAD_REQUEST", "Label cannot be blank.");
    expectError(await s.as("iago").post("/realm/profile_fields", { field_type: 1, name: "phone" }), 400, "BAD_REQUEST", "A field with that label already exists.");
    expectError(await s.as("iago").post("/realm/profile_fields", { field_type: 3, name: "Empty", field_data: {} }), 400, "BAD_REQUEST", "Field must have at least one choice.");
    expectError(await s.as("iago").post("/realm/profile_fields", { field_type: 2, name: "Bio", display_in_profile_summary: true }), 400, "BAD_REQUEST");
    expectSuccess(await s.as("iago").post("/realm/profile_fields", { field_type: 8, name: "Pronouns", display_in_profile_summary: true }));
    expectError(await s.as("iago").post("/realm/profile_fields", { field_type: 1, name: "Third", display_in_profile_summary: true }), 400, "BAD_REQUEST", "Only 2 custom profile fields can be displayed in the profile summary.");
    expect((await fields()).map((f: any) => f.name)).not.toContain("Third");
  });

  test("users set their values; profile_data appears with include_custom_profile_fields; realm_user events", async () => {
    const byName = Object.fromEntries((await fields()).map((f: any) => [f.name, f]));
    const published = recordPublished(s);
    expectSuccess(
      await s.as("hamlet").patch("/users/me/profile_data", {
        data: [
          { id: byName.Phone.id, value: "+45 1234" },
          { id: byName.Team.id, value: "b" },
          { id: byName.Birthday.id, value: "1600-02-29" },
          { id: byName.Mentor.id, value: [s.users.othello.id] },
        ],
      }),
    );
    const user = expectSuccess(await s.as("othello").get(`/users/${s.users.hamlet.id}`, { include_custom_profile_fields: true }));
    expectSchema(GetUserResponse, user);
    expect(user.user.profile_data).toEqual({
      // Text fields also carry their Markdown rendering, as in Zulip.
      [byName.Phone.id]: { value: "+45 1234", rendered_value: "<p>+45 1234</p>" },
      [byName.Team.id]: { value: "b" },
      [byName.Birthday.id]: { value: "1600-02-29" },
      [byName.Mentor.id]: { value: JSON.stringify([s.users.othello.id]) },
    });
    const updates = published.ofType("realm_user").map((e) => e.event.person);
    expect(updates).toContainEqual({ user_id: s.users.hamlet.id, custom_profile_field: { id: byName.Phone.id, value: "+45 1234", rendered_value: "<p>+45 1234</p>" } });
    expectSuccess(await s.as("hamlet").delete("/users/me/profile_data", { data: [byName.Phone.id] }));
    const after = expectSuccess(await s.as("othello").get(`/users/${s.users.hamlet.id}`, { include_custom_profile_fields: true })).user;
    expect(after.profile_data[byName.Phone.id]).toBeUndefined();
    // A user-type value is cleared the same way.
    expectSuccess(await s.as("hamlet").delete("/users/me/profile_data", { data: [byName.Mentor.id] }));
    expect(expectSuccess(await s.as("othello").get(`/users/${s.users.hamlet.id}`, { include_custom_profile_fields: true })).user.profile_data[byName.Mentor.id]).toBeUndefined();
    // A choice taken away from a select field leaves nobody holding it.
    const team = byName.Team;
    const choices = JSON.parse(team.field_data);
    delete choices.b;
    published.clear();
    expectSuccess(await s.as("iago").patch(`/realm/profile_fields/${team.id}`, { field_data: JSON.stringify(choices) }));
    expect(expectSuccess(await s.as("othello").get(`/users/${s.users.hamlet.id}`, { include_custom_profile_fields: true })).user.profile_data[team.id]).toBeUndefined();
    // Clients hold the value too: it leaves theirs as a null value, to everyone.
    const cleared = published.ofType("realm_user").filter((e) => e.event.person.custom_profile_field?.id === team.id);
    expect(cleared.map((e) => e.event.person)).toEqual([{ user_id: s.users.hamlet.id, custom_profile_field: { id: team.id, value: null } }]);
    expect(cleared[0].userIds).toContain(s.users.othello.id);
  });

  test("bad values are rejected and nothing is written", async () => {
    const byName = Object.fromEntries((await fields()).map((f: any) => [f.name, f]));
    const cases: [number, unknown, string | RegExp][] = [
      [byName.Team.id, "zzz", "'zzz' is not a valid choice for 'Team'."],
      [byName.Birthday.id, "1601-02-29", "Birthday is not a date"],
      [byName.Mentor.id, [99999], "Invalid user ID: 99999"],
      [byName.Phone.id, "x".repeat(51), "Phone is too long (limit: 50 characters)"],
      [99999, "x", "Field id 99999 not found."],
    ];
    for (const [id, value, msg] of cases) {
      expectError(await s.as("cordelia").patch("/users/me/profile_data", { data: [{ id: byName.Pronouns.id, value: "she/her" }, { id, value }] }), 400, "BAD_REQUEST", msg);
    }
    expectError(await s.as("cordelia").patch("/users/me/profile_data", { data: [{ id: byName.Website.id, value: "https://x.test" }] }), 400, "BAD_REQUEST");
    const cordelia = expectSuccess(await s.as("hamlet").get(`/users/${s.users.cordelia.id}`, { include_custom_profile_fields: true })).user;
    expect(cordelia.profile_data).toEqual({});
  });

  test("administrators set others' values through PATCH /users/{id}, atomically with name changes", async () => {
    const byName = Object.fromEntries((await fields()).map((f: any) => [f.name, f]));
    expectError(
      await s.as("iago").patch(`/users/${s.users.cordelia.id}`, { full_name: "Should not stick", profile_data: [{ id: byName.Website.id, value: "not a url" }] }),
      400,
      "BAD_REQUEST",
      "Website is not a URL",
    );
    expect(expectSuccess(await s.as("hamlet").get(`/users/${s.users.cordelia.id}`)).user.full_name).toBe("Cordelia, Lear's daughter");
    expectSuccess(await s.as("iago").patch(`/users/${s.users.cordelia.id}`, { profile_data: [{ id: byName.Website.id, value: "https://cordelia.test" }] }));
    expectError(await s.as("hamlet").patch(`/users/${s.users.cordelia.id}`, { profile_data: [{ id: byName.Website.id, value: "https://h.test" }] }), 400, "UNAUTHORIZED_PRINCIPAL");
    const u = expectSuccess(await s.as("hamlet").get(`/users/${s.users.cordelia.id}`, { include_custom_profile_fields: true })).user;
    expect(u.profile_data[byName.Website.id]).toEqual({ value: "https://cordelia.test" });
  });

  test("reorder, rename, delete", async () => {
    const current = await fields();
    const reversed = current.map((f: any) => f.id).reverse();
    expectError(await s.as("iago").patch("/realm/profile_fields", { order: reversed.slice(1) }), 400, "BAD_REQUEST", "Invalid order mapping.");
    expectSuccess(await s.as("iago").patch("/realm/profile_fields", { order: reversed }));
    expect((await fields()).map((f: any) => f.id)).toEqual(reversed);
    expectSuccess(await s.as("iago").patch(`/realm/profile_fields/${reversed[0]}`, { name: "Homepage", hint: "Your site" }));
    expect((await fields())[0]).toMatchObject({ name: "Homepage", hint: "Your site" });
    const choice = (await fields()).find((f: any) => f.type === 3);
    expectError(await s.as("iago").patch(`/realm/profile_fields/${choice.id}`, { use_for_user_matching: true }), 400, "BAD_REQUEST", "Only short text and external account fields can be used for user matching.");
    expect((await fields()).find((f: any) => f.id === choice.id).use_for_user_matching).toBeUndefined();
    expectSuccess(await s.as("iago").delete(`/realm/profile_fields/${reversed[0]}`));
    expectError(await s.as("iago").delete(`/realm/profile_fields/${reversed[0]}`), 400, "BAD_REQUEST");
    const u = expectSuccess(await s.as("hamlet").get(`/users/${s.users.cordelia.id}`, { include_custom_profile_fields: true })).user;
    expect(u.profile_data[reversed[0]]).toBeUndefined();
  });
});
