/**
 * Every requirement of the client requirements document (client-requirements.md, the
 * project's reference on what each Zulip client needs; not part of this repository),
 * checked over real HTTP against a real server, the way each client calls it:
 *  - ZF  zulip-flutter: urlencoded bodies, JSON for non-strings, strings raw, its User-Agent;
 *  - ZT  zulip-terminal and PY / BOT (python `zulip`): urlencoded, non-strings JSON-dumped;
 *  - JS  zulip-js: multipart POSTs with String()-ed values, PATCH / DELETE in the query.
 * Section references (§n, "line n") point into client-requirements.md. Requirements Hearth
 * did not meet when this file was written were fixed; their tests quote the requirement.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { MOBILE_APP_CAPABILITIES, PASSWORD, readResponse, startTestServer, type CastName, type Params, type TestServer, type TestUser } from "../kit";
import { drainEvents, type ApiEventJson } from "../kit/events";

// ---------------------------------------------------------------------------------------
// Small type-check helpers. A check pushes "path: problem" strings; `expectShape` fails
// with all of them. `opt` = may be absent or null (ZF "opt"); `def` = may be absent (ZF
// "def": a default applies); everything else is required and must not be null unless
// wrapped in `nullable`.
// ---------------------------------------------------------------------------------------
type Check = (v: unknown, path: string, errs: string[]) => void;
const show = (v: unknown) => {
  const s = JSON.stringify(v);
  return s === undefined ? "undefined" : s.length > 80 ? s.slice(0, 80) + "…" : s;
};
const int: Check = (v, p, e) => void (Number.isInteger(v) || e.push(`${p}: expected int, got ${show(v)}`));
const num: Check = (v, p, e) => void (typeof v === "number" || e.push(`${p}: expected number, got ${show(v)}`));
const str: Check = (v, p, e) => void (typeof v === "string" || e.push(`${p}: expected string, got ${show(v)}`));
const bool: Check = (v, p, e) => void (typeof v === "boolean" || e.push(`${p}: expected bool, got ${show(v)}`));
const any: Check = () => {};
const oneOf =
  (...values: unknown[]): Check =>
  (v, p, e) =>
    void (values.includes(v) || e.push(`${p}: expected one of ${show(values)}, got ${show(v)}`));
const matches =
  (re: RegExp): Check =>
  (v, p, e) =>
    void (typeof v === "string" && re.test(v) ? 0 : e.push(`${p}: expected string matching ${re}, got ${show(v)}`));
const nullable =
  (c: Check): Check =>
  (v, p, e) =>
    v === null ? undefined : c(v, p, e);
const list =
  (c: Check): Check =>
  (v, p, e) => {
    if (!Array.isArray(v)) return void e.push(`${p}: expected list, got ${show(v)}`);
    v.forEach((x, i) => c(x, `${p}[${i}]`, e));
  };
const map =
  (c: Check, key: RegExp = /.*/): Check =>
  (v, p, e) => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return void e.push(`${p}: expected object, got ${show(v)}`);
    for (const [k, x] of Object.entries(v)) {
      if (!key.test(k)) e.push(`${p}: key ${show(k)} does not match ${key}`);
      c(x, `${p}.${k}`, e);
    }
  };
const union =
  (...cs: Check[]): Check =>
  (v, p, e) => {
    for (const c of cs) {
      const mine: string[] = [];
      c(v, p, mine);
      if (mine.length === 0) return;
    }
    e.push(`${p}: matches none of the alternatives: ${show(v)}`);
  };
const both =
  (...cs: Check[]): Check =>
  (v, p, e) =>
    cs.forEach((c) => c(v, p, e));
const absUrl: Check = (v, p, e) => {
  try {
    if (typeof v !== "string" || !/^https?:$/.test(new URL(v).protocol)) throw 0;
  } catch {
    e.push(`${p}: expected an absolute http(s) URL, got ${show(v)}`);
  }
};
const urlMaybeRelative: Check = (v, p, e) => {
  try {
    if (typeof v !== "string") throw 0;
    new URL(v, "http://realm.example");
  } catch {
    e.push(`${p}: expected a URL string, got ${show(v)}`);
  }
};
const sortedUniqueInts: Check = (v, p, e) => {
  list(int)(v, p, e);
  if (Array.isArray(v) && !v.every((x, i) => i === 0 || x > v[i - 1])) e.push(`${p}: not sorted without duplicates: ${show(v)}`);
};

const OPT = Symbol("opt");
const DEF = Symbol("def");
type Field = Check | { [OPT]: Check } | { [DEF]: Check };
/** May be absent or null. */
const opt = (c: Check): Field => ({ [OPT]: c });
/** May be absent (a default applies); if present, typed. */
const def = (c: Check): Field => ({ [DEF]: c });
const obj =
  (fields: Record<string, Field>): Check =>
  (v, p, e) => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return void e.push(`${p}: expected object, got ${show(v)}`);
    const o = v as Record<string, unknown>;
    for (const [k, f] of Object.entries(fields)) {
      if (typeof f === "function") {
        if (!(k in o)) e.push(`${p}.${k}: missing`);
        else f(o[k], `${p}.${k}`, e);
      } else if (OPT in f) {
        if (o[k] !== undefined && o[k] !== null) f[OPT](o[k], `${p}.${k}`, e);
      } else if (o[k] !== undefined) f[DEF](o[k], `${p}.${k}`, e);
    }
  };

function expectShape(check: Check, value: unknown, label = "response"): void {
  const errs: string[] = [];
  check(value, label, errs);
  if (errs.length > 0) throw new Error(`${errs.length} requirement(s) not met:\n  ${errs.slice(0, 25).join("\n  ")}`);
}

// ---------------------------------------------------------------------------------------
// The object models of §4 ("Nested models") and §6 ("Message object").
// ---------------------------------------------------------------------------------------
const GroupSettingValue = union(int, obj({ direct_members: list(int), direct_subgroups: list(int) }));

/** §4 nested models, User (line 191). */
const ZfUser = obj({
  user_id: int,
  email: str,
  full_name: str,
  date_joined: str,
  is_bot: bool,
  role: int,
  timezone: str,
  avatar_version: int,
  delivery_email: opt(str),
  bot_type: opt(int),
  bot_owner_id: opt(int),
  avatar_url: opt(str),
  profile_data: opt(map(obj({ value: str, rendered_value: opt(str) }), /^\d+$/)),
  is_active: opt(bool),
  is_system_bot: def(bool),
});

/** §4 nested models, ZulipStream (line 192). */
const zulipStreamFields: Record<string, Field> = {
  stream_id: int,
  name: str,
  description: str,
  rendered_description: str,
  date_created: int,
  invite_only: bool,
  is_web_public: bool,
  history_public_to_subscribers: bool,
  is_archived: def(bool),
  first_message_id: opt(int),
  message_retention_days: opt(int),
  topics_policy: def(str),
  stream_post_policy: def(oneOf(1, 2, 3, 4)),
  folder_id: opt(int),
  can_add_subscribers_group: opt(GroupSettingValue),
  can_delete_any_message_group: opt(GroupSettingValue),
  can_delete_own_message_group: opt(GroupSettingValue),
  can_send_message_group: opt(GroupSettingValue),
  can_subscribe_group: opt(GroupSettingValue),
  is_recently_active: opt(bool),
  stream_weekly_traffic: opt(int),
};
const ZulipStream = obj(zulipStreamFields);

/** §4 nested models, Subscription (line 193). */
const ZfSubscription = obj({
  ...zulipStreamFields,
  pin_to_top: bool,
  is_muted: bool,
  color: matches(/^#[0-9a-f]{6}$/),
  desktop_notifications: opt(bool),
  email_notifications: opt(bool),
  wildcard_mentions_notify: opt(bool),
  push_notifications: opt(bool),
  audible_notifications: opt(bool),
});

/** §4 nested models, UserSettings (line 194). */
const ZfUserSettings = obj({
  starred_message_counts: bool,
  display_emoji_reaction_users: bool,
  emojiset: str,
  presence_enabled: bool,
  twenty_four_hour_time: opt(bool),
  web_inbox_show_channel_folders: def(bool),
});

/** §4 nested models, CustomProfileField (line 195). */
const CustomProfileField = obj({ id: int, type: int, order: int, name: str, hint: str, field_data: str, display_in_profile_summary: opt(bool) });

/** §4 nested models, RealmEmojiItem (line 196). */
const RealmEmojiItem = obj({ id: str, name: str, source_url: str, deactivated: bool, still_url: opt(str), author_id: opt(int) });

/** §4 nested models, UserGroup (line 197). */
const UserGroup = obj({ id: int, members: list(int), direct_subgroup_ids: list(int), name: str, description: str, is_system_group: bool, deactivated: def(bool) });

/** §4 nested models, RecentDmConversation (line 198). */
const RecentDm = obj({ max_message_id: int, user_ids: list(int) });

const REACTION_TYPES = ["unicode_emoji", "realm_emoji", "zulip_extra_emoji"];
const KNOWN_FLAGS = ["read", "starred", "collapsed", "mentioned", "wildcard_mentioned", "stream_wildcard_mentioned", "topic_wildcard_mentioned", "has_alert_word", "historical"];

/** §6 "Message object" (lines 269-282), without `flags` (events carry them at the top level). */
function messageCheck(selfId: number | null, withFlags: boolean): Check {
  const common: Record<string, Field> = {
    id: int,
    sender_id: int,
    timestamp: int,
    type: oneOf("stream", "private"),
    client: str,
    content: str,
    content_type: str,
    sender_email: str,
    sender_full_name: str,
    sender_realm_str: str,
    is_me_message: bool,
    reactions: list(obj({ emoji_name: str, emoji_code: str, reaction_type: oneOf(...REACTION_TYPES), user_id: int })),
    // ZT indexes `subject` on DMs too ("so send \"\""), and it is required for stream messages.
    subject: str,
    last_edit_timestamp: opt(int),
    edit_history: opt(list(any)),
    submessages: opt(list(any)),
    match_content: opt(str),
    match_subject: opt(str),
  };
  if (withFlags) common.flags = list(str);
  const base = obj(common);
  return (v, p, e) => {
    base(v, p, e);
    const m = v as Record<string, any>;
    if (m?.type === "stream") {
      obj({ stream_id: int, display_recipient: str })(m, p, e);
    } else if (m?.type === "private") {
      obj({ display_recipient: list(obj({ id: int, email: str, full_name: str })) })(m, p, e);
      if (selfId !== null && Array.isArray(m.display_recipient) && !m.display_recipient.some((r: any) => r.id === selfId)) {
        e.push(`${p}.display_recipient: does not include the self user ${selfId}`);
      }
    }
  };
}

/** §4 "ZF InitialSnapshot" table (lines 134-183). */
function zfInitialSnapshot(selfId: number): Check {
  const snapshot = obj({
    queue_id: str,
    last_event_id: int,
    zulip_feature_level: both(int, (v, p, e) => void ((v as number) >= 277 || e.push(`${p}: below ZF's minimum 277: ${v}`))),
    zulip_version: str,
    zulip_merge_base: str,
    alert_words: list(str),
    custom_profile_fields: list(CustomProfileField),
    max_stream_name_length: int,
    max_topic_length: int,
    server_presence_ping_interval_seconds: int,
    server_presence_offline_threshold_seconds: int,
    server_typing_started_expiry_period_milliseconds: def(int),
    server_typing_stopped_wait_period_milliseconds: def(int),
    server_typing_started_wait_period_milliseconds: def(int),
    muted_users: list(obj({ id: int })),
    presences: map(obj({ active_timestamp: int, idle_timestamp: int }), /^\d+$/),
    realm_emoji: map(RealmEmojiItem),
    realm_user_groups: list(UserGroup),
    recent_private_conversations: list(RecentDm),
    saved_snippets: opt(list(obj({ id: int, title: str, content: str, date_created: int }))),
    subscriptions: list(ZfSubscription),
    channel_folders: opt(list(any)),
    unread_msgs: obj({
      count: int,
      pms: list(obj({ other_user_id: int, unread_message_ids: sortedUniqueInts })),
      streams: list(obj({ topic: str, stream_id: int, unread_message_ids: sortedUniqueInts })),
      huddles: list(obj({ user_ids_string: str, unread_message_ids: sortedUniqueInts })),
      mentions: sortedUniqueInts,
      old_unreads_missing: bool,
    }),
    starred_messages: list(int),
    streams: list(ZulipStream),
    user_status: map(obj({ status_text: opt(str), emoji_name: opt(str), emoji_code: opt(str), reaction_type: opt(str) }), /^\d+$/),
    user_settings: ZfUserSettings,
    user_topics: list(obj({ stream_id: int, topic_name: str, last_updated: int, visibility_policy: oneOf(0, 1, 2, 3) })),
    devices: opt(map(any)),
    realm_can_delete_any_message_group: opt(GroupSettingValue),
    realm_can_delete_own_message_group: opt(GroupSettingValue),
    realm_delete_own_message_policy: opt(oneOf(1, 2, 3, 4, 5)),
    realm_wildcard_mention_policy: oneOf(1, 2, 3, 5, 6, 7),
    realm_topics_policy: opt(str),
    realm_mandatory_topics: opt(bool),
    realm_name: str,
    realm_waiting_period_threshold: int,
    realm_message_content_delete_limit_seconds: opt(int),
    realm_message_content_edit_limit_seconds: opt(int),
    realm_allow_message_editing: bool,
    realm_enable_read_receipts: bool,
    realm_presence_disabled: bool,
    realm_icon_url: urlMaybeRelative,
    realm_default_external_accounts: map(obj({ name: str, text: str, hint: str, url_pattern: str })),
    max_file_upload_size_mib: int,
    server_thumbnail_formats: def(list(obj({ name: str, max_width: int, max_height: int, animated: bool, format: str }))),
    server_emoji_data_url: absUrl,
    event_queue_longpoll_timeout_seconds: int,
    realm_moderation_request_channel_id: opt(int),
    // opt, but "expected when FL >= 334" (line 179), and Hearth claims 508.
    realm_empty_topic_display_name: str,
    realm_users: list(ZfUser),
    realm_non_active_users: list(ZfUser),
    cross_realm_bots: list(ZfUser),
    server_report_message_types: opt(list(obj({ key: str, name: str }))),
  });
  return (v, p, e) => {
    snapshot(v, p, e);
    const s = v as Record<string, any>;
    if (!Array.isArray(s.realm_users) || !s.realm_users.some((u: any) => u.user_id === selfId)) e.push(`${p}.realm_users: does not include the self user ${selfId}`);
    if (typeof s.realm_topics_policy === "string" && !["allow_empty_topic", "disable_empty_topic", "inherit"].includes(s.realm_topics_policy)) {
      // Unknown values are tolerated by ZF; only the type matters.
    }
  };
}

// ---------------------------------------------------------------------------------------
// Clients on the wire (§2 "Transport conventions").
// ---------------------------------------------------------------------------------------
type Style = "zf" | "py" | "js";
const UA: Record<Style, string> = {
  zf: "ZulipFlutter/30.0.274+274 (Android 14)",
  py: "ZulipPython/0.9.1 (Debian; 12)",
  js: "node-fetch/1.0 (+https://github.com/bitinn/node-fetch)",
};
const ZT_UA = "ZulipTerminal/0.7.0+git Linux (Debian; 12)";

interface Reply {
  status: number;
  body: any;
  headers: Headers;
  text: string;
}

/** ZF / PY: strings raw, everything else JSON. */
const encodePy = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));
/** zulip-js: arrays JSON-stringified, everything else through String(). */
const encodeJs = (v: unknown) => (Array.isArray(v) ? JSON.stringify(v) : String(v));

class Wire {
  constructor(
    readonly base: string,
    readonly user: TestUser | null,
    readonly style: Style,
    readonly ua: string = UA[style],
  ) {}

  private auth(): Record<string, string> {
    return this.user ? { authorization: "Basic " + Buffer.from(`${this.user.email}:${this.user.apiKey}`).toString("base64") } : {};
  }

  /**
   * One call as this client makes it. `query` adds extra query-string parameters on top
   * (zulip-js echoes some into the query even for POSTs).
   */
  async call(method: string, path: string, params: Params = {}, options: { query?: Params; files?: Record<string, File> } = {}): Promise<Reply> {
    const url = new URL(this.base + "/api/v1" + path);
    const enc = this.style === "js" ? encodeJs : encodePy;
    const entries = Object.entries(params).filter(([, v]) => v !== undefined);
    for (const [k, v] of Object.entries(options.query ?? {})) url.searchParams.set(k, enc(v));
    const headers: Record<string, string> = { ...this.auth(), "user-agent": this.ua };
    let body: BodyInit | undefined;
    const inQuery = method === "GET" || (this.style === "js" && (method === "PATCH" || method === "DELETE"));
    if (inQuery) {
      for (const [k, v] of entries) url.searchParams.set(k, enc(v));
    } else if (this.style === "js" || options.files) {
      const form = new FormData();
      for (const [k, v] of entries) form.append(k, enc(v));
      for (const [k, f] of Object.entries(options.files ?? {})) form.append(k, f, f.name);
      body = form;
    } else {
      body = new URLSearchParams(entries.map(([k, v]) => [k, enc(v)])).toString();
      headers["content-type"] = "application/x-www-form-urlencoded";
    }
    return readResponse(await fetch(url, { method, headers, body }));
  }
  get(path: string, params?: Params) {
    return this.call("GET", path, params);
  }
  post(path: string, params?: Params, options?: { query?: Params; files?: Record<string, File> }) {
    return this.call("POST", path, params, options);
  }
  patch(path: string, params?: Params) {
    return this.call("PATCH", path, params);
  }
  delete(path: string, params?: Params) {
    return this.call("DELETE", path, params);
  }
  put(path: string, params?: Params) {
    return this.call("PUT", path, params);
  }
}

function ok(r: Reply): any {
  if (r.status !== 200 || r.body?.result !== "success") throw new Error(`expected success, got HTTP ${r.status}: ${r.text.slice(0, 500)}`);
  expect(typeof r.body.msg).toBe("string");
  return r.body;
}

// ---------------------------------------------------------------------------------------
// Register parameters exactly as each client sends them (§4 "Parameters sent").
// ---------------------------------------------------------------------------------------
const ZF_CAPABILITIES = MOBILE_APP_CAPABILITIES;
const ZF_REGISTER: Params = {
  apply_markdown: true,
  client_gravatar: false,
  slim_presence: true,
  client_capabilities: ZF_CAPABILITIES,
  // A JSON string: the kit-style encoder sends strings raw, so quote it here.
  idle_queue_timeout: '"mobile"',
};
const ZT_EVENT_TYPES = ["message", "update_message", "reaction", "submessage", "subscription", "typing", "update_message_flags", "user_settings", "realm_emoji", "realm_user"];
const ZT_FETCH_EVENT_TYPES = [
  "realm",
  "presence",
  "subscription",
  "message",
  "starred_messages",
  "update_message_flags",
  "muted_topics",
  "realm_user",
  "realm_user_groups",
  "user_settings",
  "realm_emoji",
  "custom_profile_fields",
  "zulip_version",
];
const ZT_REGISTER: Params = {
  event_types: ZT_EVENT_TYPES,
  fetch_event_types: ZT_FETCH_EVENT_TYPES,
  narrow: [],
  apply_markdown: true,
  client_gravatar: true,
  include_subscribers: true,
};

let s: TestServer;
const fx: Record<string, any> = {};
const id = (who: CastName) => s.users[who].id;
const zf = (who: CastName | TestUser) => new Wire(s.url, typeof who === "string" ? s.users[who] : who, "zf");
const zt = (who: CastName | TestUser) => new Wire(s.url, typeof who === "string" ? s.users[who] : who, "py", ZT_UA);
const py = (who: CastName | TestUser) => new Wire(s.url, typeof who === "string" ? s.users[who] : who, "py");
const js = (who: CastName | TestUser) => new Wire(s.url, typeof who === "string" ? s.users[who] : who, "js");
const anon = (style: Style) => new Wire(s.url, null, style);

/** A ZF event queue for `who`; `events()` drains it (heartbeats removed). */
/**
 * A ZF event queue for `who`. `events()` drains it (heartbeats removed) and checks EVERY
 * event in it against ZF's parser (§5 line 221: one malformed event of a known type
 * fails the whole GET /events response), not only the ones a test looks at.
 */
async function zfQueue(who: CastName | TestUser, extra: Params = {}) {
  const client = zf(who);
  const state = ok(await client.post("/register", { ...ZF_REGISTER, ...extra }));
  const selfId = state.user_id as number;
  return {
    state,
    client,
    events: async () => {
      const events = await drain(who, state.queue_id);
      for (const e of events) expectShape(zfEventCheck(selfId), e, `${e.type}${e.op ? "/" + e.op : ""} event`);
      return events;
    },
  };
}
/** Drains a queue of any user (the kit's client needs a cast name or TestUser). */
async function drain(who: CastName | TestUser, queueId: string): Promise<ApiEventJson[]> {
  return drainEvents(s.as(who as any), queueId);
}
/** A ZT event queue; every event of ZT's ten types is checked against what ZT reads (§5 lines 241-247). */
async function ztQueue(who: CastName) {
  const state = ok(await zt(who).post("/register", ZT_REGISTER));
  return {
    state,
    events: async () => {
      const events = await drain(who, state.queue_id);
      for (const e of events) expectShape(ztEventCheck, e, `${e.type}${e.op ? "/" + e.op : ""} event (ZT)`);
      return events;
    },
  };
}
const eventBaseCheck = obj({ id: int, type: str });

/** §5 update_message (line 227): what ZF reads of every update_message event. */
const UPDATE_MESSAGE_FIELDS: Record<string, Field> = {
  rendering_only: bool,
  message_id: int,
  message_ids: list(int),
  flags: list(oneOf(...KNOWN_FLAGS)),
  edit_timestamp: int,
  user_id: opt(int),
  content: opt(str),
  rendered_content: opt(str),
  orig_content: opt(str),
  orig_rendered_content: opt(str),
  is_me_message: opt(bool),
};

/** §5 "ZF event parsing" (lines 217-239), by type and op; unknown types and ops are safe. */
function zfEventCheck(selfId: number): Check {
  const byType: Record<string, (e: any) => Check | undefined> = {
    heartbeat: () => obj({}),
    message: () => obj({ message: messageCheck(selfId, false), flags: list(str), local_message_id: opt(str) }),
    update_message: (e) => {
      const base: Record<string, Field> = UPDATE_MESSAGE_FIELDS;
      const isMove = ["propagate_mode", "orig_subject", "subject", "new_stream_id"].some((k) => k in e);
      return obj(isMove ? { ...base, stream_id: int, orig_subject: str, propagate_mode: oneOf("change_one", "change_later", "change_all"), new_stream_id: opt(int), subject: opt(str) } : base);
    },
    delete_message: (e) =>
      e.message_type === "stream" ? obj({ message_ids: list(int), message_type: oneOf("stream"), stream_id: int, topic: str }) : obj({ message_ids: list(int), message_type: oneOf("private") }),
    update_message_flags: (e) =>
      e.op === "add" ? obj({ op: str, flag: str, messages: list(int), all: bool }) : e.op === "remove" ? obj({ op: str, flag: str, messages: list(int), message_details: opt(map(obj({ type: oneOf("stream", "private") }))) }) : undefined,
    reaction: () => obj({ op: str, emoji_name: str, emoji_code: str, reaction_type: oneOf(...REACTION_TYPES), user_id: int, message_id: int }),
    typing: (e) =>
      obj(
        e.message_type === "stream"
          ? { op: str, message_type: oneOf("stream"), sender: obj({ user_id: int }), stream_id: int, topic: str }
          : { op: str, message_type: oneOf("direct", "private"), sender: obj({ user_id: int }), recipients: list(obj({ user_id: int })) },
      ),
    presence: () => obj({ user_id: int, server_timestamp: num, presence: map(obj({ client: str, status: oneOf("active", "idle"), timestamp: int, pushable: bool })) }),
    subscription: (e) =>
      ({
        add: obj({ op: str, subscriptions: list(ZfSubscription) }),
        remove: obj({ op: str, subscriptions: list(obj({ stream_id: int })) }),
        update: obj({ op: str, stream_id: int, property: str, value: any }),
        peer_add: obj({ op: str, stream_ids: list(int), user_ids: list(int) }),
        peer_remove: obj({ op: str, stream_ids: list(int), user_ids: list(int) }),
      })[e.op as string],
    stream: (e) =>
      ({
        create: obj({ op: str, streams: list(ZulipStream) }),
        delete: union(obj({ op: str, stream_ids: list(int) }), obj({ op: str, streams: list(obj({ stream_id: int })) })),
        update: obj({ op: str, stream_id: int, name: str, property: str, value: any, rendered_description: opt(str), history_public_to_subscribers: opt(bool), is_web_public: opt(bool) }),
      })[e.op as string],
    realm_user: (e) =>
      ({ add: obj({ op: str, person: ZfUser }), remove: obj({ op: str, person: obj({ user_id: int }) }), update: obj({ op: str, person: obj({ user_id: int }) }) })[e.op as string],
    user_settings: (e) => (e.op === "update" ? obj({ op: str, property: str, value: any }) : undefined),
    realm_emoji: (e) =>
      ({
        add: obj({ op: str, emoji: RealmEmojiItem }),
        update_one: obj({ op: str, emoji_id: str, data: map(any) }),
        update: obj({ op: str, realm_emoji: map(RealmEmojiItem) }),
      })[e.op as string],
    user_topic: () => obj({ stream_id: int, topic_name: str, last_updated: int, visibility_policy: oneOf(0, 1, 2, 3) }),
    alert_words: () => obj({ alert_words: list(str) }),
    custom_profile_fields: () => obj({ fields: list(CustomProfileField) }),
    muted_users: () => obj({ muted_users: list(obj({ id: int, timestamp: int })) }),
    user_status: () => obj({ user_id: int, status_text: opt(str), emoji_name: opt(str), emoji_code: opt(str), reaction_type: opt(str) }),
    user_group: (e) =>
      ({
        add: obj({ op: str, group: UserGroup }),
        update: obj({ op: str, group_id: int, data: map(any) }),
        add_members: obj({ op: str, group_id: int, user_ids: list(int) }),
        remove_members: obj({ op: str, group_id: int, user_ids: list(int) }),
        add_subgroups: obj({ op: str, group_id: int, direct_subgroup_ids: list(int) }),
        remove_subgroups: obj({ op: str, group_id: int, direct_subgroup_ids: list(int) }),
        remove: obj({ op: str, group_id: int }),
      })[e.op as string],
    saved_snippets: (e) =>
      ({
        add: obj({ op: str, saved_snippet: obj({ id: int, title: str, content: str, date_created: int }) }),
        update: obj({ op: str, saved_snippet: obj({ id: int, title: str, content: str, date_created: int }) }),
        remove: obj({ op: str, saved_snippet_id: int }),
      })[e.op as string],
    channel_folder: (e) => (e.op === "add" ? obj({ op: str, channel_folder: obj({ id: int, name: str }) }) : undefined),
    submessage: () => obj({ msg_type: str, content: str, message_id: int, sender_id: int, submessage_id: int }),
  };
  return (v, p, errs) => {
    eventBaseCheck(v, p, errs);
    const e = v as any;
    // "For known types that switch on op, op must be a string."
    if (e && e.type in byType && "op" in e) str(e.op, `${p}.op`, errs);
    const check = e && Object.hasOwn(byType, e.type) ? byType[e.type](e) : undefined;
    check?.(v, p, errs);
  };
}

/** §5 "ZT event fields it reads" (lines 241-247), for ZT's ten event types. */
const ztEventCheck: Check = (v, p, errs) => {
  eventBaseCheck(v, p, errs);
  const e = v as any;
  const checks: Record<string, Check | undefined> = {
    message: obj({ message: messageCheck(null, false), flags: def(list(str)) }),
    update_message: obj({
      message_id: int,
      ...("content" in e || "rendered_content" in e ? { rendered_content: str, is_me_message: bool } : {}),
      ...("subject" in e ? { subject: str, orig_subject: str, stream_id: int, message_ids: list(int) } : {}),
    }),
    reaction: obj({ op: str, message_id: int, emoji_code: str, emoji_name: str, reaction_type: str, user_id: int }),
    typing: obj({ sender: obj({ user_id: int, email: str }), recipients: list(obj({ user_id: int, email: str })) }),
    update_message_flags: obj({ op: str, flag: str, messages: list(int), all: bool }),
    subscription: e.op === "update" ? obj({ op: str, property: str, value: any, stream_id: int }) : String(e.op).startsWith("peer_") ? obj({ op: str, stream_ids: list(int), user_ids: list(int) }) : obj({ op: str }),
    realm_emoji: obj({ op: oneOf("update"), realm_emoji: map(obj({ name: str, deactivated: bool })) }),
  };
  checks[e?.type]?.(v, p, errs);
};

const ofType = (events: ApiEventJson[], type: string, op?: string) => events.filter((e) => e.type === type && (op === undefined || e.op === op));
function one(events: ApiEventJson[], type: string, op?: string): ApiEventJson {
  const found = ofType(events, type, op);
  if (found.length === 0) throw new Error(`no ${type}${op ? "/" + op : ""} event among ${show(events.map((e) => e.type + (e.op ? "/" + e.op : "")))}`);
  return found[0];
}
const eventBase = { id: int, type: str } as const;

const png = () =>
  new File(
    [
      Buffer.from(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
        "base64",
      ) as BlobPart,
    ],
    "pixel.png",
    { type: "image/png" },
  );

async function send(who: CastName, params: Params): Promise<number> {
  return ok(await py(who).post("/messages", params)).id;
}

beforeAll(async () => {
  s = await startTestServer();
  fx.denmark = await s.createChannel("iago", "Denmark", ["hamlet", "othello", "cordelia", "polonius", "desdemona"]);
  fx.verona = await s.createChannel("iago", "Verona", ["hamlet", "othello", "iago"]);
  fx.mention = await send("othello", { type: "stream", to: fx.denmark, topic: "greetings", content: "Hello @**King Hamlet**" });
  fx.bold = await send("iago", { type: "stream", to: fx.denmark, topic: "greetings", content: "Second **bold** message about Denmark" });
  fx.dm = await send("othello", { type: "private", to: [id("hamlet")], content: "psst, a secret" });
  fx.huddle = await send("othello", { type: "private", to: [id("hamlet"), id("cordelia")], content: "a group whisper" });
  ok(await py("hamlet").post(`/messages/${fx.mention}/reactions`, { emoji_name: "thumbs_up", emoji_code: "1f44d", reaction_type: "unicode_emoji" }));
  ok(await py("hamlet").post("/messages/flags", { messages: [fx.bold], op: "add", flag: "starred" }));
  fx.field = ok(await py("iago").post("/realm/profile_fields", { field_type: 1, name: "Phone", hint: "Work phone" })).id;
  ok(await py("hamlet").patch("/users/me/profile_data", { data: [{ id: fx.field, value: "+45 1234" }] }));
  fx.group = ok(await py("hamlet").post("/user_groups/create", { name: "Readers", description: "Those who read", members: [id("hamlet"), id("othello")] })).group_id;
  ok(await py("hamlet").post("/realm/emoji/hearth_parrot", {}, { files: { file: png() } }));
  fx.upload = ok(await zf("hamlet").post("/user_uploads", {}, { files: { file: new File(["hello upload"], "hello.txt", { type: "text/plain" }) } }));
  fx.scheduled = ok(
    await py("hamlet").post("/scheduled_messages", { type: "stream", to: fx.denmark, topic: "later", content: "from the future", scheduled_delivery_timestamp: Math.floor(Date.now() / 1000) + 86_400 }),
  ).scheduled_message_id;
  ok(await zf("hamlet").post("/saved_snippets", { title: "Greeting", content: "Hello **world**" }));
  ok(await zf("hamlet").post("/user_topics", { stream_id: fx.denmark, topic: "noise", visibility_policy: 1 }));
  ok(await py("hamlet").post("/users/me/alert_words", { alert_words: ["elsinore"] }));
  ok(await zf("othello").post("/users/me/status", { status_text: "At the wall", emoji_name: "house", emoji_code: "1f3e0", reaction_type: "unicode_emoji" }));
  ok(await zf("othello").post("/users/me/presence", { status: "active", ping_only: false, new_user_input: true, slim_presence: true }));
  ok(await zf("hamlet").post("/users/me/presence", { status: "active", ping_only: false, new_user_input: true, slim_presence: true }));
  // Data that exercises the less common shapes of the register models.
  fx.select = ok(await py("iago").post("/realm/profile_fields", { field_type: 3, name: "Team", field_data: { a: { text: "Court", order: "1" }, b: { text: "Army", order: "2" } } })).id;
  fx.person = ok(await py("iago").post("/realm/profile_fields", { field_type: 6, name: "Mentor" })).id;
  fx.birthday = ok(await py("iago").post("/realm/profile_fields", { field_type: 4, name: "Birthday" })).id;
  ok(
    await py("hamlet").patch("/users/me/profile_data", {
      data: [
        { id: fx.select, value: "a" },
        { id: fx.person, value: [id("othello")] },
        { id: fx.birthday, value: "1600-01-01" },
      ],
    }),
  );
  fx.bot = await s.createBot("hamlet", { full_name: "Hamlet's Bot", short_name: "hamletbot" });
  fx.gone = await s.createUser("yorick");
  ok(await py("iago").delete(`/users/${fx.gone.id}`));
  ok(await zf("hamlet").post(`/users/me/muted_users/${id("polonius")}`));
  const realmEmoji: any[] = Object.values(ok(await py("hamlet").get("/realm/emoji")).emoji);
  fx.parrotId = realmEmoji.find((e) => e.name === "hearth_parrot").id as string;
  ok(await zf("hamlet").post(`/messages/${fx.mention}/reactions`, { emoji_name: "hearth_parrot", emoji_code: fx.parrotId, reaction_type: "realm_emoji" }));
  ok(await zf("hamlet").post(`/messages/${fx.mention}/reactions`, { emoji_name: "zulip", emoji_code: "zulip", reaction_type: "zulip_extra_emoji" }));
  // A colour written in upper case, as another client may send it.
  ok(await py("hamlet").post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: fx.verona, property: "color", value: "#AABBCC" }] }));
  // An announcement-only channel, and an organization permission held by an anonymous group.
  fx.announce = await s.createChannel("iago", "Announcements", ["hamlet"]);
  ok(await py("iago").patch(`/streams/${fx.announce}`, { can_send_message_group: { new: 6 } }));
  ok(await py("desdemona").patch("/realm", { can_delete_any_message_group: { new: { direct_members: [id("iago")], direct_subgroups: [6] } } }));
  ok(await py("desdemona").patch("/realm", { message_content_edit_limit_seconds: '"unlimited"' }));
});
afterAll(() => s?.stop());

// =======================================================================================
describe("the type-check helpers", () => {
  test("report missing fields, wrong types, nulls where not allowed, and bad enum values", () => {
    const shape = obj({ a: int, b: str, c: opt(bool), d: def(int), e: nullable(int), f: list(oneOf(1, 2)), g: map(obj({ x: int }), /^\d+$/) });
    expect(() => expectShape(shape, { a: 1, b: "x", e: null, f: [1], g: { "1": { x: 1 } } })).not.toThrow();
    expect(() => expectShape(shape, { a: 1, b: "x", c: null, e: 1, f: [], g: {} })).not.toThrow();
    const errs: string[] = [];
    shape({ a: "1", c: "yes", d: null, f: [3], g: { k: { x: "1" } } }, "v", errs);
    expect(errs).toEqual([
      'v.a: expected int, got "1"',
      "v.b: missing",
      'v.c: expected bool, got "yes"',
      "v.d: expected int, got null",
      "v.e: missing",
      "v.f[0]: expected one of [1,2], got 3",
      'v.g: key "k" does not match /^\\d+$/',
      'v.g.k.x: expected int, got "1"',
    ]);
    expect(() => expectShape(absUrl, "/relative")).toThrow();
    expect(() => expectShape(sortedUniqueInts, [1, 1, 2])).toThrow();
  });
});

// =======================================================================================
describe("§1 feature level", () => {
  // Lines 35 and 355 say to stay below 468 until the E2EE device endpoints exist; they do now
  // (test/events/devices.test.ts), so Hearth claims the spec's level, 508.
  test("ZF: zulip_feature_level in /server_settings and /register is 508, at least 277 (lines 20, 35, 37, 388)", async () => {
    const settings = ok(await anon("zf").get("/server_settings"));
    const reg = ok(await zf("hamlet").post("/register", ZF_REGISTER));
    for (const fl of [settings.zulip_feature_level, reg.zulip_feature_level]) {
      expect(Number.isInteger(fl)).toBe(true);
      expect(fl).toBeGreaterThanOrEqual(277);
      expect(fl).toBe(508);
    }
    expect(reg.zulip_feature_level).toBe(settings.zulip_feature_level);
  });

  test("ZF: FL 248+ forms: type=channel / direct for messages and typing, typing by stream_id (FL 215), read_by_sender (FL 236) (lines 29, 31, 32, 38)", async () => {
    ok(await zf("hamlet").post("/messages", { type: "channel", to: fx.denmark, topic: "fl248", content: "channel form", read_by_sender: true }));
    ok(await zf("hamlet").post("/messages", { type: "direct", to: [id("othello")], content: "direct form", read_by_sender: true }));
    ok(await zf("hamlet").post("/typing", { op: "start", type: "channel", stream_id: fx.denmark, topic: "fl248" }));
    ok(await zf("hamlet").post("/typing", { op: "stop", type: "direct", to: [id("othello")] }));
  });

  test("ZF: narrow operators dm, channel, with (FL 177/250/271) (line 30)", async () => {
    const dm = ok(await zf("hamlet").get("/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow: [{ operator: "dm", operand: [id("othello")] }] }));
    expect(dm.messages.map((m: any) => m.id)).toContain(fx.dm);
    const ch = ok(await zf("hamlet").get("/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow: [{ operator: "channel", operand: fx.denmark }] }));
    expect(ch.messages.map((m: any) => m.id)).toContain(fx.mention);
    const w = ok(await zf("hamlet").get("/messages", { anchor: fx.bold, num_before: 5, num_after: 5, narrow: [{ operator: "with", operand: fx.bold }] }));
    expect(w.messages.map((m: any) => m.id)).toContain(fx.bold);
  });

  test("ZF: an empty topic \"\" is allowed and realm_empty_topic_display_name is sent (FL 334/370, line 34)", async () => {
    const sent = ok(await zf("hamlet").post("/messages", { type: "channel", to: fx.verona, topic: "", content: "no topic here", read_by_sender: true }));
    const got = ok(await zf("hamlet").get(`/messages/${sent.id}`, { allow_empty_topic_name: true }));
    expect(got.message.subject).toBe("");
    const reg = ok(await zf("hamlet").post("/register", ZF_REGISTER));
    expect(typeof reg.realm_empty_topic_display_name).toBe("string");
  });

  test("ZF: POST /saved_snippets (FL 297) (line 33)", async () => {
    const r = ok(await zf("cordelia").post("/saved_snippets", { title: "Hi", content: "Hello" }));
    expect(Number.isInteger(r.saved_snippet_id)).toBe(true);
  });

  test("PY: /server_settings with Basic auth has zulip_version (lines 22, 72)", async () => {
    const r = ok(await py("hamlet").get("/server_settings"));
    expect(typeof r.zulip_version).toBe("string");
  });
});

// =======================================================================================
describe("§2 transport conventions", () => {
  test("the API is mounted at the root: /api/v1/… (lines 45, 352)", async () => {
    const r = await fetch(s.url + "/api/v1/server_settings");
    expect(r.status).toBe(200);
  });

  test("urlencoded and multipart bodies both parse (lines 47, 54)", async () => {
    ok(await py("hamlet").post("/messages", { type: "stream", to: "Denmark", subject: "wire", content: "urlencoded" }));
    ok(await js("hamlet").post("/messages", { type: "stream", to: "Denmark", subject: "wire", content: "multipart" }));
  });

  test("query-string and body params merge for POST (JS echoes message_id into the query) (lines 53, 56)", async () => {
    ok(await js("cordelia").post(`/messages/${fx.bold}/reactions`, { emoji_name: "smile", emoji_code: "1f604", reaction_type: "unicode_emoji" }, { query: { message_id: fx.bold } }));
    // A POST with one param in the query and the rest in the body.
    ok(await py("cordelia").post("/messages", { type: "stream", to: "Denmark", content: "split params" }, { query: { topic: "merged" } }));
    const last = ok(await py("cordelia").get("/messages", { anchor: "newest", num_before: 1, num_after: 0, narrow: [["stream", "Denmark"], ["topic", "merged"]] }));
    expect(last.messages.length).toBe(1);
  });

  test("PATCH / DELETE params: urlencoded body (ZF/PY) and query string (JS) (lines 48, 53)", async () => {
    const m = await send("hamlet", { type: "stream", to: fx.verona, topic: "patching", content: "v1" });
    ok(await zf("hamlet").patch(`/messages/${m}`, { content: "v2" }));
    ok(await js("hamlet").patch(`/messages/${m}`, { content: "v3" }));
    expect(ok(await zf("hamlet").get(`/messages/${m}`, { apply_markdown: false })).message.content).toBe("v3");
    ok(await zf("hamlet").post(`/messages/${m}/reactions`, { emoji_name: "smile", emoji_code: "1f604", reaction_type: "unicode_emoji" }));
    ok(await zf("hamlet").delete(`/messages/${m}/reactions`, { emoji_name: "smile", emoji_code: "1f604", reaction_type: "unicode_emoji" }));
    ok(await js("hamlet").post(`/messages/${m}/reactions`, { emoji_name: "smile", emoji_code: "1f604", reaction_type: "unicode_emoji" }));
    ok(await js("hamlet").delete(`/messages/${m}/reactions`, { emoji_name: "smile", emoji_code: "1f604", reaction_type: "unicode_emoji" }));
  });

  test("the literal JSON null counts as absent: event_types=null, widget_content=null (lines 55, 107, 257)", async () => {
    const reg = ok(await py("hamlet").post("/register", { event_types: null }));
    expect(typeof reg.queue_id).toBe("string");
    ok(await py("hamlet").post("/messages", { type: "stream", to: "Denmark", subject: "bots", content: "reply", widget_content: null }));
  });

  test("unknown params are ignored: allow_empty_topic_name, idle_queue_timeout=\"mobile\", widget_content, message_id (line 56)", async () => {
    ok(await zf("hamlet").get("/messages", { anchor: "newest", num_before: 1, num_after: 0, allow_empty_topic_name: true, some_future_param: 1 }));
    ok(await zf("hamlet").post("/register", { ...ZF_REGISTER, some_future_param: true }));
    ok(await py("hamlet").post("/messages", { type: "stream", to: "Denmark", subject: "bots", content: "x", some_future_param: "y" }));
  });

  test("ZF sends strings raw: string params that look like JSON (\"null\", \"42\", \"true\", \"100\") keep their text (line 47)", async () => {
    const c = zf("hamlet");
    for (const topic of ["null", "42", "true"]) {
      const m = ok(await c.post("/messages", { type: "channel", to: fx.verona, topic, content: topic, read_by_sender: true })).id;
      const got = ok(await c.get(`/messages/${m}`, { apply_markdown: false })).message;
      expect({ subject: got.subject, content: got.content }).toEqual({ subject: topic, content: topic });
    }
    // 💯 is named "100".
    ok(await c.post(`/messages/${fx.bold}/reactions`, { emoji_name: "100", emoji_code: "1f4af", reaction_type: "unicode_emoji" }));
    const reactions = ok(await c.get(`/messages/${fx.bold}`)).message.reactions;
    expect(reactions.find((r: any) => r.user_id === id("hamlet") && r.emoji_code === "1f4af")?.emoji_name).toBe("100");
    ok(await c.delete(`/messages/${fx.bold}/reactions`, { emoji_name: "100", emoji_code: "1f4af", reaction_type: "unicode_emoji" }));
    const snippet = ok(await c.post("/saved_snippets", { title: "123", content: "null" })).saved_snippet_id;
    const saved = ok(await c.get("/saved_snippets")).saved_snippets.find((x: any) => x.id === snippet);
    expect({ title: saved.title, content: saved.content }).toEqual({ title: "123", content: "null" });
  });

  test("errors are 4xx JSON {result:error, msg, code} (lines 59-60, 354)", async () => {
    const cases: Reply[] = [
      await zf("hamlet").get("/messages/99999999"),
      await zf("hamlet").post("/messages", { type: "channel", to: 99999, topic: "t", content: "x" }),
      await new Wire(s.url, { ...s.users.hamlet, apiKey: "x".repeat(32) }, "zf").get("/users/me"),
      await zf("hamlet").get("/no_such_endpoint"),
      await anon("zf").get("/users/me"),
      await anon("zf").post("/fetch_api_key", { username: s.users.hamlet.email, password: "wrong password" }),
    ];
    for (const r of cases) {
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
      expectShape(obj({ result: oneOf("error"), msg: str, code: str }), r.body, `HTTP ${r.status}`);
    }
  });

  test("every success response is JSON with result and msg (line 59)", async () => {
    for (const r of [await zf("hamlet").get("/users/me"), await anon("zf").get("/server_settings"), await js("hamlet").get("/streams")]) {
      expect(r.headers.get("content-type") ?? "").toContain("application/json");
      expectShape(obj({ result: oneOf("success"), msg: str }), r.body);
    }
  });
});

// =======================================================================================
describe("§3 login / credentials", () => {
  test("ZF: GET /server_settings without auth has every field, strictly typed (lines 70, 78-95)", async () => {
    const r = ok(await anon("zf").get("/server_settings"));
    expectShape(
      obj({
        authentication_methods: obj({ ldap: bool }),
        external_authentication_methods: list(obj({ name: str, display_name: str, display_icon: opt(str), login_url: str, signup_url: str })),
        zulip_feature_level: int,
        zulip_version: str,
        zulip_merge_base: str,
        push_notifications_enabled: bool,
        is_incompatible: bool,
        email_auth_enabled: bool,
        require_email_format_usernames: bool,
        realm_uri: absUrl,
        realm_name: str,
        realm_icon: urlMaybeRelative,
        realm_description: str,
        realm_web_public_access_enabled: bool,
      }),
      r,
    );
    // ZF makes realm_uri the account's base URL: it must reach this server.
    expect(new URL(r.realm_uri).origin).toBe(new URL(s.url).origin);
  });

  test("ZT: /server_settings without auth: HTTP 200 with realm_uri, require_email_format_usernames, email_auth_enabled (lines 71, 97)", async () => {
    const r = await new Wire(s.url, null, "py", ZT_UA).get("/server_settings");
    expect(r.status).toBe(200);
    expectShape(obj({ realm_uri: absUrl, require_email_format_usernames: bool, email_auth_enabled: bool }), r.body);
  });

  test("ZF / ZT: urlencoded POST /fetch_api_key (username, password) gives api_key and email (user_id optional) (lines 70-71)", async () => {
    const r = await anon("zf").post("/fetch_api_key", { username: s.users.hamlet.email, password: PASSWORD });
    expect(r.status).toBe(200);
    expectShape(obj({ api_key: str, email: str, user_id: opt(int) }), ok(r));
    expect(r.body.api_key).toBe(s.users.hamlet.apiKey);
  });

  test("ZT: the login as typed (any letter case) gets a key and then authenticates as zuliprc `email` (line 71)", async () => {
    const typed = s.users.hamlet.email.toUpperCase();
    const r = await new Wire(s.url, null, "py", ZT_UA).post("/fetch_api_key", { username: typed, password: PASSWORD });
    expect(r.status).toBe(200);
    expect(r.body.api_key).toBe(s.users.hamlet.apiKey);
    const me = ok(await new Wire(s.url, { ...s.users.hamlet, email: typed }, "py", ZT_UA).get("/users/me"));
    expect(me.user_id).toBe(id("hamlet"));
  });

  test("JS: multipart POST /fetch_api_key without auth gives api_key (lines 73, 372)", async () => {
    const r = ok(await anon("js").post("/fetch_api_key", { username: s.users.hamlet.email, password: PASSWORD }));
    expect(r.api_key).toBe(s.users.hamlet.apiKey);
  });

  test("ZF / BOT: GET /users/me gives user_id, full_name, email (and role) (lines 70, 72, 357, 365)", async () => {
    const r = ok(await zf("hamlet").get("/users/me"));
    expectShape(obj({ user_id: int, email: str, full_name: str, role: int }), r);
    expect(r.user_id).toBe(id("hamlet"));
  });
});

// =======================================================================================
describe("§4 POST /register", () => {
  test("all clients: queue_id (string) and last_event_id (int) (line 117)", async () => {
    const regs = [
      ok(await zf("hamlet").post("/register", ZF_REGISTER)),
      ok(await zt("hamlet").post("/register", ZT_REGISTER)),
      ok(await py("hamlet").post("/register", { event_types: ["message"], narrow: [] })),
      ok(await js("hamlet").post("/register", { event_types: "null" })),
      ok(await js("hamlet").post("/register", { event_types: ["message"] })),
    ];
    for (const r of regs) expectShape(obj({ queue_id: str, last_event_id: int }), r);
  });

  test("ZF: the full InitialSnapshot, every R field correctly typed (§4 ZF table, lines 134-198)", async () => {
    const { state } = await zfQueue("hamlet");
    expectShape(zfInitialSnapshot(id("hamlet")), state, "register");
    // The seeded data is there, in ZF's shape.
    expect(state.custom_profile_fields.map((f: any) => f.id)).toContain(fx.field);
    expect(state.realm_user_groups.map((g: any) => g.id)).toContain(fx.group);
    expect(Object.values(state.realm_emoji).map((e: any) => e.name)).toContain("hearth_parrot");
    expect(state.starred_messages).toContain(fx.bold);
    expect(state.alert_words).toContain("elsinore");
    expect(state.user_status[String(id("othello"))]?.status_text).toBe("At the wall");
    expect(state.unread_msgs.mentions).toContain(fx.mention);
    expect(state.unread_msgs.pms.map((p: any) => p.other_user_id)).toContain(id("othello"));
    expect(state.unread_msgs.huddles.length).toBeGreaterThan(0);
    const hamletUser = state.realm_users.find((u: any) => u.user_id === id("hamlet"));
    expect(hamletUser.profile_data[String(fx.field)].value).toBe("+45 1234");
  });

  test("ZF: the InitialSnapshot is well-formed for every role (owner, admin, moderator, member, guest) (lines 134-198)", async () => {
    for (const who of Object.keys(s.users) as CastName[]) {
      const { state } = await zfQueue(who);
      expectShape(zfInitialSnapshot(id(who)), state, `register as ${who}`);
    }
  });

  test("ZF: presences by user id as {active_timestamp, idle_timestamp} (slim_presence honoured) (lines 113, 117, 149)", async () => {
    const { state } = await zfQueue("hamlet");
    expect(state.realm_presence_disabled).toBe(false);
    expect(Object.keys(state.presences)).toContain(String(id("othello")));
    expectShape(map(obj({ active_timestamp: int, idle_timestamp: int }), /^\d+$/), state.presences, "presences");
  });

  test("ZT: every key it indexes directly, with its fetch_event_types (§4 ZT list, lines 119-132)", async () => {
    const { state } = await ztQueue("hamlet");
    expectShape(
      obj({
        zulip_version: str,
        max_message_id: int,
        queue_id: str,
        last_event_id: int,
        user_id: int,
        email: str,
        full_name: str,
        realm_name: str,
        realm_message_retention_days: nullable(int),
        subscriptions: list(
          obj({
            stream_id: int,
            name: str,
            color: matches(/^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/),
            description: str,
            pin_to_top: bool,
            is_muted: bool,
            desktop_notifications: nullable(bool),
            subscribers: list(int),
            message_retention_days: nullable(int),
            date_created: int,
            invite_only: bool,
            is_web_public: bool,
            history_public_to_subscribers: bool,
            rendered_description: str,
            stream_weekly_traffic: nullable(int),
            stream_post_policy: int,
          }),
        ),
        muted_topics: list((v, p, e) => {
          if (!Array.isArray(v) || (v.length !== 2 && v.length !== 3)) return void e.push(`${p}: expected a tuple of length 2 or 3, got ${show(v)}`);
          str(v[0], `${p}[0]`, e);
          str(v[1], `${p}[1]`, e);
          if (v.length === 3) num(v[2], `${p}[2]`, e);
        }),
        realm_user_groups: list(obj({ id: int, name: str })),
        realm_emoji: map(obj({ name: str, deactivated: bool })),
        custom_profile_fields: list(any),
        realm_users: list(obj({ user_id: int, email: str, full_name: str, is_bot: bool })),
        cross_realm_bots: list(obj({ user_id: int, email: str, full_name: str, is_bot: bool })),
        presences: map(any),
        unread_msgs: obj({
          pms: list(obj({ sender_id: int, unread_message_ids: list(int) })),
          streams: list(obj({ stream_id: int, topic: str, unread_message_ids: list(int) })),
          huddles: list(obj({ user_ids_string: str, unread_message_ids: list(int) })),
          mentions: list(int),
        }),
        user_settings: obj({ send_private_typing_notifications: bool, twenty_four_hour_time: bool, pm_content_in_desktop_notifications: bool }),
        // Read with .get, typed if present.
        zulip_feature_level: opt(int),
        max_stream_name_length: opt(int),
        max_topic_length: opt(int),
        max_message_length: opt(int),
        server_typing_started_expiry_period_milliseconds: opt(int),
        server_typing_stopped_wait_period_milliseconds: opt(int),
        server_typing_started_wait_period_milliseconds: opt(int),
        server_presence_ping_interval_seconds: opt(int),
        server_presence_offline_threshold_seconds: opt(int),
        realm_allow_message_editing: opt(bool),
        realm_edit_topic_policy: opt(int),
      }),
      state,
      "register",
    );
    // The muted topic is in the legacy list.
    expect(state.muted_topics.map((t: any[]) => t[1])).toContain("noise");
    expect(state.realm_emoji[Object.keys(state.realm_emoji)[0]]).toBeDefined();
    // include_subscribers honoured.
    const denmark = state.subscriptions.find((c: any) => c.stream_id === fx.denmark);
    expect(denmark.subscribers).toContain(id("othello"));
  });

  test("ZT: presences in the legacy format keyed by email (slim_presence not sent) (lines 113, 129)", async () => {
    const { state } = await ztQueue("hamlet");
    const othello = state.presences[s.users.othello.email];
    expect(othello).toBeDefined();
    expectShape(
      map(
        (v, p, e) => {
          obj({ aggregated: obj({ status: str, timestamp: int }) })(v, p, e);
          for (const [k, x] of Object.entries(v as object)) if (k !== "aggregated") obj({ client: str, status: str, timestamp: int, pushable: bool })(x, `${p}.${k}`, e);
        },
        /@/,
      ),
      state.presences,
      "presences",
    );
  });

  test("ZT: unread_msgs.pms has both sender_id and other_user_id (line 130)", async () => {
    const { state } = await ztQueue("hamlet");
    const pm = state.unread_msgs.pms.find((p: any) => p.unread_message_ids.includes(fx.dm));
    expect(pm).toMatchObject({ sender_id: id("othello"), other_user_id: id("othello") });
  });

  test("ZT: re-register with fetch_event_types=null works (line 108)", async () => {
    const r = ok(await zt("hamlet").post("/register", { ...ZT_REGISTER, fetch_event_types: null }));
    expectShape(obj({ queue_id: str, last_event_id: int }), r);
  });

  test("include_subscribers is honoured both ways (lines 112, 117)", async () => {
    const without = ok(await zf("hamlet").post("/register", ZF_REGISTER));
    expect(without.subscriptions.every((c: any) => c.subscribers === undefined)).toBe(true);
    const withSubs = ok(await zf("hamlet").post("/register", { ...ZF_REGISTER, include_subscribers: true }));
    expect(withSubs.subscriptions.every((c: any) => Array.isArray(c.subscribers))).toBe(true);
  });

  test("apply_markdown is honoured: ZF/ZT get HTML, bots (no apply_markdown) get raw Markdown (lines 110, 117, 285-286)", async () => {
    const zfq = await zfQueue("othello");
    const bot = ok(await py("othello").post("/register", { event_types: ["message"], narrow: [] }));
    const ztq = ok(await zt("othello").post("/register", ZT_REGISTER));
    await send("hamlet", { type: "stream", to: fx.denmark, topic: "markdown", content: "some **bold** words" });
    const html = one(await zfq.events(), "message").message.content;
    expect(html).toContain("<p>");
    expect(html).toContain("<strong>bold</strong>");
    expect(one(await drain("othello", ztq.queue_id), "message").message.content).toContain("<strong>bold</strong>");
    expect(one(await drain("othello", bot.queue_id), "message").message.content).toBe("some **bold** words");
  });
});

// =======================================================================================
describe("§5 event queue", () => {
  test("GET /events: {result, msg, events[], queue_id?}; dont_block honoured; events up to last_event_id discarded (lines 212-214)", async () => {
    const q = await zfQueue("cordelia");
    const t0 = Date.now();
    const empty = ok(await zf("cordelia").get("/events", { queue_id: q.state.queue_id, last_event_id: q.state.last_event_id, dont_block: true }));
    expect(Date.now() - t0).toBeLessThan(5000);
    expectShape(obj({ events: list(obj(eventBase)), queue_id: opt(str) }), empty);
    await send("othello", { type: "stream", to: fx.denmark, topic: "queue", content: "one" });
    await send("othello", { type: "stream", to: fx.denmark, topic: "queue", content: "two" });
    const all = ok(await zf("cordelia").get("/events", { queue_id: q.state.queue_id, last_event_id: q.state.last_event_id, dont_block: true })).events;
    const msgs = ofType(all, "message");
    expect(msgs.length).toBe(2);
    const rest = ok(await zf("cordelia").get("/events", { queue_id: q.state.queue_id, last_event_id: msgs[0].id, dont_block: true })).events;
    expect(ofType(rest, "message").map((e) => e.message.content)).toEqual(["<p>two</p>"]);
  });

  test("a parked long poll (no dont_block) answers as soon as an event arrives (lines 205-208)", async () => {
    const reg = ok(await py("cordelia").post("/register", { event_types: ["message"], narrow: [] }));
    const t0 = Date.now();
    const poll = py("cordelia").get("/events", { queue_id: reg.queue_id, last_event_id: reg.last_event_id });
    await Bun.sleep(300);
    await send("othello", { type: "stream", to: fx.denmark, topic: "queue", content: "wake up" });
    const r = ok(await poll);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(ofType(r.events, "message").map((e) => e.message.content)).toEqual(["wake up"]);
  });

  test("JS: GET /events with dont_block=false (query) returns waiting events at once (lines 208, 373)", async () => {
    const reg = ok(await js("cordelia").post("/register", { event_types: ["message"] }));
    await send("othello", { type: "stream", to: fx.denmark, topic: "queue", content: "for js" });
    const r = ok(await js("cordelia").get("/events", { queue_id: reg.queue_id, last_event_id: reg.last_event_id, dont_block: false }));
    expect(ofType(r.events, "message").length).toBe(1);
  });

  test("a dead queue: HTTP 400 {code: BAD_EVENT_QUEUE_ID, msg: \"Bad event queue ID: <id>\", queue_id} (lines 205-207, 215)", async () => {
    const reg = ok(await zt("cordelia").post("/register", ZT_REGISTER));
    ok(await zt("cordelia").delete("/events", { queue_id: reg.queue_id }));
    const r = await zt("cordelia").get("/events", { queue_id: reg.queue_id, last_event_id: reg.last_event_id });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ result: "error", msg: `Bad event queue ID: ${reg.queue_id}`, code: "BAD_EVENT_QUEUE_ID", queue_id: reg.queue_id });
    const never = await zf("cordelia").get("/events", { queue_id: "no-such-queue", last_event_id: -1 });
    expect({ status: never.status, code: never.body.code }).toEqual({ status: 400, code: "BAD_EVENT_QUEUE_ID" });
  });

  test("heartbeats: at most ~60 s into a poll, shaped {type: heartbeat, id} (lines 177, 211, 225, 359)", async () => {
    expect(s.server.h.queues.limits.heartbeatSecs).toBeLessThanOrEqual(60);
    const reg = ok(await zf("hamlet").post("/register", ZF_REGISTER));
    expect(reg.event_queue_longpoll_timeout_seconds).toBeGreaterThan(s.server.h.queues.limits.heartbeatSecs);
    // A real long poll on a server with a short heartbeat.
    const quick = await startTestServer({ env: { HEARTH_EVENT_HEARTBEAT_SECS: "1" } });
    try {
      const c = new Wire(quick.url, quick.users.hamlet, "zf");
      const q = ok(await c.post("/register", ZF_REGISTER));
      const r = ok(await c.get("/events", { queue_id: q.queue_id, last_event_id: q.last_event_id }));
      expect(r.events.length).toBe(1);
      expectShape(obj({ type: oneOf("heartbeat"), id: int }), r.events[0], "heartbeat");
    } finally {
      await quick.stop();
    }
  });
});

// ---------------------------------------------------------------------------------------
// §5 "ZF event parsing" table (lines 217-239), one test per row, triggered as real users do.
// ---------------------------------------------------------------------------------------
const ZfMessage = (selfId: number) => messageCheck(selfId, false);

describe("§5 ZF events", () => {
  test("message: full Message, top-level flags, local_message_id echoed to the queue named in queue_id (lines 226, 362, 391)", async () => {
    const q = await zfQueue("hamlet");
    const other = await zfQueue("hamlet");
    const sent = ok(await zf("hamlet").post("/messages", { type: "channel", to: fx.denmark, topic: "outbox", content: "from the outbox", read_by_sender: true, queue_id: q.state.queue_id, local_id: "1234.01" }));
    expect(Number.isInteger(sent.id)).toBe(true);
    const e = one(await q.events(), "message");
    expectShape(obj({ ...eventBase, message: ZfMessage(id("hamlet")), flags: list(str), local_message_id: str }), e, "event");
    expect(e.local_message_id).toBe("1234.01");
    // read_by_sender=true: the sender's own copy is read.
    expect(e.flags).toContain("read");
    expect(e.message.id).toBe(sent.id);
    expect(one(await other.events(), "message").local_message_id).toBeUndefined();
    // A DM, as the other participant sees it.
    const q2 = await zfQueue("othello");
    ok(await zf("hamlet").post("/messages", { type: "direct", to: [id("othello")], content: "dm event", read_by_sender: true }));
    expectShape(obj({ ...eventBase, message: ZfMessage(id("othello")), flags: list(str) }), one(await q2.events(), "message"), "event");
  });

  test("update_message: a content edit (line 227)", async () => {
    const m = await send("hamlet", { type: "stream", to: fx.verona, topic: "edits", content: "before" });
    const q = await zfQueue("othello");
    ok(await zf("hamlet").patch(`/messages/${m}`, { content: "after", prev_content_sha256: createHash("sha256").update("before").digest("hex") }));
    const e = one(await q.events(), "update_message");
    expectShape(
      obj({ ...eventBase, ...UPDATE_MESSAGE_FIELDS }),
      e,
      "event",
    );
  });

  test("update_message: a topic move and a channel move (line 227)", async () => {
    const m = await send("hamlet", { type: "stream", to: fx.verona, topic: "to move", content: "moving" });
    ok(await py("iago").post("/users/me/subscriptions", { subscriptions: [{ name: "Rome" }], principals: [id("othello"), id("hamlet")] }));
    const rome = ok(await py("iago").get("/get_stream_id", { stream: "Rome" })).stream_id;
    const q = await zfQueue("othello");
    ok(await zf("hamlet").patch(`/messages/${m}`, { topic: "moved", propagate_mode: "change_all", send_notification_to_old_thread: false, send_notification_to_new_thread: false }));
    ok(await zf("hamlet").patch(`/messages/${m}`, { stream_id: rome, propagate_mode: "change_one", send_notification_to_old_thread: false, send_notification_to_new_thread: false }));
    const moves = ofType(await q.events(), "update_message");
    expect(moves.length).toBe(2);
    const moveShape = obj({
      ...eventBase,
      rendering_only: bool,
      message_id: int,
      message_ids: list(int),
      flags: list(oneOf(...KNOWN_FLAGS)),
      edit_timestamp: int,
      stream_id: int,
      orig_subject: str,
      propagate_mode: oneOf("change_one", "change_later", "change_all"),
      new_stream_id: opt(int),
      subject: opt(str),
    });
    for (const e of moves) expectShape(moveShape, e, "event");
    expect(moves[0].subject).toBe("moved");
    expect(moves[1].new_stream_id).toBe(rome);
  });

  test("delete_message: bulk message_ids, message_type, stream_id + topic (line 228)", async () => {
    const m = await send("hamlet", { type: "stream", to: fx.verona, topic: "doomed", content: "delete me" });
    const d = await send("hamlet", { type: "private", to: [id("othello")], content: "delete me too" });
    const q = await zfQueue("othello");
    ok(await zf("iago").delete(`/messages/${m}`));
    // A DM between others is not iago's to delete (Zulip: "Invalid message(s)"); its sender deletes it.
    ok(await py("hamlet").delete(`/messages/${d}`));
    const [stream, dm] = ofType(await q.events(), "delete_message");
    expectShape(obj({ ...eventBase, message_ids: list(int), message_type: oneOf("stream"), stream_id: int, topic: str }), stream, "event");
    expectShape(obj({ ...eventBase, message_ids: list(int), message_type: oneOf("private") }), dm, "event");
  });

  test("update_message_flags add (with all:bool) and remove (line 229)", async () => {
    const q = await zfQueue("hamlet");
    const r = ok(await zf("hamlet").post("/messages/flags", { messages: [fx.mention], op: "add", flag: "starred" }));
    expect(r.messages).toEqual([fx.mention]);
    ok(await zf("hamlet").post("/messages/flags", { messages: [fx.mention], op: "remove", flag: "starred" }));
    const events = await q.events();
    expectShape(obj({ ...eventBase, op: oneOf("add"), flag: str, messages: list(int), all: bool }), one(events, "update_message_flags", "add"), "event");
    expectShape(obj({ ...eventBase, op: oneOf("remove"), flag: str, messages: list(int), message_details: opt(map(any)) }), one(events, "update_message_flags", "remove"), "event");
  });

  test("update_message_flags remove of `read`: message_details, when sent, in ZF's shape (line 229)", async () => {
    ok(await zf("hamlet").post("/messages/flags", { messages: [fx.dm, fx.bold, fx.huddle], op: "add", flag: "read" }));
    const q = await zfQueue("hamlet");
    ok(await zf("hamlet").post("/messages/flags", { messages: [fx.dm, fx.bold, fx.huddle], op: "remove", flag: "read" }));
    const e = one(await q.events(), "update_message_flags", "remove");
    expectShape(
      obj({
        ...eventBase,
        flag: oneOf("read"),
        messages: list(int),
        message_details: opt(
          map(
            (v, p, errs) => {
              obj({ type: oneOf("stream", "private"), mentioned: opt(bool) })(v, p, errs);
              const d = v as any;
              if (d?.type === "stream") obj({ stream_id: int, topic: str })(d, p, errs);
              if (d?.type === "private") obj({ user_ids: opt(list(int)) })(d, p, errs);
            },
            /^\d+$/,
          ),
        ),
      }),
      e,
      "event",
    );
  });

  test("reaction add / remove (line 230)", async () => {
    const q = await zfQueue("othello");
    ok(await zf("hamlet").post(`/messages/${fx.bold}/reactions`, { emoji_name: "heart", emoji_code: "2764", reaction_type: "unicode_emoji" }));
    ok(await zf("hamlet").delete(`/messages/${fx.bold}/reactions`, { emoji_name: "heart", emoji_code: "2764", reaction_type: "unicode_emoji" }));
    const events = await q.events();
    for (const op of ["add", "remove"]) {
      expectShape(
        obj({ ...eventBase, op: oneOf(op), emoji_name: str, emoji_code: str, reaction_type: oneOf(...REACTION_TYPES), user_id: int, message_id: int }),
        one(events, "reaction", op),
        "event",
      );
    }
  });

  test("typing start / stop, direct and stream (line 231)", async () => {
    const q = await zfQueue("othello");
    ok(await zf("hamlet").post("/typing", { op: "start", type: "direct", to: [id("othello")] }));
    ok(await zf("hamlet").post("/typing", { op: "stop", type: "direct", to: [id("othello")] }));
    ok(await zf("hamlet").post("/typing", { op: "start", type: "channel", stream_id: fx.denmark, topic: "typing" }));
    const events = ofType(await q.events(), "typing");
    expect(events.map((e) => e.op)).toEqual(["start", "stop", "start"]);
    const direct = obj({ ...eventBase, op: oneOf("start", "stop"), message_type: oneOf("direct", "private"), sender: obj({ user_id: int }), recipients: list(obj({ user_id: int })) });
    expectShape(direct, events[0], "event");
    expectShape(direct, events[1], "event");
    expectShape(obj({ ...eventBase, op: oneOf("start", "stop"), message_type: oneOf("stream"), sender: obj({ user_id: int }), stream_id: int, topic: str }), events[2], "event");
  });

  test("presence: user_id, server_timestamp, presence.{client}.{client,status,timestamp,pushable} (line 232)", async () => {
    const newcomer = await s.createUser("presencer");
    const q = await zfQueue("hamlet");
    ok(await new Wire(s.url, newcomer, "zf").post("/users/me/presence", { status: "active", ping_only: false, new_user_input: true, slim_presence: true }));
    const e = one(await q.events(), "presence");
    expectShape(
      obj({ ...eventBase, user_id: int, server_timestamp: num, presence: map(obj({ client: str, status: oneOf("active", "idle"), timestamp: int, pushable: bool })) }),
      e,
      "event",
    );
  });

  test("subscription add / remove / update / peer_add / peer_remove (line 233)", async () => {
    ok(await py("iago").post("/users/me/subscriptions", { subscriptions: [{ name: "Subs" }] }));
    const q = await zfQueue("hamlet");
    const watcher = await zfQueue("iago");
    ok(await zf("hamlet").post("/users/me/subscriptions", { subscriptions: [{ name: "Subs" }] }));
    const subs = ok(await py("iago").get("/get_stream_id", { stream: "Subs" })).stream_id;
    ok(await zf("hamlet").post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: subs, property: "pin_to_top", value: true }] }));
    ok(await zf("hamlet").delete("/users/me/subscriptions", { subscriptions: ["Subs"] }));
    const mine = await q.events();
    expectShape(obj({ ...eventBase, op: oneOf("add"), subscriptions: list(ZfSubscription) }), one(mine, "subscription", "add"), "event");
    expectShape(obj({ ...eventBase, op: oneOf("update"), stream_id: int, property: str, value: any }), one(mine, "subscription", "update"), "event");
    expectShape(obj({ ...eventBase, op: oneOf("remove"), subscriptions: list(obj({ stream_id: int })) }), one(mine, "subscription", "remove"), "event");
    const peers = await watcher.events();
    for (const op of ["peer_add", "peer_remove"]) expectShape(obj({ ...eventBase, op: oneOf(op), stream_ids: list(int), user_ids: list(int) }), one(peers, "subscription", op), "event");
  });

  test("stream create / update / delete (line 234)", async () => {
    const q = await zfQueue("hamlet");
    ok(await py("iago").post("/users/me/subscriptions", { subscriptions: [{ name: "Elsinore", description: "A castle" }] }));
    const sid = ok(await py("iago").get("/get_stream_id", { stream: "Elsinore" })).stream_id;
    ok(await py("iago").patch(`/streams/${sid}`, { description: "A haunted castle" }));
    ok(await py("iago").delete(`/streams/${sid}`));
    const events = await q.events();
    expectShape(obj({ ...eventBase, op: oneOf("create"), streams: list(ZulipStream) }), one(events, "stream", "create"), "event");
    expectShape(
      obj({ ...eventBase, op: oneOf("update"), stream_id: int, name: str, property: str, value: any, rendered_description: opt(str), history_public_to_subscribers: opt(bool), is_web_public: opt(bool) }),
      one(events, "stream", "update"),
      "event",
    );
    const del = one(events, "stream", "delete");
    expect(Array.isArray(del.stream_ids) || (Array.isArray(del.streams) && del.streams.every((c: any) => Number.isInteger(c.stream_id)))).toBe(true);
    expect(del.stream_ids ?? del.streams.map((c: any) => c.stream_id)).toContain(sid);
  });

  test("realm_user add / update (and deactivation) (line 235)", async () => {
    const q = await zfQueue("hamlet");
    const newbie = await s.createUser("newbie");
    ok(await py("iago").patch(`/users/${newbie.id}`, { full_name: "Newbie Renamed" }));
    ok(await py("iago").delete(`/users/${newbie.id}`));
    const events = await q.events();
    expectShape(obj({ ...eventBase, op: oneOf("add"), person: ZfUser }), one(events, "realm_user", "add"), "event");
    const updates = ofType(events, "realm_user", "update");
    expect(updates.length).toBeGreaterThan(0);
    for (const e of updates) expectShape(obj({ ...eventBase, person: obj({ user_id: int }) }), e, "event");
    for (const e of ofType(events, "realm_user", "remove")) expectShape(obj({ ...eventBase, person: obj({ user_id: int }) }), e, "event");
  });

  test("user_settings update: property, value (line 236)", async () => {
    const q = await zfQueue("cordelia");
    ok(await zf("cordelia").patch("/settings", { twenty_four_hour_time: true }));
    expectShape(obj({ ...eventBase, op: oneOf("update"), property: str, value: any }), one(await q.events(), "user_settings", "update"), "event");
  });

  test("realm_emoji add / update_one for ZF (individual_emoji_changes), update with the full map otherwise (lines 237, 385)", async () => {
    const q = await zfQueue("cordelia");
    const ztq = await ztQueue("cordelia");
    ok(await py("hamlet").post("/realm/emoji/yorick", {}, { files: { file: png() } }));
    ok(await py("hamlet").delete("/realm/emoji/yorick"));
    const events = await q.events();
    expectShape(obj({ ...eventBase, op: oneOf("add"), emoji: RealmEmojiItem }), one(events, "realm_emoji", "add"), "event");
    expectShape(obj({ ...eventBase, op: oneOf("update_one"), emoji_id: str, data: map(any) }), one(events, "realm_emoji", "update_one"), "event");
    const ztEvents = await ztq.events();
    for (const e of ofType(ztEvents, "realm_emoji")) expectShape(obj({ ...eventBase, op: oneOf("update"), realm_emoji: map(RealmEmojiItem) }), e, "event");
    expect(ofType(ztEvents, "realm_emoji").length).toBe(2);
  });

  test("user_topic: stream_id, topic_name, last_updated, visibility_policy 0..3 (line 238)", async () => {
    const q = await zfQueue("cordelia");
    ok(await zf("cordelia").post("/user_topics", { stream_id: fx.denmark, topic: "greetings", visibility_policy: 3 }));
    expectShape(obj({ ...eventBase, stream_id: int, topic_name: str, last_updated: int, visibility_policy: oneOf(0, 1, 2, 3) }), one(await q.events(), "user_topic"), "event");
  });

  test("others ZF parses: alert_words, custom_profile_fields, muted_users, user_status, saved_snippets, channel_folder, submessage (line 239)", async () => {
    const q = await zfQueue("cordelia");
    ok(await zf("cordelia").post("/users/me/alert_words", { alert_words: ["ghost"] }));
    ok(await py("iago").post("/realm/profile_fields", { field_type: 1, name: "Castle" }));
    ok(await zf("cordelia").post(`/users/me/muted_users/${id("polonius")}`));
    ok(await zf("cordelia").post("/users/me/status", { status_text: "Reading" }));
    const snippet = ok(await zf("cordelia").post("/saved_snippets", { title: "Bye", content: "Farewell" })).saved_snippet_id;
    ok(await zf("cordelia").delete(`/saved_snippets/${snippet}`));
    ok(await py("iago").post("/channel_folders/create", { name: "Castles" }));
    const poll = await send("cordelia", { type: "stream", to: fx.denmark, topic: "widgets", content: "/poll Which?" });
    ok(await zf("cordelia").post("/submessage", { message_id: poll, msg_type: "widget", content: JSON.stringify({ type: "vote", key: "canned,1", vote: 1 }) }));
    const events = await q.events();
    expectShape(obj({ ...eventBase, alert_words: list(str) }), one(events, "alert_words"), "event");
    expectShape(obj({ ...eventBase, fields: list(CustomProfileField) }), one(events, "custom_profile_fields"), "event");
    expectShape(obj({ ...eventBase, muted_users: list(obj({ id: int, timestamp: int })) }), one(events, "muted_users"), "event");
    expectShape(obj({ ...eventBase, user_id: int, status_text: opt(str) }), one(events, "user_status"), "event");
    expectShape(obj({ ...eventBase, op: oneOf("add"), saved_snippet: obj({ id: int, title: str, content: str, date_created: int }) }), one(events, "saved_snippets", "add"), "event");
    expectShape(obj({ ...eventBase, op: oneOf("remove"), saved_snippet_id: int }), one(events, "saved_snippets", "remove"), "event");
    expectShape(obj({ ...eventBase, op: oneOf("add"), channel_folder: obj({ id: int, name: str }) }), one(events, "channel_folder", "add"), "event");
    expectShape(obj({ ...eventBase, msg_type: str, content: str, message_id: int, sender_id: int, submessage_id: int }), one(events, "submessage"), "event");
  });

  test("user_group add / update / add_members / remove_members / add_subgroups / remove_subgroups (line 239)", async () => {
    const q = await zfQueue("othello");
    const g = ok(await zf("hamlet").post("/user_groups/create", { name: "Players", description: "The troupe", members: [id("hamlet")] })).group_id;
    const sub = ok(await zf("hamlet").post("/user_groups/create", { name: "Stagehands", description: "Crew", members: [id("hamlet")] })).group_id;
    ok(await zf("hamlet").patch(`/user_groups/${g}`, { description: "The travelling troupe" }));
    ok(await zf("hamlet").post(`/user_groups/${g}/members`, { add: [id("othello")] }));
    ok(await zf("hamlet").post(`/user_groups/${g}/members`, { delete: [id("othello")] }));
    ok(await zf("hamlet").post(`/user_groups/${g}/subgroups`, { add: [sub] }));
    ok(await zf("hamlet").post(`/user_groups/${g}/subgroups`, { delete: [sub] }));
    const events = await q.events();
    expectShape(obj({ ...eventBase, op: oneOf("add"), group: UserGroup }), one(events, "user_group", "add"), "event");
    expectShape(obj({ ...eventBase, op: oneOf("update"), group_id: int, data: map(any) }), one(events, "user_group", "update"), "event");
    for (const op of ["add_members", "remove_members"]) expectShape(obj({ ...eventBase, op: oneOf(op), group_id: int, user_ids: list(int) }), one(events, "user_group", op), "event");
    for (const op of ["add_subgroups", "remove_subgroups"]) expectShape(obj({ ...eventBase, op: oneOf(op), group_id: int, direct_subgroup_ids: list(int) }), one(events, "user_group", op), "event");
  });
});

describe("§5 every event ZF and ZT receive is well-formed", () => {
  test("a busy stretch of organization life, watched by a member, an admin and a guest on ZF, and a member on ZT (lines 218-221, 241-247, 394)", async () => {
    const queues = await Promise.all((["hamlet", "iago", "polonius", "othello"] as CastName[]).map((who) => zfQueue(who)));
    const ztq = await ztQueue("othello");
    const iago = py("iago");
    ok(await iago.post("/users/me/subscriptions", { subscriptions: [{ name: "Ramparts" }], principals: [id("iago"), id("hamlet"), id("othello")], invite_only: true }));
    const ramparts = ok(await iago.get("/get_stream_id", { stream: "Ramparts" })).stream_id;
    ok(await iago.patch(`/streams/${ramparts}`, { new_name: "Battlements" }));
    ok(await iago.patch(`/streams/${ramparts}`, { description: "Where the **ghost** walks" }));
    ok(await iago.patch(`/streams/${ramparts}`, { is_private: false }));
    const wild = await send("hamlet", { type: "stream", to: ramparts, topic: "watch", content: "@**all** the ghost!" });
    await send("hamlet", { type: "stream", to: ramparts, topic: "watch", content: "/me shivers" });
    ok(await zf("hamlet").post("/messages", { type: "channel", to: ramparts, topic: "", content: "empty topic", read_by_sender: true }));
    ok(await zf("hamlet").patch(`/messages/${wild}`, { topic: "✔ watch", propagate_mode: "change_all", send_notification_to_old_thread: false, send_notification_to_new_thread: true }));
    ok(await zf("othello").post(`/messages/${wild}/reactions`, { emoji_name: "hearth_parrot", emoji_code: fx.parrotId, reaction_type: "realm_emoji" }));
    ok(await zf("othello").post(`/messages/${wild}/reactions`, { emoji_name: "zulip", emoji_code: "zulip", reaction_type: "zulip_extra_emoji" }));
    ok(await zf("hamlet").post("/user_topics", { stream_id: ramparts, topic: "✔ watch", visibility_policy: 2 }));
    ok(await iago.post(`/streams/${ramparts}/delete_topic`, { topic_name: "✔ watch" }));
    ok(await zf("othello").post("/users/me/avatar", {}, { files: { file: png() } }));
    ok(await iago.patch(`/users/${id("shiva")}`, { role: 400 }));
    ok(await iago.patch(`/users/${id("shiva")}`, { role: 300 }));
    const bot = await s.createBot("hamlet", { full_name: "Rampart Bot", short_name: "rampartbot" });
    ok(await py("hamlet").patch(`/bots/${bot.id}`, { full_name: "Rampart Bot II" }));
    ok(await iago.patch(`/realm/profile_fields/${fx.field}`, { name: "Telephone", hint: "Any phone" }));
    ok(await py("hamlet").patch("/users/me/profile_data", { data: [{ id: fx.field, value: "+45 9999" }] }));
    const g = ok(await zf("hamlet").post("/user_groups/create", { name: "Watchmen", description: "Night watch", members: [id("hamlet")] })).group_id;
    ok(await zf("hamlet").post(`/user_groups/${g}/deactivate`));
    ok(await iago.post(`/users/${fx.gone.id}/reactivate`));
    ok(await iago.delete(`/users/${fx.gone.id}`));
    ok(await zf("hamlet").post("/users/me/status", { emoji_name: "ghost", emoji_code: "1f47b", reaction_type: "unicode_emoji" }));
    ok(await zf("hamlet").patch("/settings", { emojiset: "text", presence_enabled: false }));
    ok(await zf("hamlet").patch("/settings", { emojiset: "google", presence_enabled: true }));
    ok(await iago.delete(`/streams/${ramparts}`));
    const counts: Record<string, number> = {};
    for (const q of queues) {
      // Each drain checks every event against ZF's parser.
      for (const e of await q.events()) counts[e.type] = (counts[e.type] ?? 0) + 1;
    }
    for (const e of await ztq.events()) counts["zt:" + e.type] = (counts["zt:" + e.type] ?? 0) + 1;
    for (const type of ["stream", "subscription", "message", "update_message", "reaction", "delete_message", "realm_user", "user_group", "custom_profile_fields", "user_status", "user_settings"]) {
      expect({ type, seen: (counts[type] ?? 0) > 0 }).toEqual({ type, seen: true });
    }
  });
});

// ---------------------------------------------------------------------------------------
// §5 "ZT event fields it reads" (lines 241-247), with ZT's own register.
// ---------------------------------------------------------------------------------------
describe("§5 ZT events", () => {
  test("message: message and flags (line 242)", async () => {
    const q = await ztQueue("othello");
    await send("hamlet", { type: "stream", to: fx.denmark, topic: "zt", content: "for zt" });
    expectShape(obj({ ...eventBase, message: messageCheck(null, false), flags: list(str) }), one(await q.events(), "message"), "event");
  });

  test("update_message: rendered_content and is_me_message when editing; subject, orig_subject, stream_id, message_ids when moving (line 243)", async () => {
    const m = await send("hamlet", { type: "stream", to: fx.verona, topic: "zt edits", content: "before" });
    const q = await ztQueue("othello");
    ok(await zt("hamlet").patch(`/messages/${m}`, { content: "after" }));
    ok(await zt("hamlet").patch(`/messages/${m}`, { topic: "zt moved", propagate_mode: "change_one", send_notification_to_old_thread: false, send_notification_to_new_thread: false }));
    const [edit, move] = ofType(await q.events(), "update_message");
    expectShape(obj({ ...eventBase, message_id: int, rendered_content: str, is_me_message: bool }), edit, "edit event");
    expectShape(obj({ ...eventBase, message_id: int, subject: str, orig_subject: str, stream_id: int, message_ids: list(int) }), move, "move event");
  });

  test("reaction: op, message_id, emoji_code, emoji_name, reaction_type, user_id (line 244)", async () => {
    const q = await ztQueue("othello");
    ok(await zt("hamlet").post(`/messages/${fx.bold}/reactions`, { emoji_name: "tada", emoji_code: "1f389", reaction_type: "unicode_emoji", message_id: fx.bold }));
    ok(await zt("hamlet").delete(`/messages/${fx.bold}/reactions`, { emoji_name: "tada", emoji_code: "1f389", reaction_type: "unicode_emoji", message_id: fx.bold }));
    for (const e of ofType(await q.events(), "reaction")) {
      expectShape(obj({ ...eventBase, op: oneOf("add", "remove"), message_id: int, emoji_code: str, emoji_name: str, reaction_type: str, user_id: int }), e, "event");
    }
  });

  test("typing: sender.{user_id,email} and recipients[].{user_id,email}; ZT sends op + to without type (lines 245, 263)", async () => {
    const q = await ztQueue("othello");
    ok(await zt("hamlet").post("/typing", { op: "start", to: [id("othello")] }));
    const e = one(await q.events(), "typing");
    expectShape(obj({ ...eventBase, op: oneOf("start"), sender: obj({ user_id: int, email: str }), recipients: list(obj({ user_id: int, email: str })) }), e, "event");
  });

  test("typing: ZT (no stream_typing_notifications capability) gets no typing event without `recipients` (lines 114, 245)", async () => {
    const q = await ztQueue("othello");
    ok(await zf("hamlet").post("/typing", { op: "start", type: "channel", stream_id: fx.denmark, topic: "typing" }));
    ok(await zf("hamlet").post("/typing", { op: "start", type: "direct", to: [id("othello")] }));
    const events = ofType(await q.events(), "typing");
    expect(events.length).toBeGreaterThan(0);
    for (const e of events) expectShape(obj({ sender: obj({ user_id: int, email: str }), recipients: list(obj({ user_id: int, email: str })) }), e, "typing event");
  });

  test("update_message_flags: op, flag, messages, all (line 246)", async () => {
    const q = await ztQueue("hamlet");
    ok(await zt("hamlet").post("/messages/flags", { messages: [fx.huddle], op: "add", flag: "read" }));
    expectShape(obj({ ...eventBase, op: oneOf("add"), flag: str, messages: list(int), all: bool }), one(await q.events(), "update_message_flags"), "event");
  });

  test("subscription: op, property, value, stream_id; peer_* with stream_ids and user_ids (line 247)", async () => {
    const q = await ztQueue("othello");
    ok(await zt("othello").post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: fx.denmark, property: "color", value: "#aabbcc" }] }));
    ok(await py("iago").post("/users/me/subscriptions", { subscriptions: [{ name: "Denmark" }], principals: [id("shiva")] }));
    ok(await py("iago").delete("/users/me/subscriptions", { subscriptions: ["Denmark"], principals: [id("shiva")] }));
    const events = await q.events();
    expectShape(obj({ ...eventBase, op: oneOf("peer_remove"), stream_ids: list(int), user_ids: list(int) }), one(events, "subscription", "peer_remove"), "event");
    expectShape(obj({ ...eventBase, op: oneOf("update"), property: str, value: any, stream_id: int }), one(events, "subscription", "update"), "event");
    expectShape(obj({ ...eventBase, op: oneOf("peer_add"), stream_ids: list(int), user_ids: list(int) }), one(events, "subscription", "peer_add"), "event");
  });

  test("realm_user and user_settings events for ZT (§10 (a), line 385)", async () => {
    const q = await ztQueue("othello");
    ok(await zt("othello").patch("/settings", { twenty_four_hour_time: true }));
    ok(await zt("hamlet").patch("/settings", { full_name: "King Hamlet" + " II" }));
    ok(await zt("hamlet").patch("/settings", { full_name: "King Hamlet" }));
    const events = await q.events();
    expectShape(obj({ ...eventBase, op: oneOf("update"), property: str, value: any }), one(events, "user_settings"), "event");
    expectShape(obj({ ...eventBase, op: oneOf("update"), person: obj({ user_id: int, full_name: str }) }), one(events, "realm_user", "update"), "event");
  });
});

// =======================================================================================
describe("§6 messages and other endpoints", () => {
  const MessagesResponse = (selfId: number) =>
    obj({ anchor: int, found_newest: bool, found_oldest: bool, found_anchor: bool, history_limited: bool, messages: list(messageCheck(selfId, true)) });

  test("ZF: GET /messages with object narrows and every anchor form; five metadata fields + messages (lines 254-255, 390)", async () => {
    const narrows = [
      [],
      [{ operator: "channel", operand: fx.denmark }],
      [{ operator: "channel", operand: fx.denmark }, { operator: "topic", operand: "greetings" }],
      [{ operator: "dm", operand: [id("othello")] }],
      [{ operator: "dm", operand: [id("othello"), id("cordelia")] }],
      [{ operator: "with", operand: fx.bold }],
      [{ operator: "is", operand: "mentioned" }],
      [{ operator: "is", operand: "starred" }],
      [{ operator: "search", operand: "Denmark" }],
      [{ operator: "channel", operand: fx.denmark, negated: false }],
    ];
    for (const narrow of narrows) {
      for (const anchor of ["newest", "oldest", "first_unread", String(fx.bold)]) {
        const r = ok(await zf("hamlet").get("/messages", { narrow, anchor, num_before: 10, num_after: 10, allow_empty_topic_name: true, client_gravatar: false, apply_markdown: true }));
        expectShape(MessagesResponse(id("hamlet")), r, `narrow ${show(narrow)} anchor ${anchor}`);
      }
    }
    const ids = async (narrow: unknown) => ok(await zf("hamlet").get("/messages", { narrow, anchor: "newest", num_before: 100, num_after: 0 })).messages.map((m: any) => m.id);
    expect(await ids([{ operator: "is", operand: "mentioned" }])).toContain(fx.mention);
    expect(await ids([{ operator: "is", operand: "starred" }])).toContain(fx.bold);
    expect(await ids([{ operator: "search", operand: "secret" }])).toContain(fx.dm);
    expect(await ids([{ operator: "dm", operand: [id("othello"), id("cordelia")] }])).toContain(fx.huddle);
  });

  test("ZT: legacy [[op, operand]] narrows, use_first_unread_anchor, anchor 10^16; anchor + messages (lines 254-255, 381)", async () => {
    const cases: [unknown, number][] = [
      [[["stream", "Denmark"], ["topic", "greetings"]], fx.mention],
      [[["is", "private"]], fx.dm],
      [[["pm-with", s.users.othello.email]], fx.dm],
      [[["pm-with", `${s.users.othello.email},${s.users.cordelia.email}`]], fx.huddle],
      [[["is", "starred"]], fx.bold],
      [[["is", "mentioned"]], fx.mention],
      [[["search", "secret"]], fx.dm],
      [[{ operator: "stream", operand: fx.denmark }], fx.mention],
    ];
    for (const [narrow, expected] of cases) {
      for (const anchor of [{ anchor: 0, use_first_unread_anchor: true }, { anchor: 10 ** 16 }]) {
        const r = ok(await zt("hamlet").get("/messages", { ...anchor, num_before: 30, num_after: 30, narrow, apply_markdown: true, client_gravatar: true }));
        // §6 calls found_newest optional for ZT; §10 (a) (line 381) lists it as returned.
        expectShape(obj({ anchor: int, messages: list(messageCheck(id("hamlet"), true)), found_newest: bool }), r, `narrow ${show(narrow)}`);
        expect(r.messages.map((m: any) => m.id)).toContain(expected);
      }
    }
  });

  test("GET /messages/{id}: ZF `message` with apply_markdown=false; ZT `raw_content` (line 256)", async () => {
    const r = ok(await zf("hamlet").get(`/messages/${fx.bold}`, { apply_markdown: false }));
    expectShape(messageCheck(id("hamlet"), true), r.message, "message");
    expect(r.message.content).toBe("Second **bold** message about Denmark");
    expect(ok(await zt("hamlet").get(`/messages/${fx.bold}`)).raw_content).toBe("Second **bold** message about Denmark");
  });

  test("POST /messages in every client's form: `id` back (lines 257, 360, 368)", async () => {
    const forms: [Wire, Params][] = [
      [zf("hamlet"), { type: "channel", to: fx.denmark, topic: "forms", content: "zf channel", read_by_sender: true, local_id: "9.9" }],
      [zf("hamlet"), { type: "direct", to: [id("othello")], content: "zf direct", read_by_sender: true }],
      [zt("hamlet"), { type: "stream", to: "Denmark", subject: "forms", content: "zt stream", read_by_sender: true }],
      [zt("hamlet"), { type: "private", to: [id("othello")], content: "zt private", read_by_sender: true }],
      [py("hamlet"), { type: "stream", to: "Denmark", subject: "forms", content: "bot stream", widget_content: null }],
      [py("hamlet"), { type: "private", to: [id("othello"), id("hamlet")], content: "bot private incl self", widget_content: null }],
      [py("hamlet"), { type: "private", to: [s.users.othello.email], content: "by email" }],
      [js("hamlet"), { type: "stream", to: "Denmark", subject: "forms", content: "js stream" }],
      [js("hamlet"), { type: "private", to: [s.users.othello.email], content: "js private" }],
    ];
    for (const [client, params] of forms) {
      const r = ok(await client.post("/messages", params));
      expect(Number.isInteger(r.id)).toBe(true);
    }
  });

  test("PATCH /messages/{id}: content, topic, propagate_mode, send_notification_to_*, stream_id, prev_content_sha256 (line 258)", async () => {
    const m = await send("hamlet", { type: "stream", to: fx.verona, topic: "patch all", content: "first" });
    ok(await zf("hamlet").patch(`/messages/${m}`, { content: "second", prev_content_sha256: createHash("sha256").update("first").digest("hex") }));
    ok(await zf("hamlet").patch(`/messages/${m}`, { topic: "patched", propagate_mode: "change_all", send_notification_to_old_thread: true, send_notification_to_new_thread: true }));
    ok(await js("hamlet").patch(`/messages/${m}`, { content: "third" }));
    ok(await zf("hamlet").patch(`/messages/${m}`, { stream_id: fx.denmark, propagate_mode: "change_one" }));
    const got = ok(await zf("hamlet").get(`/messages/${m}`, { apply_markdown: false })).message;
    expect({ content: got.content, subject: got.subject, stream_id: got.stream_id }).toEqual({ content: "third", subject: "patched", stream_id: fx.denmark });
  });

  test("DELETE /messages/{id} (ZF, PY, JS in the query) (line 259)", async () => {
    for (const client of [zf("iago"), py("iago"), js("iago")]) {
      const m = await send("hamlet", { type: "stream", to: fx.verona, topic: "deleting", content: "bye" });
      ok(await client.delete(`/messages/${m}`));
      expect((await zf("hamlet").get(`/messages/${m}`)).status).toBe(400);
    }
  });

  test("reactions: ZF / ZT with emoji_code; PY react() with name + reaction_type only (line 260)", async () => {
    const m = await send("othello", { type: "stream", to: fx.verona, topic: "reacting", content: "react to me" });
    ok(await zt("hamlet").post(`/messages/${m}/reactions`, { message_id: m, emoji_name: "smile", emoji_code: "1f604", reaction_type: "unicode_emoji" }));
    ok(await py("othello").post(`/messages/${m}/reactions`, { emoji_name: "octopus", message_id: m, reaction_type: "unicode_emoji" }));
    const reactions = ok(await zf("hamlet").get(`/messages/${m}`)).message.reactions;
    expect(reactions.map((r: any) => r.emoji_name).sort()).toEqual(["octopus", "smile"]);
    expect(reactions.find((r: any) => r.emoji_name === "octopus").emoji_code).toBe("1f419");
    ok(await py("othello").delete(`/messages/${m}/reactions`, { emoji_name: "octopus", message_id: m, reaction_type: "unicode_emoji" }));
  });

  test("POST /messages/flags answers `messages` (line 261)", async () => {
    for (const client of [zf("cordelia"), zt("cordelia"), js("cordelia")]) {
      const r = ok(await client.post("/messages/flags", { messages: [fx.bold], op: "add", flag: "read" }));
      expect(r.messages).toEqual([fx.bold]);
    }
  });

  test("ZF: POST /messages/flags/narrow answers processed_count, updated_count, first/last_processed_id, found_oldest, found_newest (line 262)", async () => {
    const r = ok(
      await zf("cordelia").post("/messages/flags/narrow", {
        anchor: "oldest",
        include_anchor: true,
        num_before: 0,
        num_after: 1000,
        narrow: [{ operator: "channel", operand: fx.denmark }],
        op: "add",
        flag: "read",
      }),
    );
    expectShape(obj({ processed_count: int, updated_count: int, first_processed_id: nullable(int), last_processed_id: nullable(int), found_oldest: bool, found_newest: bool }), r);
  });

  test("POST /typing: ZF (type=channel + stream_id, type=direct), ZT (to only), JS (to as JSON, multipart) (line 263)", async () => {
    ok(await zf("hamlet").post("/typing", { op: "start", type: "channel", stream_id: fx.denmark, topic: "t" }));
    ok(await zf("hamlet").post("/typing", { op: "stop", type: "direct", to: [id("othello")] }));
    ok(await zt("hamlet").post("/typing", { op: "start", to: [id("othello")] }));
    ok(await js("hamlet").post("/typing", { op: "stop", to: [id("othello")] }));
  });

  test("ZF: POST /users/me/presence with slim_presence + last_update_id: modern presences by id; ping_only (line 264)", async () => {
    const r = ok(await zf("hamlet").post("/users/me/presence", { status: "active", ping_only: false, new_user_input: true, slim_presence: true, last_update_id: -1 }));
    expectShape(obj({ presences: map(obj({ active_timestamp: int, idle_timestamp: int }), /^\d+$/) }), r);
    expect(Object.keys(r.presences)).toContain(String(id("othello")));
    ok(await zf("hamlet").post("/users/me/presence", { status: "idle", ping_only: true, new_user_input: false, slim_presence: true }));
  });

  test("ZT: POST /users/me/presence (status, new_user_input): legacy presences keyed by email (lines 264, 382)", async () => {
    const r = ok(await zt("hamlet").post("/users/me/presence", { status: "active", new_user_input: true }));
    expectShape(obj({ presences: map(obj({ aggregated: obj({ status: str, timestamp: int }) }), /@/) }), r);
    expect(Object.keys(r.presences)).toContain(s.users.othello.email);
  });

  test("GET /users/me/{stream_id}/topics: topics[].{max_id, name} (line 265)", async () => {
    const r = ok(await zf("hamlet").get(`/users/me/${fx.denmark}/topics`, { allow_empty_topic_name: true }));
    expectShape(obj({ topics: list(obj({ max_id: int, name: str })) }), r);
    expect(r.topics.map((t: any) => t.name)).toContain("greetings");
  });

  test("POST /user_uploads: ZF field `file` → uri and url; PY field named by the file's path (line 266)", async () => {
    expectShape(obj({ uri: str, url: str }), fx.upload);
    const r = ok(await py("hamlet").post("/user_uploads", {}, { files: { "/tmp/notes/hello.txt": new File(["python upload"], "hello.txt", { type: "text/plain" }) } }));
    expect(typeof r.uri).toBe("string");
  });

  test("ZF: other endpoints — subscriptions, properties, user_topics, settings, status, read_receipts, report, submessage, saved_snippets (line 267)", async () => {
    const c = zf("cordelia");
    ok(await c.post("/users/me/subscriptions", { subscriptions: [{ name: "Verona" }] }));
    ok(await c.post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: fx.verona, property: "is_muted", value: true }] }));
    // ZT on older code paths mutes through the legacy property.
    ok(await zt("cordelia").post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: fx.verona, property: "in_home_view", value: true }] }));
    expect(ok(await zt("cordelia").get("/users/me/subscriptions")).subscriptions.find((c: any) => c.stream_id === fx.verona).is_muted).toBe(false);
    ok(await c.delete("/users/me/subscriptions", { subscriptions: ["Verona"] }));
    ok(await c.post("/user_topics", { stream_id: fx.denmark, topic: "greetings", visibility_policy: 0 }));
    ok(await c.patch("/settings", { twenty_four_hour_time: false }));
    ok(await c.post("/users/me/status", { status_text: "", emoji_name: "", emoji_code: "", reaction_type: "" }));
    expectShape(obj({ user_ids: list(int) }), ok(await c.get(`/messages/${fx.bold}/read_receipts`)));
    // Reporting needs a (private) moderation request channel, as in Zulip.
    const moderation = await s.createChannel("iago", "Moderation", ["iago"], { invite_only: true });
    ok(await py("desdemona").patch("/realm", { moderation_request_channel_id: moderation }));
    ok(await c.post(`/messages/${fx.mention}/report`, { report_type: "spam", description: "" }));
    const poll = await send("cordelia", { type: "stream", to: fx.denmark, topic: "widgets", content: "/poll Where?" });
    ok(await c.post("/submessage", { message_id: poll, msg_type: "widget", content: JSON.stringify({ type: "new_option", idx: 1, option: "Here" }) }));
    ok(await c.post("/saved_snippets", { title: "x", content: "y" }));
  });

  test("ZT: GET /messages/{id}/history, GET /streams/{id}/email_address, DELETE /events (line 267)", async () => {
    const h = ok(await zt("hamlet").get(`/messages/${fx.bold}/history`));
    expectShape(obj({ message_history: list(obj({ timestamp: int })) }), h);
    expect(typeof ok(await zt("hamlet").get(`/streams/${fx.denmark}/email_address`)).email).toBe("string");
    const reg = ok(await zt("hamlet").post("/register", ZT_REGISTER));
    ok(await zt("hamlet").delete("/events", { queue_id: reg.queue_id }));
  });

  test("BOT: GET /users/me and GET / PUT /bot_storage (lines 267, 369)", async () => {
    const bot = await s.createBot("hamlet", { full_name: "Storage Bot", short_name: "storage" });
    const b = py(bot);
    expect(ok(await b.get("/server_settings")).zulip_version).toBeDefined();
    expectShape(obj({ user_id: int, full_name: str, email: str }), ok(await b.get("/users/me")));
    ok(await b.put("/bot_storage", { storage: { k: "v" } }));
    expect(ok(await b.get("/bot_storage", { keys: ["k"] })).storage).toEqual({ k: "v" });
  });

  test("JS: GET /streams, /users/me/subscriptions, /users, /users/me, /realm/emoji, /get_stream_id (lines 267, 375)", async () => {
    const c = js("hamlet");
    expect(Array.isArray(ok(await c.get("/streams")).streams)).toBe(true);
    expect(Array.isArray(ok(await c.get("/users/me/subscriptions")).subscriptions)).toBe(true);
    expect(Array.isArray(ok(await c.get("/users")).members)).toBe(true);
    expect(ok(await c.get("/users/me")).user_id).toBe(id("hamlet"));
    expect(typeof ok(await c.get("/realm/emoji")).emoji).toBe("object");
    expect(ok(await c.get("/get_stream_id", { stream: "Denmark" })).stream_id).toBe(fx.denmark);
  });

  test("JS: GET /messages (narrow JSON), GET /messages/{id} and its history, PATCH / DELETE with message_id echoed in the query (lines 48-49, 56, 374)", async () => {
    const c = js("hamlet");
    const r = ok(await c.get("/messages", { narrow: JSON.stringify([{ operator: "stream", operand: "Denmark" }]), anchor: "newest", num_before: 5, num_after: 0 }));
    expectShape(obj({ anchor: int, messages: list(messageCheck(id("hamlet"), true)) }), r);
    expect(r.messages.length).toBeGreaterThan(0);
    expect(ok(await c.get(`/messages/${fx.bold}`, { message_id: fx.bold })).message.id).toBe(fx.bold);
    expect(Array.isArray(ok(await c.get(`/messages/${fx.bold}/history`, { message_id: fx.bold })).message_history)).toBe(true);
    const m = await send("hamlet", { type: "stream", to: fx.verona, topic: "js", content: "js v1" });
    ok(await c.patch(`/messages/${m}`, { message_id: m, content: "js v2" }));
    ok(await c.post("/messages/flags", { messages: JSON.stringify([m]), flag: "starred", op: "add" }));
    ok(await c.delete(`/messages/${m}`, { message_id: m }));
  });

  test("message objects: stream display_recipient is a string; DM display_recipient includes self; ZT's subject \"\" on DMs (lines 273-281)", async () => {
    const r = ok(await zf("hamlet").get("/messages", { anchor: "newest", num_before: 200, num_after: 0, narrow: [] }));
    expectShape(list(messageCheck(id("hamlet"), true)), r.messages, "messages");
    const dm = r.messages.find((m: any) => m.id === fx.dm);
    expect(dm.subject).toBe("");
    expect(dm.display_recipient.map((u: any) => u.id).sort()).toEqual([id("hamlet"), id("othello")].sort((a, b) => a - b));
  });

  test("BOT: message events with raw Markdown and the `mentioned` flag for @**Full Name** and @**Name|id** (lines 286, 367)", async () => {
    const bot = await s.createBot("hamlet", { full_name: "Helper Bot", short_name: "helper" });
    ok(await py("iago").post("/users/me/subscriptions", { subscriptions: [{ name: "Denmark" }], principals: [bot.id] }));
    const b = py(bot);
    const reg = ok(await b.post("/register", { event_types: ["message"], narrow: [] }));
    await send("hamlet", { type: "stream", to: fx.denmark, topic: "bots", content: "@**Helper Bot** hello" });
    await send("hamlet", { type: "stream", to: fx.denmark, topic: "bots", content: `@**Helper Bot|${bot.id}** again` });
    await send("hamlet", { type: "private", to: [bot.id], content: "a private word" });
    const events = ofType(await drain(bot, reg.queue_id), "message");
    expect(events.length).toBe(3);
    for (const e of events) {
      expectShape(
        obj({
          ...eventBase,
          flags: list(str),
          message: obj({ content: str, display_recipient: union(str, list(obj({ id: int, email: str, full_name: str }))), subject: str, type: str, sender_id: int, sender_email: str, id: int }),
        }),
        e,
        "event",
      );
    }
    expect(events.map((e) => e.message.content)).toEqual(["@**Helper Bot** hello", `@**Helper Bot|${bot.id}** again`, "a private word"]);
    expect(events[0].flags).toContain("mentioned");
    expect(events[1].flags).toContain("mentioned");
    // The reply, as the bot library sends it.
    ok(await b.post("/messages", { type: "stream", to: "Denmark", subject: "bots", content: "at your service", widget_content: null }));
    ok(await b.post("/messages", { type: "private", to: [s.users.hamlet.email], content: "hi", widget_content: null }));
  });
});

// =======================================================================================
describe("§7 avatars, emoji, static files, uploads", () => {
  const basic = (u: TestUser) => ({ authorization: "Basic " + Buffer.from(`${u.email}:${u.apiKey}`).toString("base64") });

  test("ZF: /avatar/{id} and /avatar/{id}/medium load with Basic auth (lines 292, 393)", async () => {
    for (const path of [`/avatar/${id("othello")}`, `/avatar/${id("othello")}/medium`]) {
      const r = await fetch(s.url + path, { headers: basic(s.users.hamlet) });
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type") ?? "").toMatch(/^image\//);
    }
  });

  test("ZF: an uploaded avatar_url and its -medium.png variant are both served (line 293)", async () => {
    ok(await zf("othello").post("/users/me/avatar", {}, { files: { file: png() } }));
    const url = ok(await zf("hamlet").get(`/users/${id("othello")}`)).user.avatar_url as string;
    expect(typeof url).toBe("string");
    const medium = url.replace(/(\.png)?(\?.*)?$/, (_m, _png, q) => `-medium.png${q ?? ""}`);
    for (const u of [url, medium]) {
      const r = await fetch(new URL(u, s.url), { headers: basic(s.users.hamlet) });
      expect(r.status).toBe(200);
    }
  });

  test("ZF: every user's avatar_url, and its -medium.png variant, loads with Basic auth (line 293)", async () => {
    const reg = ok(await zf("hamlet").post("/register", ZF_REGISTER));
    const urls = [...reg.realm_users, ...reg.cross_realm_bots].map((u: any) => u.avatar_url).filter((u: unknown) => typeof u === "string") as string[];
    expect(urls.length).toBeGreaterThan(0);
    for (const url of urls) {
      if (url.startsWith("https://secure.gravatar.com")) continue;
      const medium = url.replace(/(\.png)?(\?.*)?$/, (_m, _png, q) => `-medium.png${q ?? ""}`);
      for (const u of [url, medium]) expect({ u, status: (await fetch(new URL(u, s.url), { headers: basic(s.users.hamlet) })).status }).toEqual({ u, status: 200 });
    }
  });

  test("realm_emoji source_url resolves against the realm (line 298)", async () => {
    const emoji = ok(await zf("hamlet").get("/realm/emoji")).emoji;
    const parrot = Object.values(emoji).find((e: any) => e.name === "hearth_parrot") as any;
    const r = await fetch(new URL(parrot.source_url, s.url), { headers: basic(s.users.hamlet) });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type") ?? "").toMatch(/^image\//);
  });

  test("the `zulip` reaction (zulip_extra_emoji) is accepted (line 299)", async () => {
    const reactions = ok(await zf("hamlet").get(`/messages/${fx.mention}`)).message.reactions;
    expect(reactions.find((r: any) => r.reaction_type === "zulip_extra_emoji")).toMatchObject({ emoji_name: "zulip", emoji_code: "zulip" });
  });

  // §7 line 299: "`zulip_extra_emoji` loads `/static/generated/emoji/images/emoji/unicode/zulip.png`."
  // (It answered 404 before this test, so ZF showed a broken image for every `zulip` reaction.)
  test("ZF: the zulip_extra_emoji image /static/generated/emoji/images/emoji/unicode/zulip.png is served (line 299)", async () => {
    const z = await fetch(s.url + "/static/generated/emoji/images/emoji/unicode/zulip.png");
    expect(z.status).toBe(200);
    expect(z.headers.get("content-type") ?? "").toMatch(/^image\//);
  });

  test("ZF: server_emoji_data_url: unauthenticated GET of an absolute URL → {code_to_names} (line 300)", async () => {
    const reg = ok(await zf("hamlet").post("/register", ZF_REGISTER));
    expectShape(absUrl, reg.server_emoji_data_url, "server_emoji_data_url");
    const r = await fetch(reg.server_emoji_data_url);
    expect(r.status).toBe(200);
    const body = await r.json();
    expectShape(obj({ code_to_names: map(list(str)) }), body, "emoji data");
    expect(body.code_to_names["1f600"]).toContain("grinning");
  });

  test("ZF: /user_uploads/… images load with API Basic auth (line 303)", async () => {
    const r = await fetch(new URL(fx.upload.uri, s.url), { headers: basic(s.users.hamlet) });
    expect(r.status).toBe(200);
    expect(await r.text()).toBe("hello upload");
  });

  test("ZF: GET /api/v1/user_uploads/{realm_id}/{filename} → {url}, a temporary URL that works without auth (line 304)", async () => {
    const path = new URL(fx.upload.uri, s.url).pathname.replace(/^\/user_uploads/, "");
    const r = ok(await zf("hamlet").get(`/user_uploads${path}`));
    expect(typeof r.url).toBe("string");
    const plain = await fetch(new URL(r.url, s.url));
    expect(plain.status).toBe(200);
    expect(await plain.text()).toBe("hello upload");
  });

  test("ZF: server_thumbnail_formats is a list (lines 175, 305); realm_icon / realm_icon_url are URL strings (line 306)", async () => {
    const reg = ok(await zf("hamlet").post("/register", ZF_REGISTER));
    expectShape(obj({ server_thumbnail_formats: list(obj({ name: str, max_width: int, max_height: int, animated: bool, format: str })), realm_icon_url: urlMaybeRelative }), reg);
    const settings = ok(await anon("zf").get("/server_settings"));
    expectShape(obj({ realm_icon: urlMaybeRelative }), settings);
    for (const icon of [settings.realm_icon, reg.realm_icon_url]) expect((await fetch(new URL(icon, s.url))).status).toBe(200);
  });
});

// =======================================================================================
describe("§10 prioritized surface", () => {
  test("POST /fetch_api_key returns api_key, email, user_id (line 356)", async () => {
    const r = ok(await anon("zf").post("/fetch_api_key", { username: s.users.hamlet.email, password: PASSWORD }));
    expectShape(obj({ api_key: str, email: str, user_id: int }), r);
  });

  test("ZF: presences by id, or {} with realm_presence_disabled:true (lines 149, 185, 389)", async () => {
    let { state } = await zfQueue("hamlet");
    expect(state.realm_presence_disabled).toBe(false);
    expect(Object.keys(state.presences).length).toBeGreaterThan(0);
    ok(await py("desdemona").patch("/realm", { presence_disabled: true }));
    try {
      ({ state } = await zfQueue("hamlet"));
      expect(state.realm_presence_disabled).toBe(true);
      expectShape(map(obj({ active_timestamp: int, idle_timestamp: int }), /^\d+$/), state.presences, "presences");
    } finally {
      ok(await py("desdemona").patch("/realm", { presence_disabled: false }));
    }
  });
});
