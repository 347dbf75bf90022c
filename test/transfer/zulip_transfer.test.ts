/**
 * `hearth export --format zulip` and `hearth import --format zulip`, run as a user
 * would (CLI subprocesses) against a running server's data folder populated through
 * the API: the export's files checked field by field against what Zulip's importer
 * reads (test/transfer/zulip_schema.ts), then imported into a fresh folder and
 * compared over HTTP; damaged and hostile archives are refused leaving nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as tar from "tar";
import { ApiClient, expectSuccess, startTestServer, type CastName, type TestServer } from "../kit";
import { hearth, MAIN, tempDir } from "../kit/process";
import { tarEntry } from "../kit/tar";
import { identiconPng } from "../../src/avatars/identicon";
import { Store } from "../../src/store/db";
import { allUsers } from "../../src/store/users";
import { RECORDS, REQUIRED_REALM_KEYS, TABLES, typeMatches } from "./zulip_schema";

let s: TestServer;
let publicId: number;
let privateId: number;
let uploadUrl: string;
let botEmail: string;
const uploadBytes = new Uint8Array(50_000).map((_, i) => (i * 31) % 253);
const CAST: CastName[] = ["desdemona", "iago", "shiva", "hamlet", "othello", "cordelia", "polonius"];

beforeAll(async () => {
  s = await startTestServer();
  publicId = await s.createChannel("iago", "lobby", ["hamlet", "othello", "cordelia", "polonius"]);
  privateId = await s.createChannel("iago", "council", ["hamlet", "othello"], { invite_only: true });
  const bot = await s.createBot("hamlet", { full_name: "Ghost bot", short_name: "ghost" });
  botEmail = bot.email;
  uploadUrl = expectSuccess(await s.as("hamlet").post("/user_uploads", { file: new File([uploadBytes], "notes.bin") }, { multipart: true })).url;
  expectSuccess(await s.as("iago").post("/realm/emoji/export_parrot", { file: new File([identiconPng("parrot", 32) as BlobPart], "e.png", { type: "image/png" }) }, { multipart: true }));
  const first = expectSuccess(await s.as("hamlet").post("/messages", { type: "stream", to: publicId, topic: "plans", content: `See [notes](${uploadUrl}) @**Othello, the Moor of Venice**` })).id;
  const second = expectSuccess(await s.as("othello").post("/messages", { type: "stream", to: privateId, topic: "secrets", content: "only for the council" })).id;
  const dm = expectSuccess(await s.as("othello").post("/messages", { type: "private", to: JSON.stringify([s.users.hamlet.id]), content: "a direct message" })).id;
  expectSuccess(await s.as("othello").patch(`/messages/${dm}`, { content: "a direct message, edited" }));
  expectSuccess(await s.as("cordelia").post("/messages", { type: "private", to: JSON.stringify([s.users.hamlet.id, s.users.othello.id]), content: "a group message" }));
  expectSuccess(await s.as("othello").post(`/messages/${first}/reactions`, { emoji_name: "tada" }));
  expectSuccess(await s.as("cordelia").post(`/messages/${first}/reactions`, { emoji_name: "export_parrot" }));
  expectSuccess(await s.as("othello").post("/messages/flags", { messages: JSON.stringify([first]), op: "add", flag: "starred" }));
  expectSuccess(await s.as("hamlet").post("/messages/flags", { messages: JSON.stringify([second]), op: "add", flag: "read" }));
  expectSuccess(await s.as(bot).post("/messages", { type: "stream", to: publicId, topic: "bots", content: "beep" }));
  expectSuccess(await s.as("hamlet").post("/users/me/subscriptions/properties", { subscription_data: JSON.stringify([{ stream_id: publicId, property: "color", value: "#aa3344" }, { stream_id: publicId, property: "is_muted", value: true }]) }));
  expectSuccess(await s.as("iago").post("/user_groups/create", { name: "actors", description: "the cast", members: JSON.stringify([s.users.hamlet.id, s.users.othello.id]) }));
  const field = expectSuccess(await s.as("iago").post("/realm/profile_fields", { name: "Pronouns", field_type: 1, hint: "" })).id;
  expectSuccess(await s.as("hamlet").patch("/users/me/profile_data", { data: JSON.stringify([{ id: field, value: "he/him" }]) }));
  expectSuccess(await s.as("iago").post("/realm/filters", { pattern: "#(?P<id>[0-9]+)", url_template: "https://tracker.example.com/{id}" }));
  expectSuccess(await s.as("hamlet").post("/user_topics", { stream_id: publicId, topic: "plans", visibility_policy: 3 }));
  expectSuccess(await s.as("othello").post("/users/me/muted_users/" + s.users.polonius.id));
  expectSuccess(await s.as("hamlet").post("/scheduled_messages", { type: "stream", to: publicId, topic: "later", content: "see you tomorrow", scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 86400 }));
});
afterAll(() => s.stop());

/** The user a client sees its messages as: content, flags, reactions (by emoji and reactor's email), per message in order. */
async function messagesSeenBy(client: ApiClient): Promise<unknown[]> {
  const body = expectSuccess(await client.get("/messages", { anchor: "oldest", num_before: 0, num_after: 1000, apply_markdown: false }));
  const emailOf = new Map<number, string>();
  const users = expectSuccess(await client.get("/users")).members as { user_id: number; email: string; delivery_email?: string }[];
  for (const u of users) emailOf.set(u.user_id, u.delivery_email ?? u.email);
  return body.messages.map((m: any) => ({
    content: m.content,
    sender: m.sender_email,
    type: m.type,
    to: m.type === "stream" ? `${m.display_recipient}/${m.subject}` : (m.display_recipient as { email: string }[]).map((r) => r.email).sort().join(","),
    flags: [...m.flags].sort(),
    reactions: m.reactions.map((r: any) => `${r.emoji_name}:${r.reaction_type}:${emailOf.get(r.user_id)}`).sort(),
  }));
}

describe("export to the Zulip server", () => {
  let root: string;
  let realm: any;
  const messageRows: any[] = [];
  const userMessageRows: any[] = [];

  beforeAll(async () => {
    const dir = tempDir();
    const archive = join(dir, "team-zulip.tar.gz");
    const run = await hearth(["export", "--format", "zulip", "--data", s.dataDir, "--out", archive]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Exported \d+ users, 2 channels?, \d+ messages/);
    expect(readdirSync(dir)).toEqual(["team-zulip.tar.gz"]);
    const unpacked = join(dir, "unpacked");
    mkdirSync(unpacked);
    await tar.x({ file: archive, cwd: unpacked });
    expect(readdirSync(unpacked)).toHaveLength(1);
    root = join(unpacked, readdirSync(unpacked)[0]);
    realm = JSON.parse(readFileSync(join(root, "realm.json"), "utf8"));
    for (let n = 1; existsSync(join(root, `messages-${String(n).padStart(6, "0")}.json`)); n++) {
      const file = JSON.parse(readFileSync(join(root, `messages-${String(n).padStart(6, "0")}.json`), "utf8"));
      expect(Object.keys(file).sort()).toEqual(["zerver_message", "zerver_usermessage"]);
      messageRows.push(...file.zerver_message);
      userMessageRows.push(...file.zerver_usermessage);
    }
  });

  test("has every file and top-level key Zulip's importer opens, and the migration status of the target release", () => {
    for (const file of ["realm.json", "attachment.json", "migration_status.json", "uploads/records.json", "avatars/records.json", "emoji/records.json", "messages-000001.json"]) {
      expect(existsSync(join(root, file))).toBe(true);
    }
    for (const key of REQUIRED_REALM_KEYS) expect(realm).toHaveProperty(key);
    expect(realm.import_source).toBe("hearth");
    const status = JSON.parse(readFileSync(join(root, "migration_status.json"), "utf8"));
    expect(status.zulip_version.split(".")[0]).toBe("12");
    expect(typeof status.migrations_by_app).toBe("object");
    expect(realm.zerver_realm).toHaveLength(1);
  });

  test("every row of every table has the fields the importer reads, with their types, and every reference lands on a row", () => {
    const tables: Record<string, any[]> = { ...realm, zerver_message: messageRows, zerver_usermessage: userMessageRows, zerver_attachment: JSON.parse(readFileSync(join(root, "attachment.json"), "utf8")).zerver_attachment };
    const ids: Record<string, Set<number>> = {};
    for (const [name, rows] of Object.entries(tables)) if (Array.isArray(rows)) ids[name] = new Set(rows.map((r) => r.id));
    // Users are referred to in one ID space: realm users, mirror dummies and the system bots.
    ids.zerver_userprofile = new Set([...ids.zerver_userprofile, ...ids.zerver_userprofile_mirrordummy, ...realm.zerver_userprofile_crossrealm.map((b: any) => b.id)]);
    ids.zerver_recipient = new Set([...ids.zerver_recipient, ...realm.zerver_userprofile_crossrealm.map((b: any) => b.recipient_id)]);
    const problems: string[] = [];
    for (const [name, schema] of Object.entries(TABLES)) {
      const rows = tables[name];
      if (!Array.isArray(rows)) continue;
      const seen = new Set<number>();
      for (const row of rows) {
        if (name !== "zerver_userprofile_crossrealm" && seen.has(row.id)) problems.push(`${name}: id ${row.id} twice`);
        seen.add(row.id);
        for (const [field, type] of Object.entries(schema.fields)) {
          if (!(field in row)) problems.push(`${name} ${row.id}: no ${field}`);
          else if (!typeMatches(row[field], type)) problems.push(`${name} ${row.id}: ${field}=${JSON.stringify(row[field])} is not ${type}`);
        }
        for (const [field, target] of Object.entries(schema.refs ?? {})) {
          if (row[field] !== null && row[field] !== undefined && !ids[target]?.has(row[field])) problems.push(`${name} ${row.id}: ${field}=${row[field]} is not a row of ${target}`);
        }
        for (const forbidden of ["uuid", "api_key", "password", "recipient_id"]) if (name !== "zerver_userprofile_crossrealm" && forbidden in row) problems.push(`${name} ${row.id}: has ${forbidden}`);
      }
    }
    // UserMessage rows belong to the organization's own users, never to the system bots of Zulip's internal realm.
    const realmUsers = new Set([...realm.zerver_userprofile, ...realm.zerver_userprofile_mirrordummy].map((u: any) => u.id));
    for (const um of userMessageRows) if (!realmUsers.has(um.user_profile)) problems.push(`usermessage for ${um.user_profile}, not a user of the realm`);
    expect(realm.zerver_scheduledmessage).toContainEqual(expect.objectContaining({ content: "see you tomorrow", subject: "later", sender: s.users.hamlet.id, stream: publicId }));
    // Recipients name what they address; every user has a personal one and a subscription to it.
    const typeTable: Record<number, string> = { 1: "zerver_userprofile", 2: "zerver_stream", 3: "zerver_huddle" };
    for (const r of realm.zerver_recipient) if (!ids[typeTable[r.type]]?.has(r.type_id)) problems.push(`recipient ${r.id}: type ${r.type} id ${r.type_id} names no row`);
    const personal = new Map(realm.zerver_recipient.filter((r: any) => r.type === 1).map((r: any) => [r.type_id, r.id]));
    for (const u of [...realm.zerver_userprofile, ...realm.zerver_userprofile_mirrordummy]) {
      if (!personal.has(u.id)) problems.push(`user ${u.id} has no personal recipient`);
      else if (!realm.zerver_subscription.some((sub: any) => sub.user_profile === u.id && sub.recipient === personal.get(u.id))) problems.push(`user ${u.id} is not subscribed to their personal recipient`);
    }
    for (const [folder, fields] of Object.entries(RECORDS)) {
      for (const record of JSON.parse(readFileSync(join(root, folder, "records.json"), "utf8"))) {
        for (const field of fields) if (!(field in record)) problems.push(`${folder}/records.json: no ${field}`);
        if (!existsSync(join(root, folder, record.path))) problems.push(`${folder}/${record.path} is missing`);
      }
    }
    expect(problems).toEqual([]);
  });

  test("groups: the eight system groups with their subgroup chain and role members, and the custom group with its members", () => {
    const named = realm.zerver_namedusergroup;
    const system = named.filter((g: any) => g.is_system_group).map((g: any) => g.name).sort();
    expect(system).toEqual(["role:administrators", "role:everyone", "role:fullmembers", "role:internet", "role:members", "role:moderators", "role:nobody", "role:owners"]);
    const idOf = (name: string) => named.find((g: any) => g.name === name).id;
    const chain = ["role:owners", "role:administrators", "role:moderators", "role:fullmembers", "role:members", "role:everyone", "role:internet"];
    for (let i = 0; i + 1 < chain.length; i++) expect(realm.zerver_groupgroupmembership).toContainEqual(expect.objectContaining({ supergroup: idOf(chain[i + 1]), subgroup: idOf(chain[i]) }));
    const membersOf = (name: string) => realm.zerver_usergroupmembership.filter((m: any) => m.user_group === idOf(name)).map((m: any) => m.user_profile).sort();
    expect(membersOf("role:owners")).toContain(s.users.desdemona.id);
    expect(membersOf("role:everyone")).toContain(s.users.polonius.id);
    expect(membersOf("actors")).toEqual([s.users.hamlet.id, s.users.othello.id].sort());
  });

  test("messages carry rendered HTML and Zulip's flag bits; reactions, uploads, emoji and settings are where Zulip reads them", () => {
    const byContent = (text: string) => messageRows.find((m) => m.content.includes(text));
    const first = byContent("See [notes]");
    expect(first.rendered_content).toContain("<p>");
    expect(first.has_attachment).toBe(true);
    expect(first.is_channel_message).toBe(true);
    const flagsOf = (messageId: number, userId: number) => userMessageRows.find((r) => r.message === messageId && r.user_profile === userId)?.flags_mask;
    // othello: mentioned (8) and starred (2), unread; hamlet read the council's message (1).
    expect(flagsOf(first.id, s.users.othello.id)).toBe(2 | 8);
    expect(flagsOf(byContent("only for the council").id, s.users.hamlet.id)).toBe(1);
    expect(flagsOf(byContent("only for the council").id, s.users.cordelia.id)).toBeUndefined();
    const dm = byContent("a direct message, edited");
    expect(dm.subject).toBe("");
    expect(flagsOf(dm.id, s.users.hamlet.id)).toBe(2048);
    expect(typeof dm.last_edit_time).toBe("number");
    // Zulip's importer maps each entry's user_id and keeps prev_rendered_content beside prev_content.
    expect(JSON.parse(dm.edit_history)[0]).toMatchObject({ user_id: s.users.othello.id, prev_content: "a direct message", prev_rendered_content: "<p>a direct message</p>" });
    const group = byContent("a group message");
    const huddleRecipient = realm.zerver_recipient.find((r: any) => r.id === group.recipient);
    expect(huddleRecipient.type).toBe(3);
    expect(realm.zerver_subscription.filter((sub: any) => sub.recipient === group.recipient).map((sub: any) => sub.user_profile).sort()).toEqual([s.users.cordelia.id, s.users.hamlet.id, s.users.othello.id].sort());

    const reactions = realm.zerver_reaction.filter((r: any) => r.message === first.id);
    const parrot = realm.zerver_realmemoji.find((e: any) => e.name === "export_parrot");
    expect(reactions).toContainEqual(expect.objectContaining({ emoji_name: "export_parrot", reaction_type: "realm_emoji", emoji_code: String(parrot.id), user_profile: s.users.cordelia.id }));
    expect(reactions).toContainEqual(expect.objectContaining({ emoji_name: "tada", reaction_type: "unicode_emoji", user_profile: s.users.othello.id }));

    const attachments = JSON.parse(readFileSync(join(root, "attachment.json"), "utf8")).zerver_attachment;
    const pathId = uploadUrl.slice("/user_uploads/".length);
    expect(attachments).toContainEqual(expect.objectContaining({ path_id: pathId, messages: [first.id], owner: s.users.hamlet.id }));
    expect(first.content).toContain(`/user_uploads/${pathId}`);
    expect(readFileSync(join(root, "uploads", pathId))).toEqual(Buffer.from(uploadBytes));
    const emojiRecords = JSON.parse(readFileSync(join(root, "emoji", "records.json"), "utf8"));
    expect(emojiRecords).toContainEqual(expect.objectContaining({ name: "export_parrot", file_name: parrot.file_name }));

    const hamletPublic = realm.zerver_subscription.find((sub: any) => sub.user_profile === s.users.hamlet.id && realm.zerver_recipient.some((r: any) => r.id === sub.recipient && r.type === 2 && r.type_id === publicId));
    expect(hamletPublic).toMatchObject({ color: "#aa3344", is_muted: true, active: true });
    expect(realm.zerver_stream.find((st: any) => st.id === privateId)).toMatchObject({ name: "council", invite_only: true });
    expect(realm.zerver_userprofile.find((u: any) => u.delivery_email === botEmail)).toMatchObject({ is_bot: true, bot_owner: s.users.hamlet.id });
    expect(realm.zerver_realmfilter).toContainEqual(expect.objectContaining({ pattern: "#(?P<id>[0-9]+)", url_template: "https://tracker.example.com/{id}" }));
    expect(realm.zerver_customprofilefieldvalue).toContainEqual(expect.objectContaining({ user_profile: s.users.hamlet.id, value: "he/him" }));
    expect(realm.zerver_usertopic).toContainEqual(expect.objectContaining({ user_profile: s.users.hamlet.id, stream: publicId, topic_name: "plans", visibility_policy: 3 }));
    expect(realm.zerver_muteduser).toContainEqual(expect.objectContaining({ user_profile: s.users.othello.id, muted_user: s.users.polonius.id }));
  });
});

describe("import from Zulip", () => {
  test("export → import into a fresh folder gives the same users, channels, messages (content, flags, reactions), groups and uploads over HTTP", async () => {
    const dir = tempDir();
    const archive = join(dir, "export.tar.gz");
    expect((await hearth(["export", "--format", "zulip", "--data", s.dataDir, "--out", archive])).code).toBe(0);
    const target = join(dir, "imported");
    const run = await hearth(["import", "--format", "zulip", "--from", archive, "--data", target]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Imported \d+ users, 2 channels, \d+ messages, 2 reactions and 1 uploaded files? from Zulip 12/);
    expect(run.stdout).toContain("hearth set-password");
    expect(readdirSync(dir).sort()).toEqual(["export.tar.gz", "imported"]);

    const keys = new Map<string, { key: string; hash: string | null }>();
    const store = new Store(target);
    for (const u of allUsers(store)) keys.set(u.email, { key: u.api_key, hash: u.password_hash });
    await store.close();
    expect([...keys.values()].every((k) => k.hash === null)).toBe(true);
    expect(keys.get(s.users.hamlet.email)!.key).not.toBe(s.users.hamlet.apiKey);

    const pw = await hearth(["set-password", "--data", target, "--email", s.users.desdemona.email, "--password", "a new long password"]);
    expect(pw.code).toBe(0);

    const imported = await startTestServer({ dataDir: target });
    try {
      const clientOf = (name: CastName) => new ApiClient(imported.url, s.users[name].email, keys.get(s.users[name].email)!.key);
      const login = await fetch(`${imported.url}/api/v1/fetch_api_key`, { method: "POST", body: new URLSearchParams({ username: s.users.desdemona.email, password: "a new long password" }) });
      expect(login.status).toBe(200);

      const usersOf = async (client: ApiClient) =>
        (expectSuccess(await client.get("/users")).members as any[]).map((u) => ({ email: u.delivery_email ?? u.email, full_name: u.full_name, role: u.role, is_bot: u.is_bot, is_active: u.is_active })).sort((a, b) => a.email.localeCompare(b.email));
      expect(await usersOf(clientOf("iago"))).toEqual(await usersOf(s.as("iago")));

      for (const name of CAST) {
        expect(await messagesSeenBy(clientOf(name))).toEqual(await messagesSeenBy(s.as(name)));
        const subs = async (client: ApiClient) => (expectSuccess(await client.get("/users/me/subscriptions")).subscriptions as any[]).map((x) => ({ name: x.name, invite_only: x.invite_only, color: x.color, is_muted: x.is_muted })).sort((a, b) => a.name.localeCompare(b.name));
        expect(await subs(clientOf(name))).toEqual(await subs(s.as(name)));
      }
      // Unread counts come from the imported unread index.
      const unread = async (client: ApiClient) => {
        const state = expectSuccess(await client.post("/register", {}));
        return { max: state.max_message_id > 0, count: state.unread_msgs.count, streams: state.unread_msgs.streams.length, dms: state.unread_msgs.pms.length + state.unread_msgs.huddles.length };
      };
      for (const name of CAST) expect(await unread(clientOf(name))).toEqual(await unread(s.as(name)));

      const groupsOf = async (client: ApiClient) => {
        const groups = expectSuccess(await client.get("/user_groups")).user_groups as any[];
        const emailOf = new Map((expectSuccess(await client.get("/users")).members as any[]).map((u) => [u.user_id, u.delivery_email ?? u.email]));
        return groups.map((g) => ({ name: g.name, members: g.members.map((id: number) => emailOf.get(id)).sort() })).sort((a, b) => a.name.localeCompare(b.name));
      };
      expect(await groupsOf(clientOf("iago"))).toEqual(await groupsOf(s.as("iago")));

      const served = await fetch(imported.url + uploadUrl, { headers: { authorization: "Basic " + Buffer.from(`${s.users.othello.email}:${keys.get(s.users.othello.email)!.key}`).toString("base64") } });
      expect(served.status).toBe(200);
      expect(new Uint8Array(await served.arrayBuffer())).toEqual(uploadBytes);

      // Narrows and search run on the imported indexes.
      const search = expectSuccess(await clientOf("hamlet").get("/messages", { anchor: "newest", num_before: 10, num_after: 0, apply_markdown: false, narrow: JSON.stringify([{ operator: "search", operand: "council" }]) }));
      expect(search.messages.map((m: any) => m.content)).toEqual(["only for the council"]);
      const starred = expectSuccess(await clientOf("othello").get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow: JSON.stringify([{ operator: "is", operand: "starred" }]) }));
      expect(starred.messages).toHaveLength(1);

      const emoji = expectSuccess(await clientOf("hamlet").get("/realm/emoji")).emoji;
      expect(Object.values(emoji).map((e: any) => e.name)).toContain("export_parrot");
      const filters = expectSuccess(await clientOf("hamlet").get("/realm/linkifiers")).linkifiers;
      expect(filters.map((f: any) => f.pattern)).toEqual(["#(?P<id>[0-9]+)"]);
    } finally {
      await imported.stop();
    }
  }, 60_000);

  test("a truncated archive, a file that is not an archive and a non-empty target are refused, leaving nothing behind", async () => {
    const dir = tempDir();
    const archive = join(dir, "export.tar.gz");
    expect((await hearth(["export", "--format", "zulip", "--data", s.dataDir, "--out", archive])).code).toBe(0);
    const bytes = readFileSync(archive);
    writeFileSync(join(dir, "truncated.tar.gz"), bytes.subarray(0, Math.floor(bytes.length / 2)));
    writeFileSync(join(dir, "foreign.tar.gz"), "this is not an archive at all");
    for (const file of ["truncated.tar.gz", "foreign.tar.gz"]) {
      const run = await hearth(["import", "--format", "zulip", "--from", join(dir, file), "--data", join(dir, "target")]);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/damaged|not a|missing/);
      expect(existsSync(join(dir, "target"))).toBe(false);
    }
    mkdirSync(join(dir, "busy"));
    writeFileSync(join(dir, "busy", "something"), "x");
    const busy = await hearth(["import", "--format", "zulip", "--from", archive, "--data", join(dir, "busy")]);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain("not an empty folder");
    expect(readdirSync(dir).sort()).toEqual(["busy", "export.tar.gz", "foreign.tar.gz", "truncated.tar.gz"]);
  }, 30_000);

  test("an archive with a link or a path leaving the folder is refused, and nothing is written outside", async () => {
    const dir = tempDir();
    const src = join(dir, "src");
    mkdirSync(join(src, "zulip-export-x"), { recursive: true });
    writeFileSync(join(src, "zulip-export-x", "realm.json"), "{}");
    writeFileSync(join(src, "zulip-export-x", "migration_status.json"), "{}");
    symlinkSync("/etc/passwd", join(src, "zulip-export-x", "attachment.json"));
    await tar.c({ gzip: true, file: join(dir, "link.tar.gz"), cwd: src }, ["zulip-export-x"]);
    const withLink = await hearth(["import", "--format", "zulip", "--from", join(dir, "link.tar.gz"), "--data", join(dir, "t1")]);
    expect(withLink.code).toBe(1);
    expect(withLink.stderr).toContain("entries a Zulip export never has");

    // A tar whose entry climbs out of the folder, written by hand (tar tools refuse to make one).
    writeFileSync(join(dir, "climb.tar.gz"), Bun.gzipSync(Buffer.concat([tarEntry("../escaped.txt", "hello"), Buffer.alloc(1024)])));
    const climb = await hearth(["import", "--format", "zulip", "--from", join(dir, "climb.tar.gz"), "--data", join(dir, "t2")]);
    expect(climb.code).toBe(1);
    expect(existsSync(join(dir, "escaped.txt"))).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(["climb.tar.gz", "link.tar.gz", "src"]);
  }, 30_000);

  test("kill -9 during an import leaves no target folder", async () => {
    const dir = tempDir();
    const archive = join(dir, "export.tar.gz");
    expect((await hearth(["export", "--format", "zulip", "--data", s.dataDir, "--out", archive])).code).toBe(0);
    const target = join(dir, "imported");
    const proc = Bun.spawn([process.execPath, MAIN, "import", "--format", "zulip", "--from", archive, "--data", target], { stdout: "pipe", stderr: "pipe" });
    // Killed as soon as its working folder appears (the import is under way).
    while (!readdirSync(dir).some((n) => n.startsWith(".imported.importing-")) && proc.exitCode === null) await Bun.sleep(1);
    proc.kill(9);
    await proc.exited;
    expect(existsSync(target)).toBe(false);
    // The next import to that name clears what the killed one left and completes.
    const again = await hearth(["import", "--format", "zulip", "--from", archive, "--data", target]);
    expect(again.code).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(["export.tar.gz", "imported"]);
  }, 30_000);

  test("kill -9 during an export leaves no archive under the name asked for, and the next export clears its leftovers", async () => {
    const dir = tempDir();
    const archive = join(dir, "export.tar.gz");
    const proc = Bun.spawn([process.execPath, MAIN, "export", "--format", "zulip", "--data", s.dataDir, "--out", archive], { stdout: "pipe", stderr: "pipe" });
    while (!readdirSync(dir).some((n) => n.startsWith(".export.tar.gz.partial-")) && proc.exitCode === null) await Bun.sleep(1);
    proc.kill(9);
    await proc.exited;
    expect(existsSync(archive)).toBe(false);
    expect((await hearth(["export", "--format", "zulip", "--data", s.dataDir, "--out", archive])).code).toBe(0);
    expect(readdirSync(dir)).toEqual(["export.tar.gz"]);
  }, 30_000);
});
