/**
 * The domain test kit: a real Hearth server on a random loopback port with a temp
 * data folder, Zulip's usual cast of seeded users, and an HTTP client that speaks
 * the wire format real clients use (form-urlencoded or multipart, JSON in fields,
 * HTTP Basic).
 */
import { expect } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Value } from "@sinclair/typebox/value";
import type { TSchema } from "@sinclair/typebox";
import { startServer, type RunningServer } from "../../src/server";
import { Store } from "../../src/store/db";
import { doInitRealm } from "../../src/actions/realm";
import { Role } from "../../src/store/users";
import { doCreateUser } from "../../src/actions/create_user";

export const CAST = {
  desdemona: { full_name: "Desdemona", role: Role.OWNER },
  iago: { full_name: "Iago", role: Role.ADMINISTRATOR },
  shiva: { full_name: "Shiva", role: Role.MODERATOR },
  hamlet: { full_name: "King Hamlet", role: Role.MEMBER },
  othello: { full_name: "Othello, the Moor of Venice", role: Role.MEMBER },
  cordelia: { full_name: "Cordelia, Lear's daughter", role: Role.MEMBER },
  polonius: { full_name: "Polonius", role: Role.GUEST },
} as const;
export type CastName = keyof typeof CAST;

export const PASSWORD = "correct horse battery";

export interface TestUser {
  id: number;
  email: string;
  apiKey: string;
  name: CastName | string;
}

export type Params = Record<string, unknown>;

/** Encodes like the Python bindings: strings raw, everything else as JSON. */
export function encodeValue(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * The runtime's own FormData. Importing zulip-js in-process (isomorphic-form-data)
 * replaces the global with the `form-data` package, which Bun's fetch sends as the
 * text "[object FormData]"; every test file after that one would lose multipart.
 */
let NativeFormData: typeof FormData | null = "getBoundary" in globalThis.FormData.prototype ? null : globalThis.FormData;
async function nativeFormData(): Promise<typeof FormData> {
  NativeFormData ??= (await new Response("a=1", { headers: { "content-type": "application/x-www-form-urlencoded" } }).formData()).constructor as typeof FormData;
  return NativeFormData;
}

/** A response read the way tests look at it: the JSON body (or `{ nonJson }`), and the raw text. */
export async function readResponse(res: Response): Promise<ApiResponse & { text: string }> {
  const text = await res.text();
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = { nonJson: text };
  }
  return { status: res.status, body: parsed, headers: res.headers, text };
}

/** The client_capabilities the Zulip mobile app (zulip-flutter) registers with. */
export const MOBILE_APP_CAPABILITIES = {
  notification_settings_null: true,
  bulk_message_deletion: true,
  user_avatar_url_field_optional: true,
  stream_typing_notifications: true,
  user_settings_object: true,
  include_deactivated_groups: true,
  empty_topic_name: true,
  individual_emoji_changes: true,
};

export interface ApiResponse {
  status: number;
  body: any;
  headers: Headers;
}

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly email: string | null,
    readonly apiKey: string | null,
  ) {}

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    const h: Record<string, string> = { ...extra };
    if (this.email !== null && this.apiKey !== null) {
      h.authorization = "Basic " + Buffer.from(`${this.email}:${this.apiKey}`).toString("base64");
    }
    return h;
  }

  async request(method: string, path: string, params: Params = {}, options: { multipart?: boolean; query?: boolean } = {}): Promise<ApiResponse> {
    const url = new URL(this.baseUrl + "/api/v1" + path);
    const entries = Object.entries(params).filter(([, v]) => v !== undefined);
    let body: BodyInit | undefined;
    let headers = this.headers();
    if (method === "GET" || options.query) {
      for (const [k, v] of entries) url.searchParams.set(k, encodeValue(v));
    } else if (options.multipart) {
      const form = new (await nativeFormData())();
      for (const [k, v] of entries) {
        if (v instanceof Blob) form.append(k, v, (v as File).name ?? "file");
        else form.append(k, encodeValue(v));
      }
      body = form;
    } else {
      body = new URLSearchParams(entries.map(([k, v]) => [k, encodeValue(v)])).toString();
      headers = this.headers({ "content-type": "application/x-www-form-urlencoded" });
    }
    const { status, body: parsed, headers: responseHeaders } = await readResponse(await fetch(url, { method, headers, body }));
    return { status, body: parsed, headers: responseHeaders };
  }

  get(path: string, params?: Params) {
    return this.request("GET", path, params);
  }
  post(path: string, params?: Params, options?: { multipart?: boolean }) {
    return this.request("POST", path, params, options);
  }
  patch(path: string, params?: Params, options?: { multipart?: boolean; query?: boolean }) {
    return this.request("PATCH", path, params, options);
  }
  put(path: string, params?: Params) {
    return this.request("PUT", path, params);
  }
  delete(path: string, params?: Params, options?: { query?: boolean }) {
    return this.request("DELETE", path, params, options);
  }
}

export interface TestServer {
  /** Creates (or joins) a channel through the API as `owner`, subscribing `members` too; returns its ID. */
  createChannel(owner: CastName, name: string, members: CastName[], extra?: Params): Promise<number>;
  /**
   * Creates a bot through POST /bots as `owner` (`fields`: full_name, short_name, …);
   * the user carries the bot's API email as GET /users/{id} gives it, and `created` the
   * POST's answer.
   */
  createBot(owner: CastName, fields: Params): Promise<TestUser & { created: Record<string, any> }>;
  url: string;
  server: RunningServer;
  dataDir: string;
  users: Record<CastName, TestUser>;
  /** An API client authenticated as a seeded user (or any TestUser). */
  as(who: CastName | TestUser): ApiClient;
  anonymous(): ApiClient;
  /** Creates another user through the real action path. */
  createUser(name: string, role?: number): Promise<TestUser>;
  stop(): Promise<void>;
}

export interface TestServerOptions {
  env?: Record<string, string>;
  externalUrl?: string | null;
  /** Reuse an existing data folder (restart tests). */
  dataDir?: string;
}

/**
 * Runs `start` with these environment variables set, then puts the old values back:
 * the server reads its limits as it starts, and test files share one process, so a
 * setting left behind would reach every later server and spawned CLI. Starts may
 * overlap (Promise.all of two servers): each putting back what it found would leave
 * the other's setting behind when they end in the order they began, so the values from
 * before any of them are kept once and put back when the last one ends.
 */
let startsWithEnv = 0;
const envBeforeStarts = new Map<string, string | undefined>();
export async function withEnv<T>(env: Record<string, string>, start: () => Promise<T>): Promise<T> {
  for (const k of Object.keys(env)) if (!envBeforeStarts.has(k)) envBeforeStarts.set(k, process.env[k]);
  Object.assign(process.env, env);
  startsWithEnv++;
  try {
    return await start();
  } finally {
    if (--startsWithEnv === 0) {
      for (const [k, v] of envBeforeStarts) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      envBeforeStarts.clear();
    }
  }
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "hearth-test-"));
  const users = {} as Record<CastName, TestUser>;
  if (!options.dataDir) {
    const store = new Store(dataDir);
    const { owner } = await doInitRealm(store, {
      realmName: "Zulip Dev",
      ownerEmail: "desdemona@zulip.test",
      ownerPassword: PASSWORD,
      ownerFullName: CAST.desdemona.full_name,
      externalUrl: options.externalUrl ?? null,
    });
    await store.close();
    users.desdemona = { id: owner.id, email: owner.email, apiKey: owner.api_key, name: "desdemona" };
  }
  const server = await withEnv(options.env ?? {}, () => startServer({ dataDir, host: "127.0.0.1", port: 0, externalUrl: null }));
  const h = server.h;
  const createUser = async (name: string, role: number = Role.MEMBER): Promise<TestUser> => {
    const cast = (CAST as Record<string, { full_name: string; role: number }>)[name];
    const u = await doCreateUser(h, {
      email: `${name}@zulip.test`,
      full_name: cast?.full_name ?? name,
      // Hashing is deliberately slow; only the users login tests use get a password.
      password: name === "hamlet" ? PASSWORD : null,
      role: cast?.role ?? role,
    });
    return { id: u.id, email: u.email, apiKey: u.api_key, name };
  };
  if (!options.dataDir) {
    for (const name of Object.keys(CAST) as CastName[]) {
      if (name !== "desdemona") users[name] = await createUser(name);
    }
  }
  const as = (who: CastName | TestUser) => {
    const u = typeof who === "string" ? users[who] : who;
    return new ApiClient(server.url, u.email, u.apiKey);
  };
  return {
    url: server.url,
    server,
    dataDir,
    users,
    as,
    async createChannel(owner, name, members, extra = {}) {
      const principals = members.map((m) => users[m].id);
      expectSuccess(await as(owner).post("/users/me/subscriptions", { subscriptions: [{ name }], principals, ...extra }));
      return expectSuccess(await as(owner).get("/get_stream_id", { stream: name })).stream_id;
    },
    async createBot(owner, fields) {
      const created = expectSuccess(await as(owner).post("/bots", fields));
      const email = expectSuccess(await as(owner).get(`/users/${created.user_id}`)).user.email as string;
      return { id: created.user_id, email, apiKey: created.api_key, name: String(fields.short_name), created };
    },
    anonymous: () => new ApiClient(server.url, null, null),
    createUser,
    async stop() {
      await server.stop();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function expectSuccess(res: ApiResponse): any {
  if (res.status !== 200 || res.body.result !== "success") {
    throw new Error(`expected success, got HTTP ${res.status}: ${JSON.stringify(res.body)}`);
  }
  expect(res.body.msg).toBe("");
  return res.body;
}

export function expectError(res: ApiResponse, status: number, code: string, msg?: string | RegExp): any {
  expect({ status: res.status, result: res.body.result, code: res.body.code }).toEqual({ status, result: "error", code });
  expect(typeof res.body.msg).toBe("string");
  if (typeof msg === "string") expect(res.body.msg).toBe(msg);
  else if (msg) expect(res.body.msg).toMatch(msg);
  return res.body;
}

/** Checks a value against a TypeBox schema, failing with every mismatch listed. */
export function expectSchema(schema: TSchema, value: unknown): void {
  if (Value.Check(schema, value)) return;
  const errors = [...Value.Errors(schema, value)].slice(0, 10).map((e) => `${e.path || "/"}: ${e.message} (got ${JSON.stringify(e.value)})`);
  throw new Error(`response does not match schema:\n  ${errors.join("\n  ")}`);
}

export interface PublishedEvent {
  event: Record<string, any>;
  userIds: readonly number[];
}

/**
 * Records every event actions publish, with its recipients, straight from the
 * server's event hub: for asserting exactly who is told what. Per-user fields (a
 * message's flags) and per-queue fields (`perQueue`, e.g. local_message_id) are
 * applied as queues would see them: one record per distinct per-user value.
 */
export function recordPublished(s: TestServer): { events: PublishedEvent[]; ofType(type: string): PublishedEvent[]; clear(): void } {
  const events: PublishedEvent[] = [];
  s.server.h.events.attach({
    deliver: (event, userIds, options) => {
      const groups = new Map<string, number[]>();
      for (const id of userIds) {
        const key = JSON.stringify(options.perUser?.get(id) ?? {});
        groups.set(key, [...(groups.get(key) ?? []), id]);
      }
      const perQueue = options.perQueue ? { perQueue: Object.fromEntries(options.perQueue) } : {};
      for (const [key, ids] of groups) events.push({ event: structuredClone({ ...event, ...JSON.parse(key), ...perQueue }), userIds: ids });
    },
  });
  return {
    events,
    ofType: (type) => events.filter((e) => e.event.type === type),
    clear: () => void events.splice(0),
  };
}
