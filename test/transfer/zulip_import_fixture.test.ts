/**
 * `hearth import --format zulip` of an export shaped as Zulip's converters and older
 * servers write it, not as Hearth's exporter does: no user-group tables, a mirror
 * dummy, a message from a cross-realm system bot, a 1:1 direct message through the
 * receiver's personal recipient, a group conversation known only through its
 * subscriptions, a message without rendered HTML, a custom emoji reaction by the
 * emoji's ID, an upload linked by path and an avatar. Checked over HTTP on a server
 * started on the imported folder.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import * as tar from "tar";
import { ApiClient, expectSuccess, startTestServer, type TestServer } from "../kit";
import { hearth, tempDir } from "../kit/process";
import { identiconPng } from "../../src/avatars/identicon";
import { Store } from "../../src/store/db";
import { allUsers } from "../../src/store/users";

const T = 1_700_000_000;
const parrot = identiconPng("parrot", 32) as Uint8Array;
const avatar = identiconPng("bob", 64) as Uint8Array;
const user = (id: number, email: string, full_name: string, role: number, extra: Record<string, unknown> = {}) => ({
  id, realm: 7, email, delivery_email: email, full_name, role, is_active: true, is_bot: false, bot_type: null, bot_owner: null, is_mirror_dummy: false,
  date_joined: T, last_login: null, last_reminder: null, timezone: "Europe/Paris", avatar_source: "G", avatar_version: 1, default_sending_stream: null,
  default_events_register_stream: null, last_active_message_id: null, user_permissions: [], groups: [], ...extra,
});
const sub = (id: number, user_profile: number, recipient: number, extra: Record<string, unknown> = {}) => ({ id, user_profile, recipient, active: true, color: "#76ce90", is_muted: false, pin_to_top: false, ...extra });

const REALM = {
  zerver_realm: [{ id: 7, string_id: "zulipco", name: "Zulip Co", description: "", date_created: T, deactivated: false, moderation_request_channel: null, new_stream_announcements_stream: 20, signup_announcements_stream: null, zulip_update_announcements_stream: null }],
  zerver_userprofile: [
    user(10, "alice@zulip.example", "Alice", 100),
    user(11, "bob@zulip.example", "Bob", 400, { avatar_source: "U", avatar_version: 2 }),
    user(12, "helper-bot@zulip.example", "Helper", 400, { is_bot: true, bot_type: 1, bot_owner: 10 }),
  ],
  zerver_userprofile_mirrordummy: [user(13, "carol@zulip.example", "Carol", 400, { is_mirror_dummy: true, is_active: false })],
  zerver_userprofile_crossrealm: [{ id: 1, email: "notification-bot@zulip.com", recipient_id: 1 }],
  zerver_client: [{ id: 1, name: "populate_db" }],
  zerver_stream: [
    { id: 20, realm: 7, name: "general", description: "Everything", invite_only: false, history_public_to_subscribers: true, is_web_public: false, deactivated: false, date_created: T, creator: null, folder: null, stream_post_policy: 1 },
    { id: 21, realm: 7, name: "secret", description: "", invite_only: true, history_public_to_subscribers: false, is_web_public: false, deactivated: false, date_created: T, creator: 10, folder: null },
  ],
  zerver_huddle: [{ id: 30, group_size: 3, huddle_hash: "x" }],
  zerver_recipient: [
    { id: 100, type: 1, type_id: 10 }, { id: 101, type: 1, type_id: 11 }, { id: 102, type: 1, type_id: 12 }, { id: 103, type: 1, type_id: 13 },
    { id: 110, type: 2, type_id: 20 }, { id: 111, type: 2, type_id: 21 }, { id: 120, type: 3, type_id: 30 },
  ],
  zerver_subscription: [
    sub(1, 10, 100), sub(2, 11, 101), sub(3, 12, 102), sub(4, 13, 103),
    sub(5, 10, 110), sub(6, 11, 110, { color: "#a47462", pin_to_top: true }), sub(7, 10, 111),
    sub(8, 10, 120), sub(9, 11, 120), sub(10, 13, 120),
  ],
  zerver_realmauthenticationmethod: [{ id: 1, realm: 7, name: "Email" }],
  zerver_defaultstream: [{ id: 1, realm: 7, stream: 20 }],
  zerver_realmemoji: [{ id: 40, realm: 7, author: 10, name: "partyparrot", file_name: "40.png", is_animated: false, deactivated: false }],
  zerver_realmdomain: [{ id: 1, realm: 7, domain: "zulip.example", allow_subdomains: false }],
  zerver_realmfilter: [{ id: 60, realm: 7, pattern: "#(?P<id>[0-9]+)", url_template: "https://t.example/{id}", order: 0 }],
  zerver_realmplayground: [],
  zerver_userpresence: [],
  zerver_useractivity: [],
  zerver_useractivityinterval: [],
  zerver_customprofilefield: [{ id: 50, realm: 7, name: "Team", hint: "", order: 1, field_type: 1, field_data: "" }],
  zerver_customprofilefieldvalue: [{ id: 1, user_profile: 11, field: 50, value: "Ops", rendered_value: null }],
  zerver_reaction: [
    { id: 1, message: 1000, user_profile: 11, emoji_name: "partyparrot", emoji_code: "40", reaction_type: "realm_emoji" },
    { id: 2, message: 1000, user_profile: 10, emoji_name: "+1", emoji_code: "1f44d", reaction_type: "unicode_emoji" },
  ],
  zerver_usertopic: [{ id: 1, user_profile: 11, stream: 20, recipient: 110, topic_name: "hello", last_updated: T, visibility_policy: 1 }],
  zerver_muteduser: [],
  import_source: "slack",
};

const message = (id: number, sender: number, recipient: number, subject: string, content: string, rendered: string | null, extra: Record<string, unknown> = {}) => ({
  id, sender, recipient, realm: 7, sending_client: 1, subject, content, rendered_content: rendered, rendered_content_version: 1, date_sent: T + id,
  last_edit_time: null, edit_history: null, has_attachment: false, has_image: false, has_link: false, is_channel_message: recipient >= 110 && recipient < 120, ...extra,
});
const MESSAGES = {
  zerver_message: [
    message(1000, 10, 110, "hello", "Hi **all**, see /user_uploads/7/ab/xyz/report.txt", "<p>Hi <strong>all</strong>, see /user_uploads/7/ab/xyz/report.txt</p>", { has_attachment: true }),
    message(1001, 11, 100, "", "psst <b>", null),
    message(1002, 13, 120, "", "group hello", "<p>group hello</p>"),
    message(1003, 1, 101, "", "welcome, Bob", "<p>welcome, Bob</p>"),
    message(1004, 10, 111, "plans", "secret plans", "<p>secret plans</p>"),
  ],
  zerver_usermessage: [
    { id: 1, user_profile: 10, message: 1000, flags_mask: 1 },
    { id: 2, user_profile: 11, message: 1000, flags_mask: 2 },
    { id: 3, user_profile: 12, message: 1000, flags_mask: 1 },
    { id: 4, user_profile: 10, message: 1001, flags_mask: 2048 },
    { id: 5, user_profile: 11, message: 1001, flags_mask: 2049 },
    { id: 6, user_profile: 10, message: 1002, flags_mask: 2048 },
    { id: 7, user_profile: 11, message: 1002, flags_mask: 2049 | 2 },
    { id: 8, user_profile: 13, message: 1002, flags_mask: 2049 },
    { id: 9, user_profile: 11, message: 1003, flags_mask: 2048 },
    { id: 10, user_profile: 10, message: 1004, flags_mask: 1 },
  ],
};

let server: TestServer;
let keys: Map<string, string>;
const clientOf = (email: string) => new ApiClient(server.url, email, keys.get(email)!);

beforeAll(async () => {
  const dir = tempDir();
  const root = join(dir, "src", "zulip-export-7");
  const write = (path: string, data: string | Uint8Array) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), data);
  };
  write("realm.json", JSON.stringify(REALM));
  write("messages-000001.json", JSON.stringify(MESSAGES));
  write("migration_status.json", JSON.stringify({ zulip_version: "11.2", migrations_by_app: { zerver: ["[X] 0001_initial"] } }));
  write("attachment.json", JSON.stringify({ zerver_attachment: [{ id: 70, file_name: "report.txt", path_id: "7/ab/xyz/report.txt", owner: 10, realm: 7, create_time: T, size: 5, content_type: "text/plain", is_realm_public: true, is_web_public: false, messages: [1000], scheduled_messages: [] }] }));
  write("uploads/records.json", JSON.stringify([{ realm_id: 7, user_profile_id: 10, s3_path: "7/ab/xyz/report.txt", path: "7/ab/xyz/report.txt", size: 5, content_type: "text/plain" }]));
  write("uploads/7/ab/xyz/report.txt", "hello");
  write("avatars/records.json", JSON.stringify([{ realm_id: 7, user_profile_id: 11, avatar_version: 2, s3_path: "7/bobhash.original", path: "7/bobhash.original", content_type: "image/png" }]));
  write("avatars/7/bobhash.original", avatar);
  write("emoji/records.json", JSON.stringify([{ realm_id: 7, author: 10, path: "7/emoji/images/40.png", s3_path: "7/emoji/images/40.png", file_name: "40.png", name: "partyparrot", deactivated: false }]));
  write("emoji/7/emoji/images/40.png", parrot);
  const archive = join(dir, "zulip.tar.gz");
  await tar.c({ gzip: true, file: archive, cwd: join(dir, "src") }, ["zulip-export-7"]);

  // Not under tempDir(): its cleanup may run before the server below has stopped.
  serverParent = mkdtempSync(join(tmpdir(), "hearth-import-fixture-"));
  const target = join(serverParent, "hearth");
  const run = await hearth(["import", "--format", "zulip", "--from", archive, "--data", target]);
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  expect(run.stdout).toContain("Imported 4 users, 2 channels, 5 messages, 2 reactions and 1 uploaded file from Zulip 11.2");
  const store = new Store(target);
  keys = new Map([...allUsers(store)].map((u) => [u.email, u.api_key]));
  await store.close();
  server = await startTestServer({ dataDir: target });
}, 30_000);
let serverParent: string;
afterAll(async () => {
  await server?.stop();
  rmSync(serverParent, { recursive: true, force: true });
});

describe("import of a Zulip export written by Zulip's tools", () => {
  test("users, bots, the mirror dummy and the system bots are mapped; the realm keeps its name", async () => {
    const members = expectSuccess(await clientOf("alice@zulip.example").get("/users")).members as any[];
    const byEmail = new Map(members.map((u) => [u.delivery_email ?? u.email, u]));
    expect(byEmail.get("alice@zulip.example")).toMatchObject({ full_name: "Alice", role: 100, is_active: true, is_bot: false, timezone: "Europe/Paris" });
    expect(byEmail.get("bob@zulip.example")).toMatchObject({ role: 400, is_active: true });
    expect(byEmail.get("carol@zulip.example")).toMatchObject({ is_active: false });
    expect(byEmail.get("helper-bot@zulip.example")).toMatchObject({ is_bot: true, bot_owner_id: byEmail.get("alice@zulip.example").user_id });
    const settings = expectSuccess(await clientOf("alice@zulip.example").post("/register", { fetch_event_types: JSON.stringify(["realm"]) }));
    expect(settings.realm_name).toBe("Zulip Co");
  });

  test("each user sees their messages with Zulip's flags, reactions and HTML; the group and 1:1 conversations and the bot's message land right", async () => {
    const seen = async (email: string) => {
      const body = expectSuccess(await clientOf(email).get("/messages", { anchor: "oldest", num_before: 0, num_after: 100 }));
      return body.messages.map((m: any) => ({
        content: m.content,
        sender: m.sender_email,
        to: m.type === "stream" ? `#${m.display_recipient}>${m.subject}` : (m.display_recipient as any[]).map((r) => r.email).sort().join(","),
        flags: [...m.flags].sort(),
        reactions: m.reactions.map((r: any) => r.emoji_name).sort(),
      }));
    };
    expect(await seen("bob@zulip.example")).toEqual([
      { content: "<p>Hi <strong>all</strong>, see /user_uploads/7/ab/xyz/report.txt</p>", sender: "alice@zulip.example", to: "#general>hello", flags: ["starred"], reactions: ["+1", "partyparrot"] },
      { content: "<p>psst &#60;b&#62;</p>", sender: "bob@zulip.example", to: "alice@zulip.example,bob@zulip.example", flags: ["read"], reactions: [] },
      { content: "<p>group hello</p>", sender: "carol@zulip.example", to: "alice@zulip.example,bob@zulip.example,carol@zulip.example", flags: ["read", "starred"], reactions: [] },
      { content: "<p>welcome, Bob</p>", sender: "notification-bot@zulip.com", to: "bob@zulip.example,notification-bot@zulip.com", flags: [], reactions: [] },
    ]);
    const alice = await seen("alice@zulip.example");
    expect(alice.map((m: any) => [m.to, m.flags])).toEqual([
      ["#general>hello", ["read"]],
      ["alice@zulip.example,bob@zulip.example", []],
      ["alice@zulip.example,bob@zulip.example,carol@zulip.example", []],
      ["#secret>plans", ["read"]],
    ]);
    const raw = expectSuccess(await clientOf("bob@zulip.example").get("/messages", { anchor: "oldest", num_before: 0, num_after: 2, apply_markdown: false }));
    expect(raw.messages[1].content).toBe("psst <b>");
    // Unread: the welcome from the bot; the channel message is unread too, but in a topic Bob muted.
    const unread = expectSuccess(await clientOf("bob@zulip.example").post("/register", {})).unread_msgs;
    expect(unread.count).toBe(1);
    expect(unread.pms).toHaveLength(1);
    // Bob is not in the private channel, whose history is not public to subscribers anyway.
    const search = expectSuccess(await clientOf("bob@zulip.example").get("/messages", { anchor: "newest", num_before: 10, num_after: 0, narrow: JSON.stringify([{ operator: "search", operand: "plans" }]) }));
    expect(search.messages).toEqual([]);
  });

  test("channels, subscriptions, topic visibility, profile fields, linkifiers, emoji, uploads and avatars", async () => {
    const bob = clientOf("bob@zulip.example");
    const subs = expectSuccess(await bob.get("/users/me/subscriptions")).subscriptions as any[];
    expect(subs.map((s) => ({ name: s.name, color: s.color, pin_to_top: s.pin_to_top }))).toEqual([{ name: "general", color: "#a47462", pin_to_top: true }]);
    const all = expectSuccess(await clientOf("alice@zulip.example").get("/streams", { include_all: true })).streams as any[];
    expect(all.map((s) => [s.name, s.invite_only, s.description]).sort()).toEqual([["general", false, "Everything"], ["secret", true, ""]]);
    const state = expectSuccess(await bob.post("/register", {}));
    expect(state.user_topics).toContainEqual(expect.objectContaining({ topic_name: "hello", visibility_policy: 1 }));
    const general = all.find((s) => s.name === "general");
    expect(state.realm_default_streams.map((s: any) => (typeof s === "number" ? s : s.stream_id))).toEqual([general.stream_id]);
    expect(state.custom_profile_fields.map((f: any) => f.name)).toEqual(["Team"]);
    const me = expectSuccess(await bob.get(`/users/${state.user_id}`, { include_custom_profile_fields: true })).user;
    expect(Object.values(me.profile_data).map((v: any) => v.value)).toEqual(["Ops"]);
    expect(expectSuccess(await bob.get("/realm/linkifiers")).linkifiers.map((l: any) => l.url_template)).toEqual(["https://t.example/{id}"]);
    const emoji = Object.values(expectSuccess(await bob.get("/realm/emoji")).emoji) as any[];
    expect(emoji.map((e) => e.name)).toEqual(["partyparrot"]);
    const emojiImage = await fetch(server.url + new URL(emoji[0].source_url, server.url).pathname);
    expect(Buffer.from(await emojiImage.arrayBuffer())).toEqual(Buffer.from(parrot));

    const auth = { authorization: "Basic " + Buffer.from(`bob@zulip.example:${keys.get("bob@zulip.example")}`).toString("base64") };
    const file = await fetch(`${server.url}/user_uploads/7/ab/xyz/report.txt`, { headers: auth });
    expect(file.status).toBe(200);
    expect(await file.text()).toBe("hello");
    const avatarResponse = await fetch(me.avatar_url, { headers: auth });
    expect(avatarResponse.status).toBe(200);
    expect(Buffer.from(await avatarResponse.arrayBuffer())).toEqual(Buffer.from(avatar));
  });
});
