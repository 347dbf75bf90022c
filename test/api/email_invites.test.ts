/**
 * Email invitations end to end with a real SMTP server on loopback: POST /invites, the
 * email and its accept page, GET /invites, DELETE /invites/{id}, POST
 * /invites/{id}/resend, INVITATION_FAILED, the daily limit, invites_changed, and the
 * same without an SMTP server (the link for administrators instead).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { expectError, expectSchema, expectSuccess, startTestServer, type CastName, type TestServer } from "../kit";
import { verifyAction } from "../kit/events";
import { startSmtpServer, type SmtpTestServer } from "../kit/smtp";
import { runZulipJs } from "../clients/zulip-js";
import { GetInvitesResponse } from "../../src/schemas/users";
import { Role } from "../../src/store/users";
import { commit } from "../../src/events/commit";
import { allInvites, putInvite } from "../../src/store/invites";

setDefaultTimeout(30_000);
let smtp: SmtpTestServer;
let s: TestServer;
let denmark: number;
let verona: number;
let scotland: number;
let groupId: number;

beforeAll(async () => {
  smtp = await startSmtpServer();
  s = await startTestServer({ env: { HEARTH_SMTP_URL: smtp.url, HEARTH_INVITES_PER_DAY: "40" } });
  denmark = await s.createChannel("iago", "Denmark", ["iago", "hamlet"]);
  verona = await s.createChannel("iago", "Verona", ["iago"], { invite_only: true });
  scotland = await s.createChannel("iago", "Scotland", ["iago", "hamlet"]);
  groupId = expectSuccess(await s.as("iago").post("/user_groups/create", { name: "Newcomers", description: "", members: [] })).group_id;
});
afterAll(async () => {
  await s.stop();
  await smtp.close();
});

async function listInvites(server: TestServer, who: CastName) {
  const body = expectSuccess(await server.as(who).get("/invites"));
  expectSchema(GetInvitesResponse, body);
  return body.invites as any[];
}

async function emailTo(address: string) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const found = smtp.received.filter((m) => m.envelopeTo.includes(address));
    if (found.length > 0) return found;
    if (Date.now() > deadline) throw new Error(`no email to ${address}`);
    await Bun.sleep(20);
  }
}

const acceptLinkIn = (text: string) => /(http:\/\/\S+\/accept\/[a-z0-9]{24}\/)/.exec(text)![1];

function accept(link: string, fields: Record<string, string>): Promise<Response> {
  return fetch(link, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });
}

async function latestDm(server: TestServer, who: CastName | { email: string; apiKey: string; id: number; name: string }) {
  const narrow = [{ operator: "is", operand: "dm" }];
  const body = expectSuccess(await server.as(who as any).get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow, apply_markdown: false }));
  return body.messages as any[];
}

describe("POST /invites with an SMTP server", () => {
  test("the invitation is emailed with a working accept link; accepting creates the user with role, channels and groups; the inviter hears of it", async () => {
    const r = await verifyAction(s, async () => {
      expectSuccess(
        await s.as("iago").post("/invites", {
          invitee_emails: "Viola <viola@example.com>",
          invite_as: Role.MODERATOR,
          stream_ids: [denmark, verona],
          group_ids: [groupId],
          invite_expires_in_minutes: 60,
          notify_referrer_on_join: true,
          welcome_message_custom_text: "Welcome to **Illyria**!",
        }),
      );
    });
    // Those who manage invitations: administrators (the inviter is one).
    for (const admin of ["desdemona", "iago"] as const) expect(r.types[admin]).toEqual(["invites_changed"]);
    for (const other of ["shiva", "hamlet", "othello", "cordelia", "polonius"] as const) expect(r.types[other]).toEqual([]);

    const listed = (await listInvites(s, "iago")).find((i) => i.email === "viola@example.com");
    expect(listed).toMatchObject({ invited_by_user_id: s.users.iago.id, invited_as: Role.MODERATOR, is_multiuse: false, notify_referrer_on_join: true });
    expect(listed.expiry_date - listed.invited).toBe(3600);
    expect(listed.link_url).toBeUndefined();

    const [mail] = await emailTo("viola@example.com");
    expect(mail.parsed.subject).toBe("Iago invited you to join Zulip Dev");
    const link = acceptLinkIn(mail.parsed.text!);
    expect(mail.parsed.html).toContain(`href="${link}"`);
    // Sent: GET /invites says so.
    const deadline = Date.now() + 10_000;
    while (!(await listInvites(s, "iago")).find((i) => i.email === "viola@example.com").emailed) {
      if (Date.now() > deadline) throw new Error("never marked emailed");
      await Bun.sleep(20);
    }

    const page = await fetch(link);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("viola@example.com");
    expect(html).not.toContain('name="email"');
    // The address is fixed: an email field sent anyway is ignored.
    const done = await accept(link, { email: "someone-else@example.com", full_name: "Viola", password: "a long password" });
    expect(done.status).toBe(200);
    expect(await done.text()).toContain("viola@example.com");

    const users = expectSuccess(await s.as("iago").get("/users")).members as any[];
    const viola = users.find((u) => u.delivery_email === "viola@example.com" || u.email === "viola@example.com");
    expect(viola).toMatchObject({ full_name: "Viola", role: Role.MODERATOR });
    expect(users.some((u) => u.email === "someone-else@example.com")).toBe(false);
    const key = expectSuccess(await s.anonymous().post("/fetch_api_key", { username: "viola@example.com", password: "a long password" })).api_key;
    const violaUser = { id: viola.user_id, email: "viola@example.com", apiKey: key, name: "viola" };
    const subs = expectSuccess(await s.as(violaUser).get("/users/me/subscriptions")).subscriptions.map((c: any) => c.stream_id);
    expect(subs.sort()).toEqual([denmark, verona].sort());
    expect(expectSuccess(await s.as("iago").get(`/user_groups/${groupId}/members`)).members).toEqual([viola.user_id]);

    // Notification Bot tells the inviter; Welcome Bot sends the custom text.
    const notice = (await latestDm(s, "iago")).find((m) => m.sender_email === "notification-bot@zulip.com");
    expect(notice.content).toBe(`@_**Viola|${viola.user_id}** accepted your invitation to join Zulip Dev!`);
    const welcome = (await latestDm(s, violaUser)).filter((m) => m.sender_email === "welcome-bot@zulip.com").map((m) => m.content);
    expect(welcome).toContain("Welcome to **Illyria**!");

    // Accepted: gone from the list, and the link works no more.
    expect((await listInvites(s, "iago")).some((i) => i.email === "viola@example.com")).toBe(false);
    expect((await fetch(link)).status).toBe(404);
  });

  test("an expired invitation is refused with a clear page", async () => {
    expectSuccess(await s.as("hamlet").post("/invites", { invitee_emails: "late@example.com", stream_ids: [] }));
    const link = acceptLinkIn((await emailTo("late@example.com"))[0].parsed.text!);
    // Time passes: the expiry date is moved into the past.
    const h = s.server.h;
    const invite = allInvites(h.store).find((i) => i.email === "late@example.com")!;
    await commit(h, () => putInvite(h.store, { ...invite, expiry_date: Math.floor(Date.now() / 1000) - 1 }));
    const page = await fetch(link);
    expect(page.status).toBe(404);
    expect(await page.text()).toContain("The confirmation link has expired or been deactivated.");
    const refused = await accept(link, { full_name: "Late", password: "a long password" });
    expect(refused.status).toBe(404);
    expect(expectSuccess(await s.as("iago").get("/users")).members.some((u: any) => u.delivery_email === "late@example.com")).toBe(false);
    expect((await listInvites(s, "hamlet")).some((i) => i.email === "late@example.com")).toBe(false);
  });

  test("INVITATION_FAILED for an address with an account: the spec's shape, and the others still invited", async () => {
    const res = await s.as("iago").post("/invites", { invitee_emails: `${s.users.hamlet.email}\nfresh1@example.com, fresh2@example.com`, stream_ids: [] });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      result: "error",
      code: "INVITATION_FAILED",
      msg: "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!",
      errors: [[s.users.hamlet.email, "Already has an account.", false]],
      sent_invitations: true,
      license_limit_reached: false,
      daily_limit_reached: false,
    });
    await emailTo("fresh1@example.com");
    await emailTo("fresh2@example.com");
    const emails = (await listInvites(s, "iago")).map((i) => i.email);
    expect(emails).toContain("fresh1@example.com");
    expect(emails).toContain("fresh2@example.com");

    const none = await s.as("iago").post("/invites", { invitee_emails: s.users.othello.email, stream_ids: [] });
    expect(none.body).toMatchObject({ code: "INVITATION_FAILED", msg: "We weren't able to invite anyone.", sent_invitations: false, errors: [[s.users.othello.email, "Already has an account.", false]] });
    const invalid = await s.as("iago").post("/invites", { invitee_emails: "not-an-address, fine@example.com", stream_ids: [] });
    expect(invalid.body).toMatchObject({ code: "INVITATION_FAILED", sent_invitations: false, errors: [["not-an-address", "Invalid address.", false]] });
    expect((await listInvites(s, "iago")).some((i) => i.email === "fine@example.com")).toBe(false);
  });

  test("refusals: no address, missing stream_ids, bad channels, roles above the caller's, guests, long welcome text", async () => {
    expectError(await s.as("iago").post("/invites", { invitee_emails: "", stream_ids: [] }), 400, "BAD_REQUEST", "You must specify at least one email address.");
    expectError(await s.as("iago").post("/invites", { invitee_emails: "x@example.com" }), 400, "REQUEST_VARIABLE_MISSING");
    expectError(await s.as("iago").post("/invites", { invitee_emails: "x@example.com", stream_ids: [999999] }), 400, "BAD_REQUEST", "Invalid channel ID 999999. No invites were sent.");
    // A private channel the member cannot reach.
    expectError(await s.as("hamlet").post("/invites", { invitee_emails: "x@example.com", stream_ids: [denmark, verona] }), 400, "BAD_REQUEST", `Invalid channel ID ${verona}. No invites were sent.`);
    expectError(await s.as("hamlet").post("/invites", { invitee_emails: "x@example.com", stream_ids: [], invite_as: Role.ADMINISTRATOR }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator");
    expectError(await s.as("iago").post("/invites", { invitee_emails: "x@example.com", stream_ids: [], invite_as: Role.OWNER }), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
    expectError(await s.as("polonius").post("/invites", { invitee_emails: "x@example.com", stream_ids: [] }), 400, "UNAUTHORIZED_PRINCIPAL", "Insufficient permission");
    expectError(await s.as("iago").post("/invites", { invitee_emails: "x@example.com", stream_ids: [], welcome_message_custom_text: "é".repeat(8001) }), 400, "BAD_REQUEST", /too long/);
    expectError(await s.as("iago").post("/invites", { invitee_emails: "x@example.com", stream_ids: [], invite_expires_in_minutes: 0 }), 400, "BAD_REQUEST");
    expect((await listInvites(s, "iago")).some((i) => i.email === "x@example.com")).toBe(false);
    // 8000 code points is allowed.
    expectSuccess(await s.as("iago").post("/invites", { invitee_emails: "long-welcome@example.com", stream_ids: [], welcome_message_custom_text: "é".repeat(8000) }));
  });

  test("without can_add_subscribers_group a member may still name default channels, not others", async () => {
    const admins = expectSuccess(await s.as("iago").get("/user_groups")).user_groups.find((g: any) => g.name === "role:administrators").id;
    expectSuccess(await s.as("desdemona").patch("/realm", { can_add_subscribers_group: JSON.stringify({ new: admins }) }));
    expectSuccess(await s.as("iago").post("/default_streams", { stream_id: scotland }));
    try {
      expectError(await s.as("hamlet").post("/invites", { invitee_emails: "y@example.com", stream_ids: [denmark] }), 400, "BAD_REQUEST", "You do not have permission to subscribe other users to channels.");
      expectSuccess(await s.as("hamlet").post("/invites", { invitee_emails: "default-only@example.com", stream_ids: [scotland] }));
    } finally {
      const members = expectSuccess(await s.as("iago").get("/user_groups")).user_groups.find((g: any) => g.name === "role:members").id;
      expectSuccess(await s.as("desdemona").patch("/realm", { can_add_subscribers_group: JSON.stringify({ new: members }) }));
      expectSuccess(await s.as("iago").delete("/default_streams", { stream_id: scotland }));
    }
  });

  test("who may invite follows can_invite_users_group, and register says so", async () => {
    const admins = expectSuccess(await s.as("iago").get("/user_groups")).user_groups.find((g: any) => g.name === "role:administrators").id;
    const members = expectSuccess(await s.as("iago").get("/user_groups")).user_groups.find((g: any) => g.name === "role:members").id;
    expectSuccess(await s.as("desdemona").patch("/realm", { can_invite_users_group: JSON.stringify({ new: admins }) }));
    try {
      expectError(await s.as("hamlet").post("/invites", { invitee_emails: "z@example.com", stream_ids: [] }), 400, "UNAUTHORIZED_PRINCIPAL", "Insufficient permission");
      expect(expectSuccess(await s.as("hamlet").post("/register", { fetch_event_types: ["realm_user"] })).can_invite_others_to_realm).toBe(false);
      expect(expectSuccess(await s.as("iago").post("/register", { fetch_event_types: ["realm_user"] })).can_invite_others_to_realm).toBe(true);
    } finally {
      expectSuccess(await s.as("desdemona").patch("/realm", { can_invite_users_group: JSON.stringify({ new: members }) }));
    }
    expectSuccess(await s.as("hamlet").post("/invites", { invitee_emails: "z@example.com", stream_ids: [] }));
  });

  test("a member's invitation: listed for them and administrators; resend emails the same link again; DELETE revokes it", async () => {
    expectSuccess(await s.as("othello").post("/invites", { invitee_emails: "desdemona2@example.com", stream_ids: [denmark] }));
    const first = acceptLinkIn((await emailTo("desdemona2@example.com"))[0].parsed.text!);
    const invite = (await listInvites(s, "othello")).find((i) => i.email === "desdemona2@example.com");
    expect((await listInvites(s, "cordelia")).some((i) => i.id === invite.id)).toBe(false);
    expect((await listInvites(s, "desdemona")).some((i) => i.id === invite.id)).toBe(true);
    // Another member manages none of it.
    expectError(await s.as("cordelia").post(`/invites/${invite.id}/resend`), 400, "BAD_REQUEST", "Must be an organization administrator");
    expectError(await s.as("cordelia").delete(`/invites/${invite.id}`), 400, "BAD_REQUEST", "Must be an organization administrator");

    const resent = await verifyAction(s, async () => expectSuccess(await s.as("othello").post(`/invites/${invite.id}/resend`)));
    expect(resent.types.othello).toEqual(["invites_changed"]);
    expect(resent.types.iago).toEqual(["invites_changed"]);
    expect(resent.types.cordelia).toEqual([]);
    const deadline = Date.now() + 20_000;
    while (smtp.received.filter((m) => m.envelopeTo.includes("desdemona2@example.com")).length < 2) {
      if (Date.now() > deadline) throw new Error("no second email");
      await Bun.sleep(20);
    }
    const again = smtp.received.filter((m) => m.envelopeTo.includes("desdemona2@example.com"));
    expect(acceptLinkIn(again[1].parsed.text!)).toBe(first);

    const revoked = await verifyAction(s, async () => expectSuccess(await s.as("iago").delete(`/invites/${invite.id}`)));
    expect(revoked.types.othello).toEqual(["invites_changed"]);
    expect((await fetch(first)).status).toBe(404);
    expectError(await s.as("iago").delete(`/invites/${invite.id}`), 400, "BAD_REQUEST", "Invitation has already been revoked");
    expectError(await s.as("iago").post(`/invites/${invite.id}/resend`), 400, "BAD_REQUEST");
    expectError(await s.as("iago").delete("/invites/999999"), 400, "BAD_REQUEST", "No such invitation");
    // A reusable link is not an email invitation, nor the reverse.
    const link = expectSuccess(await s.as("iago").post("/invites/multiuse", {})).invite_link;
    const linkId = (await listInvites(s, "iago")).find((i) => i.link_url === link).id;
    expectError(await s.as("iago").delete(`/invites/${linkId}`), 400, "BAD_REQUEST", "No such invitation");
  });

  // zulip-js's form bodies take strings and numbers (a boolean makes Node's form-data throw), so its users pass "true".
  test("zulip-js (its generic callEndpoint, as it has no invitations API) sends an invitation", async () => {
    const { results } = await runZulipJs({ realm: s.url, username: s.users.iago.email, apiKey: s.users.iago.apiKey }, [
      { fn: "callEndpoint", args: ["/invites", "POST", { invitee_emails: "js1@example.com, js2@example.com", invite_expires_in_minutes: 1440, invite_as: 400, stream_ids: [denmark], group_ids: [groupId], include_realm_default_subscriptions: "true", notify_referrer_on_join: "false" }] },
    ]);
    expect(results[0]).toMatchObject({ result: "success" });
    await emailTo("js1@example.com");
    const listed = (await listInvites(s, "iago")).find((i) => i.email === "js2@example.com");
    expect(listed).toMatchObject({ invited_as: 400, notify_referrer_on_join: false });
    expect(listed.expiry_date - listed.invited).toBe(1440 * 60);
  });

  test("the Python bindings' wire format (urlencoded, non-strings JSON-dumped), as Zulip's API example sends it", async () => {
    // Exactly what zulip's Python client sends for client.call_endpoint("/invites", "POST", request).
    const body = new URLSearchParams({
      invitee_emails: "py1@example.com, py2@example.com",
      invite_expires_in_minutes: JSON.stringify(60 * 24 * 10),
      invite_as: JSON.stringify(400),
      stream_ids: JSON.stringify([denmark, scotland]),
      include_realm_default_subscriptions: "false",
      notify_referrer_on_join: "true",
    });
    const res = await fetch(`${s.url}/api/v1/invites`, {
      method: "POST",
      headers: { authorization: "Basic " + btoa(`${s.users.iago.email}:${s.users.iago.apiKey}`), "content-type": "application/x-www-form-urlencoded", "user-agent": "ZulipPython/0.9.1 (Debian; 12)" },
      body,
    });
    expect(await res.json()).toMatchObject({ result: "success" });
    await emailTo("py2@example.com");
  });

  const pythonZulip = Bun.spawnSync(["python3", "-c", "import zulip"]).exitCode === 0;
  test.skipIf(!pythonZulip)("the real Python bindings (python3 -c 'import zulip') send an invitation", async () => {
    const script = `import sys, zulip
c = zulip.Client(email=sys.argv[1], api_key=sys.argv[2], site=sys.argv[3])
r = c.call_endpoint(url="/invites", method="POST", request={"invitee_emails": "realpy@example.com", "invite_expires_in_minutes": 14400, "invite_as": 400, "stream_ids": [int(sys.argv[4])]})
print(r["result"])`;
    const proc = Bun.spawnSync(["python3", "-c", script, s.users.iago.email, s.users.iago.apiKey, s.url, String(denmark)]);
    expect(proc.stdout.toString().trim()).toBe("success");
    await emailTo("realpy@example.com");
  });
});

describe("the daily limit", () => {
  test("past HEARTH_INVITES_PER_DAY invitations in a day, none are sent and daily_limit_reached says why", async () => {
    const limited = await startTestServer({ env: { HEARTH_SMTP_URL: smtp.url, HEARTH_INVITES_PER_DAY: "2" } });
    try {
      expectSuccess(await limited.as("iago").post("/invites", { invitee_emails: "d1@example.com, d2@example.com", stream_ids: [] }));
      const res = await limited.as("iago").post("/invites", { invitee_emails: "d3@example.com", stream_ids: [] });
      expect(res.body).toMatchObject({ result: "error", code: "INVITATION_FAILED", errors: [], sent_invitations: false, license_limit_reached: false, daily_limit_reached: true });
      expect((await listInvites(limited, "iago")).map((i) => i.email).sort()).toEqual(["d1@example.com", "d2@example.com"]);
    } finally {
      await limited.stop();
    }
  });
});

describe("without an SMTP server", () => {
  test("POST /invites succeeds, nothing pretends to be emailed, administrators get the link, and it works", async () => {
    const bare = await startTestServer();
    try {
      expectSuccess(await bare.as("hamlet").post("/invites", { invitee_emails: "offline@example.com", stream_ids: [] }));
      const forAdmin = (await listInvites(bare, "iago")).find((i) => i.email === "offline@example.com");
      expect(forAdmin).toMatchObject({ emailed: false, email_status: "not_sent", is_multiuse: false });
      expect(forAdmin.link_url).toMatch(/\/accept\/[a-z0-9]{24}\/$/);
      // The inviter (a member) does not get the link: accepting it proves the address.
      const forInviter = (await listInvites(bare, "hamlet")).find((i) => i.email === "offline@example.com");
      expect(forInviter).toMatchObject({ emailed: false, email_status: "not_sent" });
      expect(forInviter.link_url).toBeUndefined();
      expect(expectSuccess(await bare.as("iago").get("/hearth/email")).queued).toBe(0);
      const done = await accept(forAdmin.link_url, { full_name: "Offline Person", password: "a long password" });
      expect(done.status).toBe(200);
      expect(expectSuccess(await bare.as("iago").get("/users")).members.some((u: any) => u.full_name === "Offline Person")).toBe(true);
    } finally {
      await bare.stop();
    }
  });
});
