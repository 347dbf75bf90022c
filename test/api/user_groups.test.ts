import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiClient, expectError, expectSchema, expectSuccess, startTestServer, type CastName, type Params, type TestServer } from "../kit";
import { verifyAction } from "../kit/events";
import { CreateUserGroupResponse, GroupInUseError, IsUserGroupMemberResponse, UserGroupMembersResponse, UserGroupsResponse, UserGroupSubgroupsResponse } from "../../src/schemas/user_groups";
import { SuccessEnvelope } from "../../src/schemas/common";
import { getRealm, putRealm } from "../../src/store/realm";
import { runZulipJs } from "../clients/zulip-js";

let s: TestServer;
let systemGroup: (name: string) => number;
beforeAll(async () => {
  s = await startTestServer();
  const groups = expectSuccess(await s.as("hamlet").get("/user_groups")).user_groups;
  systemGroup = (name) => groups.find((g: any) => g.name === name).id;
});
afterAll(() => s.stop());

const EVERYONE: CastName[] = ["desdemona", "iago", "shiva", "hamlet", "othello", "cordelia", "polonius"];
/** Register parameters of a client that knows deactivated groups. */
const WITH_DEACTIVATED = {
  client_capabilities: { user_settings_object: true, bulk_message_deletion: true, empty_topic_name: true, include_deactivated_groups: true },
};

let counter = 0;
const fresh = (prefix: string) => `${prefix}${++counter}`;
const id = (who: CastName) => s.users[who].id;

async function createGroup(who: CastName, params: Params = {}): Promise<number> {
  const body = expectSuccess(await s.as(who).post("/user_groups/create", { name: fresh("group"), description: "", members: [], ...params }));
  expectSchema(CreateUserGroupResponse, body);
  return body.group_id;
}

async function groupView(groupId: number): Promise<any> {
  const body = expectSuccess(await s.as("desdemona").get("/user_groups", { include_deactivated_groups: true }));
  return body.user_groups.find((g: any) => g.id === groupId);
}

const sameForAll = (r: { types: Record<string, string[]> }, types: string[], who: CastName[] = EVERYONE) => {
  for (const v of who) expect({ v, types: r.types[v] }).toEqual({ v, types });
};

describe("creating groups", () => {
  test("POST /user_groups/create: every user hears `add`; Zulip's defaults; GET /user_groups shows it", async () => {
    const name = fresh("Readers");
    let groupId = 0;
    const r = await verifyAction(s, async () => {
      const body = expectSuccess(await s.as("hamlet").post("/user_groups/create", { name, description: "Those who read", members: [id("hamlet"), id("othello")] }));
      groupId = body.group_id;
    });
    sameForAll(r, ["user_group/add"]);
    const group = await groupView(groupId);
    expect(group).toMatchObject({
      name,
      description: "Those who read",
      members: [id("hamlet"), id("othello")].sort((a, b) => a - b),
      direct_subgroup_ids: [],
      is_system_group: false,
      creator_id: id("hamlet"),
      deactivated: false,
      // Zulip's GROUP_PERMISSION_SETTINGS defaults: the creator manages and adds.
      can_manage_group: { direct_members: [id("hamlet")], direct_subgroups: [] },
      can_add_members_group: { direct_members: [id("hamlet")], direct_subgroups: [] },
      can_join_group: systemGroup("role:nobody"),
      can_leave_group: systemGroup("role:everyone"),
      can_mention_group: systemGroup("role:everyone"),
      can_remove_members_group: systemGroup("role:nobody"),
    });
    expect(typeof group.date_created).toBe("number");
    expectSchema(UserGroupsResponse, expectSuccess(await s.as("polonius").get("/user_groups")));
  });

  test("settings and subgroups at creation; an anonymous group of one subgroup is stored as its ID", async () => {
    const sub = await createGroup("hamlet");
    const groupId = await createGroup("othello", {
      subgroups: [sub],
      can_mention_group: { direct_members: [], direct_subgroups: [systemGroup("role:moderators")] },
      can_join_group: systemGroup("role:members"),
      can_manage_group: { direct_members: [id("cordelia")], direct_subgroups: [systemGroup("role:administrators")] },
    });
    expect(await groupView(groupId)).toMatchObject({
      direct_subgroup_ids: [sub],
      can_mention_group: systemGroup("role:moderators"),
      can_join_group: systemGroup("role:members"),
      can_manage_group: { direct_members: [id("cordelia")], direct_subgroups: [systemGroup("role:administrators")] },
    });
  });

  test("errors: guests, names, users, forbidden system groups, deactivated subgroups; nothing written", async () => {
    const post = (who: CastName, params: Params) => s.as(who).post("/user_groups/create", { name: fresh("bad"), description: "", members: [], ...params });
    expectError(await post("polonius", {}), 400, "BAD_REQUEST", "Not allowed for guest users");
    const taken = fresh("Taken");
    await createGroup("hamlet", { name: taken });
    expectError(await post("hamlet", { name: taken.toUpperCase() }), 400, "BAD_REQUEST", `User group '${taken.toUpperCase()}' already exists.`);
    expectError(await post("hamlet", { name: "role:fake" }), 400, "BAD_REQUEST", "User group name cannot start with 'role:'.");
    expectError(await post("hamlet", { name: "@x" }), 400, "BAD_REQUEST", "User group name cannot start with '@'.");
    expectError(await post("hamlet", { name: "  " }), 400, "BAD_REQUEST", "User group name can't be empty!");
    expectError(await post("hamlet", { name: "x".repeat(101) }), 400, "BAD_REQUEST", "User group name cannot exceed 100 characters.");
    expectError(await post("hamlet", { members: [999999] }), 400, "BAD_REQUEST", "Invalid user ID: 999999");
    expectError(await post("hamlet", { can_manage_group: systemGroup("role:everyone") }), 400, "BAD_REQUEST", "'can_manage_group' setting cannot be set to 'role:everyone' group.");
    expectError(await post("hamlet", { can_manage_group: systemGroup("role:internet") }), 400, "BAD_REQUEST", "'can_manage_group' setting cannot be set to 'role:internet' group.");
    expectError(await post("hamlet", { can_mention_group: systemGroup("role:owners") }), 400, "BAD_REQUEST", "'can_mention_group' setting cannot be set to 'role:owners' group.");
    expectError(await post("hamlet", { can_mention_group: systemGroup("role:internet") }), 400, "BAD_REQUEST", "'can_mention_group' setting cannot be set to 'role:internet' group.");
    expectError(await post("hamlet", { members: "[1" }), 400, "BAD_REQUEST", 'Argument "members" is not valid JSON.');
    expectError(await s.as("hamlet").post("/user_groups/create", { name: fresh("x"), description: "" }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'members' argument");
    const gone = await createGroup("hamlet");
    expectSuccess(await s.as("hamlet").post(`/user_groups/${gone}/deactivate`));
    expectError(await post("hamlet", { subgroups: [gone] }), 400, "BAD_REQUEST", `Invalid user group ID: ${gone}`);
    expectError(await post("hamlet", { can_mention_group: gone }), 400, "BAD_REQUEST", "Invalid user group");
  });
});

describe("updating groups", () => {
  test("PATCH name, description and a setting: one `update` with the changed fields, to every user", async () => {
    const groupId = await createGroup("hamlet");
    const name = fresh("Renamed");
    const r = await verifyAction(s, async () => {
      expectSchema(
        SuccessEnvelope,
        expectSuccess(
          await s.as("hamlet").patch(`/user_groups/${groupId}`, {
            name,
            description: "new words",
            can_mention_group: { new: systemGroup("role:members"), old: systemGroup("role:everyone") },
            // `old` may spell a group ID as an anonymous group of that subgroup; an unchanged value sends nothing.
            can_leave_group: { new: systemGroup("role:everyone"), old: { direct_members: [], direct_subgroups: [systemGroup("role:everyone")] } },
          }),
        ),
      );
    });
    sameForAll(r, ["user_group/update"]);
    expect(r.events.othello[0].data).toEqual({ name, description: "new words", can_mention_group: systemGroup("role:members") });
  });

  test("PATCH errors: old mismatch, no data, invalid group, system groups, forbidden values; nothing written", async () => {
    const groupId = await createGroup("hamlet");
    const patch = (who: CastName, params: Params, gid = groupId) => s.as(who).patch(`/user_groups/${gid}`, params);
    expectError(
      await patch("hamlet", { can_mention_group: { new: systemGroup("role:members"), old: systemGroup("role:nobody") } }),
      400,
      "BAD_REQUEST",
      "'old' value does not match the expected value.",
    );
    expectError(await patch("hamlet", {}), 400, "BAD_REQUEST", "No new data supplied");
    expectError(await patch("hamlet", { name: "x" }, 999999), 400, "BAD_REQUEST", "Invalid user group");
    expectError(await patch("desdemona", { name: "x" }, systemGroup("role:members")), 400, "BAD_REQUEST", "Insufficient permission");
    expectError(await patch("hamlet", { can_manage_group: { new: systemGroup("role:everyone") } }), 400, "BAD_REQUEST", "'can_manage_group' setting cannot be set to 'role:everyone' group.");
    expectError(await patch("hamlet", { can_mention_group: { new: systemGroup("role:owners") } }), 400, "BAD_REQUEST", "'can_mention_group' setting cannot be set to 'role:owners' group.");
    expectError(await patch("hamlet", { can_mention_group: systemGroup("role:owners") }), 400, "BAD_REQUEST", "can_mention_group is not a dict");
    expect((await groupView(groupId)).can_mention_group).toBe(systemGroup("role:everyone"));
  });

  test("permission matrix: guest, member, moderator, administrator, owner (can_manage_all_groups), group managers", async () => {
    const groupId = await createGroup("hamlet");
    const rename = (who: CastName) => s.as(who).patch(`/user_groups/${groupId}`, { description: fresh("by " + who) });
    expectError(await rename("polonius"), 400, "BAD_REQUEST", "Not allowed for guest users");
    expectError(await rename("othello"), 400, "BAD_REQUEST", "Insufficient permission");
    expectError(await rename("shiva"), 400, "BAD_REQUEST", "Insufficient permission");
    // Zulip's can_manage_all_groups defaults to owners: administrators manage only groups that name them.
    expectError(await rename("iago"), 400, "BAD_REQUEST", "Insufficient permission");
    expectSuccess(await rename("desdemona"));
    expectSuccess(await rename("hamlet"));
    expectSuccess(await s.as("hamlet").patch(`/user_groups/${groupId}`, { can_manage_group: { new: systemGroup("role:administrators") } }));
    expectSuccess(await rename("iago"));
    expectError(await rename("hamlet"), 400, "BAD_REQUEST", "Insufficient permission");
    // Bots may change groups from FL 496.
    const bot = expectSuccess(await s.as("hamlet").post("/bots", { full_name: "Group bot", short_name: fresh("groupbot") }));
    const botClient = new ApiClient(s.url, expectSuccess(await s.as("hamlet").get(`/users/${bot.user_id}`)).user.email, bot.api_key);
    // A member-role bot: its own permissions, like any member's.
    expectError(await botClient.patch(`/user_groups/${groupId}`, { description: "bot" }), 400, "BAD_REQUEST", "Insufficient permission");
    const botGroup = expectSuccess(await botClient.post("/user_groups/create", { name: fresh("b"), description: "", members: [bot.user_id] })).group_id;
    expectSuccess(await botClient.patch(`/user_groups/${botGroup}`, { description: "by a bot" }));
    expectSuccess(await botClient.post(`/user_groups/${botGroup}/members`, { add: [id("othello")] }));
    expect(expectSuccess(await botClient.get(`/user_groups/${botGroup}/members`)).members.sort()).toEqual([bot.user_id, id("othello")].sort());
    expect(expectSuccess(await botClient.get("/user_groups")).user_groups.some((g: any) => g.id === botGroup)).toBe(true);
    // Creating follows the realm's can_create_groups (members by default).
    expectSuccess(await s.as("cordelia").post("/user_groups/create", { name: fresh("c"), description: "", members: [] }));
  });
});

describe("deactivation and reactivation", () => {
  test("clients without include_deactivated_groups get remove / add; others update; renames reach only the latter", async () => {
    const groupId = await createGroup("hamlet", { members: [id("othello")] });
    // Without the capability: the group disappears, then comes back.
    let r = await verifyAction(s, async () => expectSuccess(await s.as("hamlet").post(`/user_groups/${groupId}/deactivate`)));
    sameForAll(r, ["user_group/remove"]);
    const visible = expectSuccess(await s.as("hamlet").get("/user_groups")).user_groups.map((g: any) => g.id);
    expect(visible).not.toContain(groupId);
    expect((await groupView(groupId)).deactivated).toBe(true);
    // Deactivating again changes nothing.
    r = await verifyAction(s, async () => expectSuccess(await s.as("hamlet").post(`/user_groups/${groupId}/deactivate`)), { viewers: ["othello"] });
    expect(r.types.othello).toEqual([]);
    // Renames, settings and members of a deactivated group: nothing for these clients.
    r = await verifyAction(s, async () => {
      expectSuccess(await s.as("hamlet").patch(`/user_groups/${groupId}`, { name: fresh("Sleeping"), can_join_group: { new: systemGroup("role:members") } }));
      expectSuccess(await s.as("hamlet").post(`/user_groups/${groupId}/members`, { add: [id("cordelia")] }));
    });
    sameForAll(r, []);
    // deactivated=true is a no-op; false reactivates.
    r = await verifyAction(s, async () => expectSuccess(await s.as("hamlet").patch(`/user_groups/${groupId}`, { deactivated: true })), { viewers: ["othello"] });
    expect(r.types.othello).toEqual([]);
    r = await verifyAction(s, async () => expectSuccess(await s.as("hamlet").patch(`/user_groups/${groupId}`, { deactivated: false })));
    sameForAll(r, ["user_group/add"]);
    expect(r.events.cordelia[0].group.members).toEqual([id("othello"), id("cordelia")].sort((a, b) => a - b));

    // With the capability: updates all along.
    r = await verifyAction(s, async () => expectSuccess(await s.as("hamlet").post(`/user_groups/${groupId}/deactivate`)), { registerParams: WITH_DEACTIVATED });
    sameForAll(r, ["user_group/update"]);
    expect(r.events.othello[0].data).toEqual({ deactivated: true });
    r = await verifyAction(
      s,
      async () => {
        expectSuccess(await s.as("hamlet").patch(`/user_groups/${groupId}`, { name: fresh("Dormant") }));
        expectSuccess(await s.as("hamlet").post(`/user_groups/${groupId}/members`, { delete: [id("cordelia")] }));
      },
      { registerParams: WITH_DEACTIVATED },
    );
    sameForAll(r, ["user_group/update", "user_group/remove_members"]);
    // Deactivated groups are unusable in permissions until reactivated.
    const other = await createGroup("hamlet");
    expectError(await s.as("hamlet").patch(`/user_groups/${other}`, { can_mention_group: { new: groupId } }), 400, "BAD_REQUEST", "Invalid user group");
    expectError(await s.as("hamlet").post(`/user_groups/${other}/subgroups`, { add: [groupId] }), 400, "BAD_REQUEST", `Invalid user group ID: ${groupId}`);
    r = await verifyAction(s, async () => expectSuccess(await s.as("hamlet").patch(`/user_groups/${groupId}`, { deactivated: false })), { registerParams: WITH_DEACTIVATED });
    sameForAll(r, ["user_group/update"]);
    expect(r.events.othello[0].data).toEqual({ deactivated: false });
  });

  test("CANNOT_DEACTIVATE_GROUP_IN_USE names every use; permission and invalid-group errors", async () => {
    const used = await createGroup("hamlet");
    const user = await createGroup("hamlet", { can_mention_group: { direct_members: [id("iago")], direct_subgroups: [used] } });
    const channel = fresh("Guarded");
    expectSuccess(await s.as("hamlet").post("/users/me/subscriptions", { subscriptions: [{ name: channel }], can_remove_subscribers_group: used }));
    const channelId = expectSuccess(await s.as("hamlet").get("/get_stream_id", { stream: channel })).stream_id;
    const body = expectError(await s.as("hamlet").post(`/user_groups/${used}/deactivate`), 400, "CANNOT_DEACTIVATE_GROUP_IN_USE", "Cannot deactivate user group in use.");
    expectSchema(GroupInUseError, body);
    expect(body.objections).toEqual([
      { type: "channel", channel_id: channelId, settings: ["can_remove_subscribers_group"] },
      { type: "user_group", group_id: user, settings: ["can_mention_group"] },
    ]);
    expect((await groupView(used)).deactivated).toBe(false);
    // Organization settings count too (no endpoint sets them to user groups yet: written through the store).
    const store = s.server.h.store;
    const realmUsed = await createGroup("hamlet");
    await store.commit(() => {
      const realm = getRealm(store)!;
      putRealm(store, { ...realm, settings: { ...realm.settings, can_create_groups: { direct_members: [], direct_subgroups: [realmUsed, systemGroup("role:administrators")] } } });
    });
    const realmBody = expectError(await s.as("hamlet").post(`/user_groups/${realmUsed}/deactivate`), 400, "CANNOT_DEACTIVATE_GROUP_IN_USE");
    expect(realmBody.objections).toEqual([{ type: "realm", settings: ["can_create_groups"] }]);
    await store.commit(() => {
      const realm = getRealm(store)!;
      const { can_create_groups: _, ...rest } = realm.settings as Record<string, unknown>;
      putRealm(store, { ...realm, settings: rest });
    });
    expectSuccess(await s.as("hamlet").post(`/user_groups/${realmUsed}/deactivate`));
    expectError(await s.as("othello").post(`/user_groups/${user}/deactivate`), 400, "BAD_REQUEST", "Insufficient permission");
    expectError(await s.as("polonius").post(`/user_groups/${user}/deactivate`), 400, "BAD_REQUEST", "Not allowed for guest users");
    expectError(await s.as("desdemona").post(`/user_groups/${systemGroup("role:members")}/deactivate`), 400, "BAD_REQUEST", "Insufficient permission");
    expectError(await s.as("hamlet").post("/user_groups/999999/deactivate"), 400, "BAD_REQUEST", "Invalid user group");
    expectError(await s.as("hamlet").post("/user_groups/abc/deactivate"), 400, "BAD_REQUEST", "Invalid user group");
    expectError(await s.as("hamlet").get("/user_groups/abc/members"), 400, "BAD_REQUEST", "Invalid user group");
    expectError(await s.as("hamlet").get(`/user_groups/${user}/members/abc`), 400, "BAD_REQUEST", "Invalid user ID");
  });

  test("DELETE /user_groups/{id} was removed at FL 294: 405 with the allowed method, as Zulip's router answers", async () => {
    const groupId = await createGroup("hamlet");
    const res = await s.as("hamlet").delete(`/user_groups/${groupId}`);
    expect(res.status).toBe(405);
    expect(res.body).toMatchObject({ result: "error", msg: "Method Not Allowed", allowed_methods: ["PATCH"] });
    expect(res.headers.get("allow")).toBe("PATCH");
    expect((await groupView(groupId)).deactivated).toBe(false);
  });
});

describe("members and subgroups", () => {
  test("POST members add/delete: add_members / remove_members to every user", async () => {
    const groupId = await createGroup("hamlet");
    const r = await verifyAction(s, async () => {
      expectSuccess(await s.as("hamlet").post(`/user_groups/${groupId}/members`, { add: [id("othello"), id("polonius")] }));
      expectSuccess(await s.as("hamlet").post(`/user_groups/${groupId}/members`, { delete: [id("othello")] }));
    });
    sameForAll(r, ["user_group/add_members", "user_group/remove_members"]);
    expect(r.events.iago.map((e) => e.user_ids)).toEqual([[id("othello"), id("polonius")].sort((a, b) => a - b), [id("othello")]]);
  });

  test("join/leave and add/remove permissions; errors for non-members, duplicates, deactivated users", async () => {
    const groupId = await createGroup("hamlet", { members: [id("cordelia")] });
    const members = (who: CastName, params: Params) => s.as(who).post(`/user_groups/${groupId}/members`, params);
    // can_join_group is nobody by default; can_leave_group everyone.
    expectError(await members("othello", { add: [id("othello")] }), 400, "BAD_REQUEST", "Insufficient permission");
    expectError(await members("othello", { add: [id("shiva")] }), 400, "BAD_REQUEST", "Insufficient permission");
    expectError(await members("othello", { delete: [id("cordelia")] }), 400, "BAD_REQUEST", "Insufficient permission");
    expectError(await members("polonius", { add: [id("polonius")] }), 400, "BAD_REQUEST", "Not allowed for guest users");
    expectSuccess(await members("cordelia", { delete: [id("cordelia")] }));
    expectSuccess(await s.as("hamlet").patch(`/user_groups/${groupId}`, { can_join_group: { new: systemGroup("role:members") } }));
    expectSuccess(await members("othello", { add: [id("othello")] }));
    expectError(await members("othello", { add: [id("shiva")] }), 400, "BAD_REQUEST", "Insufficient permission");
    expectSuccess(await s.as("hamlet").patch(`/user_groups/${groupId}`, { can_add_members_group: { new: systemGroup("role:moderators") } }));
    expectSuccess(await members("shiva", { add: [id("iago")] }));
    expectError(await members("hamlet", { add: [id("iago")] }), 400, "BAD_REQUEST", `User ${id("iago")} is already a member of this group`);
    expectError(await members("hamlet", { delete: [id("polonius")] }), 400, "BAD_REQUEST", `There is no member '${id("polonius")}' in this user group`);
    expectError(await members("hamlet", { add: [999999] }), 400, "BAD_REQUEST", "Invalid user ID: 999999");
    expectError(await s.as("desdemona").post(`/user_groups/${systemGroup("role:members")}/members`, { add: [id("polonius")] }), 400, "BAD_REQUEST", "Insufficient permission");
    expectError(await s.as("hamlet").post(`/user_groups/999999/members`, { add: [id("iago")] }), 400, "BAD_REQUEST", "Invalid user group");
    // A failed check writes nothing, even when part of the request was fine.
    expectError(await members("hamlet", { add: [id("desdemona")], delete: [id("polonius")] }), 400, "BAD_REQUEST");
    const body = expectSuccess(await s.as("hamlet").get(`/user_groups/${groupId}/members`, { direct_member_only: true }));
    expectSchema(UserGroupMembersResponse, body);
    expect(body.members).toEqual([id("othello"), id("iago")].sort((a, b) => a - b));
  });

  test("subgroups: add/remove events, cycles refused, recursive reads", async () => {
    const inner = await createGroup("hamlet", { members: [id("othello")] });
    const outer = await createGroup("hamlet", { members: [id("hamlet")] });
    const r = await verifyAction(s, async () => {
      expectSuccess(await s.as("hamlet").post(`/user_groups/${outer}/subgroups`, { add: [inner, systemGroup("role:owners")] }));
      expectSuccess(await s.as("hamlet").post(`/user_groups/${outer}/members`, { delete_subgroups: [systemGroup("role:owners")] }));
    });
    sameForAll(r, ["user_group/add_subgroups", "user_group/remove_subgroups"]);
    expect(r.events.shiva[0].direct_subgroup_ids).toEqual([inner, systemGroup("role:owners")].sort((a, b) => a - b));
    expectError(await s.as("hamlet").post(`/user_groups/${inner}/subgroups`, { add: [outer] }), 400, "BAD_REQUEST", `User group ${inner} is already a subgroup of one of the passed subgroups.`);
    expectError(await s.as("hamlet").post(`/user_groups/${outer}/subgroups`, { add: [outer] }), 400, "BAD_REQUEST", `User group ${outer} is already a subgroup of one of the passed subgroups.`);
    expectError(await s.as("hamlet").post(`/user_groups/${outer}/subgroups`, { add: [inner] }), 400, "BAD_REQUEST", `User group ${inner} is already a subgroup of this group.`);
    expectError(await s.as("hamlet").post(`/user_groups/${outer}/subgroups`, { delete: [systemGroup("role:owners")] }), 400, "BAD_REQUEST", `User group ${systemGroup("role:owners")} is not a subgroup of this group.`);
    expectError(await s.as("othello").post(`/user_groups/${outer}/subgroups`, { delete: [inner] }), 400, "BAD_REQUEST", "Insufficient permission");

    const subgroups = expectSuccess(await s.as("polonius").get(`/user_groups/${outer}/subgroups`));
    expectSchema(UserGroupSubgroupsResponse, subgroups);
    expect(subgroups.subgroups).toEqual([inner]);
    const all = expectSuccess(await s.as("othello").get(`/user_groups/${outer}/members`));
    expect(all.members).toEqual([id("hamlet"), id("othello")].sort((a, b) => a - b));
    const direct = expectSuccess(await s.as("othello").get(`/user_groups/${outer}/members`, { direct_member_only: true }));
    expect(direct.members).toEqual([id("hamlet")]);
    const isMember = expectSuccess(await s.as("othello").get(`/user_groups/${outer}/members/${id("othello")}`));
    expectSchema(IsUserGroupMemberResponse, isMember);
    expect(isMember.is_user_group_member).toBe(true);
    const directly = expectSuccess(await s.as("othello").get(`/user_groups/${outer}/members/${id("othello")}`, { direct_member_only: true }));
    expect(directly.is_user_group_member).toBe(false);
    // System groups contain the stricter roles: administrators through owners.
    const admins = expectSuccess(await s.as("hamlet").get(`/user_groups/${systemGroup("role:administrators")}/subgroups`));
    expect(admins.subgroups).toEqual([systemGroup("role:owners")]);
    expectError(await s.as("hamlet").get("/user_groups/999999/members"), 400, "BAD_REQUEST", "Invalid user group");
    expectError(await s.as("hamlet").get(`/user_groups/${outer}/members/999999`), 400, "BAD_REQUEST", "No such user");
  });

  test("deactivating and reactivating a member updates user-defined groups too (FL 303)", async () => {
    const extra = await s.createUser(fresh("leaver"));
    const groupId = await createGroup("hamlet", { members: [extra.id, id("othello")] });
    const groupEvents = (r: { events: Record<string, any[]> }, v: CastName) => r.events[v].filter((e) => e.type === "user_group" && e.group_id === groupId).map((e) => [e.op, e.user_ids]);
    let r = await verifyAction(s, async () => expectSuccess(await s.as("iago").delete(`/users/${extra.id}`)));
    for (const v of EVERYONE) expect(groupEvents(r, v)).toEqual([["remove_members", [extra.id]]]);
    expect((await groupView(groupId)).members).toEqual([id("othello")]);
    // Deactivated users cannot be added or removed.
    expectError(await s.as("hamlet").post(`/user_groups/${groupId}/members`, { delete: [extra.id] }), 400, "BAD_REQUEST", `Invalid user ID: ${extra.id}`);
    r = await verifyAction(s, async () => expectSuccess(await s.as("iago").post(`/users/${extra.id}/reactivate`)));
    for (const v of EVERYONE) expect(groupEvents(r, v)).toEqual([["add_members", [extra.id]]]);
  });
});

describe("mentions", () => {
  test("@*group* mentions user-defined groups (a deactivated one silently) and respects can_mention_group", async () => {
    const name = fresh("Mentionable");
    const groupId = await createGroup("hamlet", { name, members: [id("othello")], can_mention_group: systemGroup("role:moderators") });
    const channel = fresh("Hall");
    expectSuccess(await s.as("iago").post("/users/me/subscriptions", { subscriptions: [{ name: channel }], principals: [id("othello"), id("hamlet")] }));
    const send = (who: CastName, content: string) => s.as(who).post("/messages", { type: "stream", to: channel, topic: "t", content });
    expectError(await send("hamlet", `hi @*${name}*`), 400, "BAD_REQUEST", `You are not allowed to mention user group '${name}'.`);
    // Silent mentions notify nobody, so they need no permission.
    expectSuccess(await send("hamlet", `hi @_*${name}*`));
    const sent = expectSuccess(await send("iago", `hi @*${name}*`)).id;
    const message = expectSuccess(await s.as("othello").get(`/messages/${sent}`)).message;
    expect(message.content).toContain(`data-user-group-id="${groupId}"`);
    expect(message.flags).toContain("mentioned");
    // Editing checks the same permission.
    const own = expectSuccess(await send("hamlet", "plain")).id;
    expectError(await s.as("hamlet").patch(`/messages/${own}`, { content: `now @*${name}*` }), 400, "BAD_REQUEST", `You are not allowed to mention user group '${name}'.`);
    expectSuccess(await s.as("hamlet").post(`/user_groups/${groupId}/deactivate`));
    const later = expectSuccess(await send("hamlet", `hi @*${name}*`)).id;
    const plain = expectSuccess(await s.as("othello").get(`/messages/${later}`)).message;
    // A deactivated group's mention renders silent (Zulip's UserGroupMentionPattern): shown, notifying nobody.
    expect(plain.content).toContain(`<span class="user-group-mention silent" data-user-group-id="${groupId}">${name}</span>`);
    expect(plain.flags).not.toContain("mentioned");
  });
});

describe("zulip-js (under Node, as its users run it)", () => {
  test("create a group, add a member, rename, list, deactivate through callEndpoint", async () => {
    const name = fresh("FromZulipJs");
    const config = { realm: s.url, username: s.users.hamlet.email, apiKey: s.users.hamlet.apiKey };
    const [created] = (await runZulipJs(config, [{ fn: "callEndpoint", args: ["/user_groups/create", "POST", { name, description: "js", members: [id("hamlet")] }] }])).results;
    expectSchema(CreateUserGroupResponse, created);
    const gid = created.group_id;
    const [added, renamed, listed, members, deactivated] = (
      await runZulipJs(config, [
        { fn: "callEndpoint", args: [`/user_groups/${gid}/members`, "POST", { add: [id("othello")] }] },
        { fn: "callEndpoint", args: [`/user_groups/${gid}`, "PATCH", { name: name + "x", can_mention_group: JSON.stringify({ new: systemGroup("role:members") }) }] },
        { fn: "callEndpoint", args: ["/user_groups", "GET", {}] },
        { fn: "callEndpoint", args: [`/user_groups/${gid}/members`, "GET", {}] },
        { fn: "callEndpoint", args: [`/user_groups/${gid}/deactivate`, "POST", {}] },
      ])
    ).results;
    for (const r of [added, renamed, deactivated]) expectSchema(SuccessEnvelope, r);
    expectSchema(UserGroupsResponse, listed);
    expect(listed.user_groups.find((g: any) => g.id === gid)).toMatchObject({ name: name + "x", can_mention_group: systemGroup("role:members") });
    expect(members.members).toEqual([id("hamlet"), id("othello")].sort((a, b) => a - b));
    expect((await groupView(gid)).deactivated).toBe(true);
  });
});

describe("concurrent changes found in review", () => {
  test("a rename racing a deactivation keeps the group deactivated", async () => {
    for (let i = 0; i < 6; i++) {
      const id = await createGroup("iago");
      const [renamed, deactivated] = await Promise.all([
        s.as("iago").patch(`/user_groups/${id}`, { name: fresh("renamed") }),
        s.as("iago").post(`/user_groups/${id}/deactivate`),
      ]);
      expectSuccess(renamed);
      expectSuccess(deactivated);
      const group = expectSuccess(await s.as("iago").get("/user_groups", { include_deactivated_groups: true })).user_groups.find((g: any) => g.id === id);
      expect(group.deactivated).toBe(true);
    }
  });
});
