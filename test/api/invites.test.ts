/**
 * Reusable invitation links: POST /invites/multiuse, GET /invites, DELETE
 * /invites/multiuse/{id}, their invites_changed events, and the `/join/<key>/` page
 * where a person holding the link creates their account.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiClient, expectError, expectSchema, expectSuccess, startTestServer, type TestServer } from "../kit";
import { verifyAction } from "../kit/events";
import { CreateInviteLinkResponse, GetInvitesResponse } from "../../src/schemas/users";
import { Role } from "../../src/store/users";

let s: TestServer;
let denmark: number;
let verona: number;

beforeAll(async () => {
  s = await startTestServer();
  denmark = await s.createChannel("iago", "Denmark", ["iago", "hamlet"]);
  verona = await s.createChannel("iago", "Verona", ["iago", "hamlet"], { invite_only: true });
});
afterAll(() => s.stop());

async function createLink(who: "desdemona" | "iago" | "hamlet" | "shiva", params: Record<string, unknown> = {}): Promise<string> {
  const body = expectSuccess(await s.as(who).post("/invites/multiuse", params));
  expectSchema(CreateInviteLinkResponse, body);
  return body.invite_link as string;
}

const keyOf = (link: string) => /\/join\/([a-z0-9]+)\/$/.exec(link)![1];

function joinPage(link: string): Promise<Response> {
  return fetch(link);
}

function join(link: string, fields: Record<string, string>): Promise<Response> {
  return fetch(link, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });
}

async function listInvites(who: "desdemona" | "iago" | "hamlet" | "othello") {
  const body = expectSuccess(await s.as(who).get("/invites"));
  expectSchema(GetInvitesResponse, body);
  return body.invites as any[];
}

test("register's can_invite_others_to_realm follows can_invite_users_group (Zulip's default: members, not guests)", async () => {
  for (const who of ["desdemona", "iago", "hamlet"] as const) {
    expect(expectSuccess(await s.as(who).post("/register", { fetch_event_types: ["realm_user"] })).can_invite_others_to_realm).toBe(true);
  }
  expect(expectSuccess(await s.as("polonius").post("/register", { fetch_event_types: ["realm_user"] })).can_invite_others_to_realm).toBe(false);
  expectError(await new ApiClient(s.url, null, null).post("/invites", { invitee_emails: "new@example.com", stream_ids: [] }), 401, "UNAUTHORIZED");
});

describe("reusable invitation links", () => {
  test("an administrator's link, listed for administrators and its creator only, with invites_changed to exactly them", async () => {
    let link = "";
    const r = await verifyAction(s, async () => {
      link = await createLink("iago", { invite_as: Role.MODERATOR, stream_ids: JSON.stringify([denmark, verona]), invite_expires_in_minutes: 60 });
    });
    expect(link.startsWith(`${s.url}/join/`)).toBe(true);
    expect(keyOf(link)).toHaveLength(24);
    for (const admin of ["desdemona", "iago"] as const) expect(r.types[admin]).toEqual(["invites_changed"]);
    for (const other of ["shiva", "hamlet", "othello", "cordelia", "polonius"] as const) expect(r.types[other]).toEqual([]);

    const listed = (await listInvites("desdemona")).find((i) => i.link_url === link);
    expect(listed).toMatchObject({ invited_by_user_id: s.users.iago.id, invited_as: Role.MODERATOR, is_multiuse: true });
    expect(listed.expiry_date - listed.invited).toBe(3600);
    expect((await listInvites("iago")).some((i) => i.link_url === link)).toBe(true);
    // Members manage only their own invitations.
    expect((await listInvites("othello")).some((i) => i.link_url === link)).toBe(false);
  });

  test("welcome_message_custom_text (FL 416): an administrator's link carries it to Welcome Bot's DM; a member's text is ignored; over 8000 code points is refused", async () => {
    expectError(await s.as("iago").post("/invites/multiuse", { welcome_message_custom_text: "é".repeat(8001) }), 400, "BAD_REQUEST", /too long/);
    const link = await createLink("iago", { welcome_message_custom_text: "Welcome to **Arden**!" });
    expect((await join(link, { email: "welcome-text-1@example.com", full_name: "Phebe", password: "arden forest" })).status).toBe(200);
    const key = expectSuccess(await s.anonymous().post("/fetch_api_key", { username: "welcome-text-1@example.com", password: "arden forest" }));
    const audrey = new ApiClient(s.url, "welcome-text-1@example.com", key.api_key);
    const dms = expectSuccess(await audrey.get("/messages", { anchor: "newest", num_before: 10, num_after: 0, apply_markdown: false, narrow: JSON.stringify([{ operator: "is", operand: "dm" }]) })).messages;
    expect(dms.filter((m: any) => m.sender_email === "welcome-bot@zulip.com").map((m: any) => m.content)).toContain("Welcome to **Arden**!");

    const members = expectSuccess(await s.as("iago").get("/user_groups")).user_groups.find((g: any) => g.name === "role:members").id;
    const admins = expectSuccess(await s.as("iago").get("/user_groups")).user_groups.find((g: any) => g.name === "role:administrators").id;
    expectSuccess(await s.as("desdemona").patch("/realm", { create_multiuse_invite_group: JSON.stringify({ new: members }) }));
    try {
      const memberLink = await createLink("hamlet", { welcome_message_custom_text: "Not from a member" });
      expect((await join(memberLink, { email: "welcome-text-2@example.com", full_name: "Corin", password: "arden forest" })).status).toBe(200);
      const wKey = expectSuccess(await s.anonymous().post("/fetch_api_key", { username: "welcome-text-2@example.com", password: "arden forest" }));
      const william = new ApiClient(s.url, "welcome-text-2@example.com", wKey.api_key);
      const wDms = expectSuccess(await william.get("/messages", { anchor: "newest", num_before: 10, num_after: 0, apply_markdown: false, narrow: JSON.stringify([{ operator: "is", operand: "dm" }]) })).messages;
      expect(wDms.some((m: any) => m.content === "Not from a member")).toBe(false);
      // Later tests count Hamlet's links.
      const id = (await listInvites("hamlet")).find((i) => i.link_url === memberLink).id;
      expectSuccess(await s.as("hamlet").delete(`/invites/multiuse/${id}`));
    } finally {
      expectSuccess(await s.as("desdemona").patch("/realm", { create_multiuse_invite_group: JSON.stringify({ new: admins }) }));
    }
  });

  test("the defaults: a member's link that expires in 10 days; no expiry on null", async () => {
    const link = await createLink("desdemona");
    const listed = (await listInvites("desdemona")).find((i) => i.link_url === link);
    expect(listed.invited_as).toBe(Role.MEMBER);
    expect(listed.expiry_date - listed.invited).toBe(14400 * 60);
    const forever = await createLink("desdemona", { invite_expires_in_minutes: "null" });
    expect((await listInvites("desdemona")).find((i) => i.link_url === forever).expiry_date).toBeNull();
  });

  test("with create_multiuse_invite_group set to members, a member's links are listed for them and administrators, not other members", async () => {
    const groups = expectSuccess(await s.as("iago").get("/user_groups")).user_groups as any[];
    const members = groups.find((g) => g.name === "role:members").id;
    const admins = groups.find((g) => g.name === "role:administrators").id;
    // One of Zulip's "joining the organization" settings: owners only.
    expectError(await s.as("iago").patch("/realm", { create_multiuse_invite_group: JSON.stringify({ new: members }) }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
    expectSuccess(await s.as("desdemona").patch("/realm", { create_multiuse_invite_group: JSON.stringify({ new: members }) }));
    try {
      const link = await createLink("hamlet", { stream_ids: JSON.stringify([denmark]) });
      expect((await listInvites("hamlet")).map((i) => i.link_url)).toEqual([link]);
      expect((await listInvites("othello")).some((i) => i.link_url === link)).toBe(false);
      expect((await listInvites("iago")).some((i) => i.link_url === link)).toBe(true);
      // A member invites members and guests, not moderators.
      expectError(await s.as("hamlet").post("/invites/multiuse", { invite_as: Role.MODERATOR }), 400, "UNAUTHORIZED_PRINCIPAL", "Insufficient permission");
      // Not an administrator's link to revoke for another member, but their own.
      const id = (await listInvites("hamlet"))[0].id;
      expectError(await s.as("othello").delete(`/invites/multiuse/${id}`), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
      expectSuccess(await s.as("hamlet").delete(`/invites/multiuse/${id}`));
      expect(await listInvites("hamlet")).toEqual([]);
    } finally {
      expectSuccess(await s.as("desdemona").patch("/realm", { create_multiuse_invite_group: JSON.stringify({ new: admins }) }));
    }
  });

  test("refusals: members (not in create_multiuse_invite_group), roles above the creator's, bad channels and values", async () => {
    expectError(await s.as("hamlet").post("/invites/multiuse", {}), 400, "UNAUTHORIZED_PRINCIPAL", "Insufficient permission");
    expectError(await s.as("iago").post("/invites/multiuse", { invite_as: Role.OWNER }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
    expectError(await s.as("iago").post("/invites/multiuse", { invite_as: 250 }), 400, "BAD_REQUEST", "Invalid invite_as");
    expectError(await s.as("iago").post("/invites/multiuse", { stream_ids: JSON.stringify([999999]) }), 400, "BAD_REQUEST", "Invalid channel ID 999999. No invites were sent.");
    expectError(await s.as("iago").post("/invites/multiuse", { invite_expires_in_minutes: 0 }), 400, "BAD_REQUEST", "Invalid invite_expires_in_minutes");
    expectError(await s.as("iago").post("/invites/multiuse", { invite_expires_in_minutes: Number.MAX_SAFE_INTEGER }), 400, "BAD_REQUEST", "Invalid invite_expires_in_minutes");
    expectError(await s.as("iago").post("/invites/multiuse", { stream_ids: "[1," }), 400, "BAD_REQUEST");
    // A private channel the creator cannot see is as good as missing.
    const secret = await s.createChannel("desdemona", "Elsinore", [], { invite_only: true });
    expectError(await s.as("iago").post("/invites/multiuse", { stream_ids: JSON.stringify([secret]) }), 400, "BAD_REQUEST", `Invalid channel ID ${secret}. No invites were sent.`);
    // An owner-role link is only an owner's to see.
    const ownerLink = await createLink("desdemona", { invite_as: Role.OWNER });
    expect((await listInvites("desdemona")).some((i) => i.link_url === ownerLink)).toBe(true);
    expect((await listInvites("iago")).some((i) => i.link_url === ownerLink)).toBe(false);
  });

  test("joining: the form, then an account with the link's role and channels that signs in with its password", async () => {
    const link = await createLink("iago", { invite_as: Role.MODERATOR, stream_ids: JSON.stringify([denmark, verona]) });
    const form = await joinPage(link);
    expect(form.status).toBe(200);
    expect(form.headers.get("content-type")).toContain("text/html");
    expect(form.headers.get("referrer-policy")).toBe("no-referrer");
    expect(form.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    const html = await form.text();
    expect(html).toContain('<form method="post">');
    expect(html).toContain('name="password"');

    let response: Response | null = null;
    const r = await verifyAction(s, async () => {
      response = await join(link, { email: "rosalind@example.com", full_name: "Rosalind", password: "arden forest" });
    });
    expect(response!.status).toBe(200);
    expect(await response!.text()).toContain("rosalind@example.com");
    // Everyone hears of the new account; the channels' subscribers of the new subscriber.
    expect(r.types.othello).toContain("realm_user/add");
    expect(r.types.hamlet).toContain("subscription/peer_add");
    // Verona is private: Othello, not subscribed, hears of Denmark's new subscriber only.
    const peerAdds = r.events.othello.filter((e: any) => e.type === "subscription" && e.op === "peer_add");
    expect(peerAdds.flatMap((e: any) => e.stream_ids)).toEqual([denmark]);

    const key = expectSuccess(await s.anonymous().post("/fetch_api_key", { username: "rosalind@example.com", password: "arden forest" }));
    const rosalind = new ApiClient(s.url, "rosalind@example.com", key.api_key);
    const me = expectSuccess(await rosalind.get("/users/me"));
    expect(me.role).toBe(Role.MODERATOR);
    expect(me.full_name).toBe("Rosalind");
    const subscribed = expectSuccess(await rosalind.get("/users/me/subscriptions")).subscriptions.map((c: any) => c.stream_id).sort();
    expect(subscribed).toEqual([denmark, verona].sort());
    const welcome = expectSuccess(await rosalind.get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow: JSON.stringify([{ operator: "is", operand: "dm" }]) })).messages;
    expect(welcome.map((m: any) => m.sender_email)).toEqual(["welcome-bot@zulip.com"]);

    // The link is reusable.
    expect((await join(link, { email: "celia@example.com", full_name: "Celia", password: "arden forest" })).status).toBe(200);
    expect((await listInvites("iago")).some((i) => i.link_url === link)).toBe(true);
  });

  test("group_ids: the new account joins those groups, with add_members to everyone; only groups the creator may add members to", async () => {
    expectSuccess(await s.as("iago").post("/user_groups/create", { name: "Players", description: "The company", members: JSON.stringify([s.users.iago.id]) }));
    const groups = expectSuccess(await s.as("iago").get("/user_groups")).user_groups as any[];
    const players = groups.find((g) => g.name === "Players").id;
    const admins = groups.find((g) => g.name === "role:administrators").id;
    expectError(await s.as("iago").post("/invites/multiuse", { group_ids: JSON.stringify([admins]) }), 400, "BAD_REQUEST", "Insufficient permission");
    expectError(await s.as("iago").post("/invites/multiuse", { group_ids: JSON.stringify([999999]) }), 400, "BAD_REQUEST", "Invalid user group");

    const link = await createLink("iago", { group_ids: JSON.stringify([players]) });
    const r = await verifyAction(s, async () => {
      expect((await join(link, { email: "touchstone@example.com", full_name: "Touchstone", password: "arden forest" })).status).toBe(200);
    });
    expect(r.types.othello).toContain("user_group/add_members");
    const members = expectSuccess(await s.as("iago").get(`/user_groups/${players}/members`)).members as number[];
    const touchstone = expectSuccess(await s.as("iago").get("/users/touchstone@example.com")).user.user_id;
    expect(members.sort((a, b) => a - b)).toEqual([s.users.iago.id, touchstone].sort((a, b) => a - b));
  });

  test("a deactivated group: refused in a new link, skipped by an older link's joiners", async () => {
    expectSuccess(await s.as("iago").post("/user_groups/create", { name: "Exiles", description: "Gone", members: JSON.stringify([s.users.iago.id]) }));
    const exiles = (expectSuccess(await s.as("iago").get("/user_groups")).user_groups as any[]).find((g) => g.name === "Exiles").id;
    const link = await createLink("iago", { group_ids: JSON.stringify([exiles]) });
    expectSuccess(await s.as("iago").post(`/user_groups/${exiles}/deactivate`));
    expectError(await s.as("iago").post("/invites/multiuse", { group_ids: JSON.stringify([exiles]) }), 400, "BAD_REQUEST", "You can't add users to a deactivated user group.");
    expect((await join(link, { email: "adam@example.com", full_name: "Adam", password: "arden forest" })).status).toBe(200);
    const adam = expectSuccess(await s.as("iago").get("/users/adam@example.com")).user.user_id;
    expect(expectSuccess(await s.as("iago").get(`/user_groups/${exiles}/members`)).members).not.toContain(adam);
  });

  test("a link never grants more than its creator holds now: an administrator's link dies when they are demoted", async () => {
    expectSuccess(await s.as("desdemona").patch(`/users/${s.users.shiva.id}`, { role: Role.ADMINISTRATOR }));
    const link = await createLink("shiva", { invite_as: Role.ADMINISTRATOR });
    const member = await createLink("shiva", { invite_as: Role.MEMBER });
    expectSuccess(await s.as("desdemona").patch(`/users/${s.users.shiva.id}`, { role: Role.MODERATOR }));
    expect((await join(link, { email: "dennis@example.com", full_name: "Dennis", password: "arden forest" })).status).toBe(404);
    expect((await joinPage(member)).status).toBe(200);
    const listed = (await listInvites("desdemona")).map((i) => i.link_url);
    expect(listed).toContain(member);
    expect(listed).not.toContain(link);
  });

  test("a link without channels joins none; with include_realm_default_subscriptions, the default channels", async () => {
    expectSuccess(await s.as("iago").post("/default_streams", { stream_id: denmark }));
    try {
      const none = await createLink("iago");
      expect((await join(none, { email: "orlando@example.com", full_name: "Orlando", password: "arden forest" })).status).toBe(200);
      const defaults = await createLink("iago", { include_realm_default_subscriptions: "true" });
      expect((await join(defaults, { email: "jaques@example.com", full_name: "Jaques", password: "arden forest" })).status).toBe(200);
      const channelsOf = async (email: string) => {
        const key = expectSuccess(await s.anonymous().post("/fetch_api_key", { username: email, password: "arden forest" })).api_key;
        return expectSuccess(await new ApiClient(s.url, email, key).get("/users/me/subscriptions")).subscriptions.map((c: any) => c.stream_id);
      };
      expect(await channelsOf("orlando@example.com")).toEqual([]);
      expect(await channelsOf("jaques@example.com")).toEqual([denmark]);
    } finally {
      expectSuccess(await s.as("iago").delete("/default_streams", { stream_id: denmark }));
    }
  });

  test("the form offers the default channel groups (not to a guest's link); the picked groups' channels are joined", async () => {
    const garden = await s.createChannel("iago", "Garden", ["iago"]);
    const forest = await s.createChannel("iago", "Forest", ["iago"]);
    expectSuccess(await s.as("iago").post("/default_stream_groups/create", { group_name: "Outdoors <&>", description: "Fresh air", stream_names: ["Garden", "Forest"] }));
    expectSuccess(await s.as("iago").post("/default_stream_groups/create", { group_name: "Indoors", description: "", stream_names: ["Denmark"] }));
    try {
      const link = await createLink("iago");
      const form = await (await joinPage(link)).text();
      expect(form).toContain('name="default_stream_group" id="group1" value="Outdoors &lt;&amp;&gt;"');
      expect(form).toContain("Fresh air");
      const guestForm = await (await joinPage(await createLink("iago", { invite_as: Role.GUEST }))).text();
      expect(guestForm).not.toContain("default_stream_group");

      // An unknown group: the form again, with the groups ticked as they were, and no account.
      const unknown = new URLSearchParams({ email: "audrey@example.com", full_name: "Audrey", password: "arden forest" });
      unknown.append("default_stream_group", "Outdoors <&>");
      unknown.append("default_stream_group", "Nowhere");
      const refused = await fetch(link, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: unknown.toString() });
      expect(refused.status).toBe(400);
      const again = await refused.text();
      expect(again).toContain("Invalid default channel group Nowhere");
      expect(again).toContain('value="Outdoors &lt;&amp;&gt;" checked');
      expectError(await s.anonymous().post("/fetch_api_key", { username: "audrey@example.com", password: "arden forest" }), 401, "AUTHENTICATION_FAILED");

      const picked = new URLSearchParams({ email: "phebe@example.com", full_name: "Phebe", password: "arden forest" });
      picked.append("default_stream_group", "Outdoors <&>");
      expect((await fetch(link, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: picked.toString() })).status).toBe(200);
      const key = expectSuccess(await s.anonymous().post("/fetch_api_key", { username: "phebe@example.com", password: "arden forest" })).api_key;
      const channels = expectSuccess(await new ApiClient(s.url, "phebe@example.com", key).get("/users/me/subscriptions")).subscriptions.map((c: any) => c.stream_id);
      expect(channels.sort()).toEqual([garden, forest].sort());
    } finally {
      for (const group of expectSuccess(await s.as("iago").post("/register", { fetch_event_types: ["default_stream_groups"] })).realm_default_stream_groups) {
        expectSuccess(await s.as("iago").delete(`/default_stream_groups/${group.id}`));
      }
    }
  });

  test("an organization that restricts emails to its domains: only those, and no + aliases", async () => {
    expectSuccess(await s.as("desdemona").post("/realm/domains", { domain: "arden.test", allow_subdomains: "true" }));
    expectError(await s.as("iago").patch("/realm", { emails_restricted_to_domains: "true" }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
    const r = await verifyAction(s, async () => expectSuccess(await s.as("desdemona").patch("/realm", { emails_restricted_to_domains: "true" })), { viewers: ["hamlet"] });
    expect(r.events.hamlet).toEqual([expect.objectContaining({ type: "realm", op: "update", property: "emails_restricted_to_domains", value: true })]);
    try {
      const link = await createLink("iago");
      const refused = await join(link, { email: "oliver@elsewhere.test", full_name: "Oliver", password: "arden forest" });
      expect(refused.status).toBe(400);
      expect(await refused.text()).toContain("is not in one of the domains that are allowed");
      const alias = await join(link, { email: "oliver+x@arden.test", full_name: "Oliver", password: "arden forest" });
      expect(await alias.text()).toContain("containing + are not allowed");
      expect((await join(link, { email: "oliver@forest.arden.test", full_name: "Oliver", password: "arden forest" })).status).toBe(200);
    } finally {
      expectSuccess(await s.as("desdemona").patch("/realm", { emails_restricted_to_domains: "false" }));
    }
  });

  test("bad input shows the form again with the reason, and creates nothing", async () => {
    const link = await createLink("iago");
    const cases: [Record<string, string>, string][] = [
      [{ email: "not an email", full_name: "X", password: "arden forest" }, "Invalid email"],
      [{ email: s.users.hamlet.email, full_name: "Another Hamlet", password: "arden forest" }, "already has an account"],
      [{ email: "short@example.com", full_name: "Short", password: "abc" }, "The password must be"],
      [{ email: "noname@example.com", full_name: "", password: "arden forest" }, "Name too short"],
    ];
    for (const [fields, reason] of cases) {
      const res = await join(link, fields);
      expect(res.status).toBe(400);
      const html = await res.text();
      expect(html).toContain(reason);
      expect(html).not.toContain("arden forest");
    }
    // What was typed comes back escaped.
    const res = await join(link, { email: "<script>@x", full_name: "<b>", password: "arden forest" });
    const echoed = await res.text();
    expect(echoed).toContain('value="&lt;script&gt;@x"');
    expect(echoed).toContain('value="&lt;b&gt;"');
    expect(echoed).not.toContain("<script>");
    expect(echoed).not.toContain("<b>");
    const users = expectSuccess(await s.as("iago").get("/users")).members.map((u: any) => u.email);
    for (const email of ["short@example.com", "noname@example.com"]) expect(users).not.toContain(email);
  });

  test("a form too large is refused before it is read whole, declared or sent chunked", async () => {
    const link = await createLink("iago");
    const body = new URLSearchParams({ email: "large@example.com", full_name: "L".repeat(100_000), password: "arden forest" }).toString();
    const chunked = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(body));
        controller.close();
      },
    });
    for (const sent of [body, chunked]) {
      const res = await fetch(link, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: sent });
      expect(res.status).toBe(413);
      expect(await res.text()).toContain("The form is too large.");
    }
    expect(expectSuccess(await s.as("iago").get("/users")).members.map((u: any) => u.email)).not.toContain("large@example.com");
    // A body that goes on and on: the answer comes while it is still being sent.
    let ended = false;
    const endless = new ReadableStream({
      async start(controller) {
        controller.enqueue(new TextEncoder().encode("email=" + "e".repeat(32 * 1024)));
        await Bun.sleep(3000);
        ended = true;
        controller.close();
      },
    });
    const res = await fetch(link, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: endless });
    expect(res.status).toBe(413);
    expect(ended).toBe(false);
  });

  test("revoking: by its creator or an administrator; a revoked or unknown link joins nobody", async () => {
    const link = await createLink("iago");
    const id = (await listInvites("iago")).find((i) => i.link_url === link).id as number;
    expectError(await s.as("hamlet").delete(`/invites/multiuse/${id}`), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    const r = await verifyAction(s, async () => expectSuccess(await s.as("desdemona").delete(`/invites/multiuse/${id}`)));
    expect(r.types.iago).toEqual(["invites_changed"]);
    expect(r.types.hamlet).toEqual([]);
    expect((await listInvites("iago")).some((i) => i.link_url === link)).toBe(false);
    expectError(await s.as("iago").delete(`/invites/multiuse/${id}`), 400, "BAD_REQUEST", "Invitation has already been revoked");
    expectError(await s.as("iago").delete("/invites/multiuse/999999"), 400, "BAD_REQUEST", "No such invitation");
    expectError(await s.as("iago").delete("/invites/multiuse/abc"), 400, "BAD_REQUEST", "Invalid invitation ID");

    const revoked = await join(link, { email: "late@example.com", full_name: "Late", password: "arden forest" });
    expect(revoked.status).toBe(404);
    expect(await revoked.text()).toContain("expired or been deactivated");
    expect((await joinPage(link)).status).toBe(404);
    const unknown = await joinPage(`${s.url}/join/${"a".repeat(24)}/`);
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain("find your confirmation link in the system");
    expect(expectSuccess(await s.as("iago").get("/users")).members.map((u: any) => u.email)).not.toContain("late@example.com");
  });

  test("deactivating a user revokes their links, for good: reactivation does not bring them back", async () => {
    // An administrator for a moment, to create a link.
    expectSuccess(await s.as("desdemona").patch(`/users/${s.users.shiva.id}`, { role: Role.ADMINISTRATOR }));
    const shivaLink = await createLink("shiva");
    expect((await joinPage(shivaLink)).status).toBe(200);
    const r = await verifyAction(s, async () => expectSuccess(await s.as("desdemona").delete(`/users/${s.users.shiva.id}`)), { viewers: ["desdemona", "iago", "hamlet"] });
    expect(r.types.iago).toContain("invites_changed");
    expect(r.types.hamlet).not.toContain("invites_changed");
    expect((await joinPage(shivaLink)).status).toBe(404);
    expect((await listInvites("desdemona")).some((i) => i.link_url === shivaLink)).toBe(false);
    expectSuccess(await s.as("desdemona").post(`/users/${s.users.shiva.id}/reactivate`));
    expect((await joinPage(shivaLink)).status).toBe(404);
    expectSuccess(await s.as("desdemona").patch(`/users/${s.users.shiva.id}`, { role: Role.MODERATOR }));
  });

  test("an expired link joins nobody and leaves the list", async () => {
    const link = await createLink("iago", { invite_expires_in_minutes: 1 });
    const realNow = Date.now;
    Date.now = () => realNow() + 61_000;
    try {
      expect((await joinPage(link)).status).toBe(404);
      expect((await join(link, { email: "expired@example.com", full_name: "Too Late", password: "arden forest" })).status).toBe(404);
      expect((await listInvites("iago")).some((i) => i.link_url === link)).toBe(false);
    } finally {
      Date.now = realNow;
    }
    expect((await joinPage(link)).status).toBe(200);
    expect(expectSuccess(await s.as("iago").get("/users")).members.map((u: any) => u.email)).not.toContain("expired@example.com");
  });

  test("guessing keys is rate limited like failed logins, on both methods", async () => {
    const limited = await startTestServer({ env: { HEARTH_AUTH_FAILURES_PER_IP: "2" } });
    try {
      const guess = (n: number) => `${limited.url}/join/${String(n).padStart(24, "x")}/`;
      expect((await joinPage(guess(1))).status).toBe(404);
      expect((await join(guess(2), { email: "a@example.com", full_name: "A", password: "arden forest" })).status).toBe(404);
      const blocked = await joinPage(guess(3));
      expect(blocked.status).toBe(429);
      expect(blocked.headers.get("content-type")).toContain("text/html");
      expect((await join(guess(4), { email: "a@example.com", full_name: "A", password: "arden forest" })).status).toBe(429);
    } finally {
      await limited.stop();
    }
  });

  // Last: it stops the file's server.
  test("the link survives a restart", async () => {
    const link = await createLink("iago");
    await s.server.stop();
    const again = await startTestServer({ dataDir: s.dataDir });
    try {
      const moved = `${again.url}/join/${keyOf(link)}/`;
      expect((await joinPage(moved)).status).toBe(200);
      const invites = expectSuccess(await new ApiClient(again.url, s.users.iago.email, s.users.iago.apiKey).get("/invites")).invites;
      expect(invites.some((i: any) => i.link_url === moved)).toBe(true);
    } finally {
      await again.stop();
    }
  });
});
