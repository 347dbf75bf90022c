import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiClient, expectError, expectSchema, expectSuccess, PASSWORD, startTestServer, type TestServer } from "../kit";
import { FetchApiKeyResponse, ServerSettingsResponse } from "../../src/schemas/users";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ env: { HEARTH_LOGIN_FAILURES_PER_USER: "3" } });
});
afterAll(() => s.stop());

describe("server_settings", () => {
  test("unauthenticated, with every field the mobile app requires", async () => {
    const body = expectSuccess(await s.anonymous().get("/server_settings"));
    expectSchema(ServerSettingsResponse, body);
    expect(body.realm_uri).toBe(s.url);
    expect(body.realm_name).toBe("Zulip Dev");
    expect(body.service_feature_level).toBe(body.zulip_feature_level);
  });

  test("tolerates credentials, as the Python bindings send them", async () => {
    expectSchema(ServerSettingsResponse, expectSuccess(await s.as("hamlet").get("/server_settings")));
  });

  test("ignores bad credentials: wrong, revoked, a deactivated account's, another scheme", async () => {
    const wrong = new ApiClient(s.url, s.users.hamlet.email, "x".repeat(32));
    expectSchema(ServerSettingsResponse, expectSuccess(await wrong.get("/server_settings")));
    expectSchema(ServerSettingsResponse, expectSuccess(await new ApiClient(s.url, "nobody@zulip.test", "k").get("/server_settings")));
    const u = await s.createUser("rosencrantz");
    expectSuccess(await s.as(u).post("/users/me/api_key/regenerate"));
    expectError(await s.as(u).get("/users/me"), 401, "INVALID_API_KEY");
    expect(expectSuccess(await s.as(u).get("/server_settings")).realm_name).toBe("Zulip Dev");
    const v = await s.createUser("guildenstern");
    expectSuccess(await s.as("iago").delete(`/users/${v.id}`));
    expectError(await s.as(v).get("/users/me"), 401, "USER_DEACTIVATED");
    expectSchema(ServerSettingsResponse, expectSuccess(await s.as(v).get("/server_settings")));
    const bearer = await fetch(s.url + "/api/v1/server_settings", { headers: { authorization: "Bearer abc" } });
    expect(bearer.status).toBe(200);
  });
});

describe("HTTP Basic authentication", () => {
  test("missing credentials → 401 UNAUTHORIZED", async () => {
    const res = await s.anonymous().get("/users/me");
    expectError(res, 401, "UNAUTHORIZED");
    expect(res.headers.get("www-authenticate")).toContain("Basic");
  });

  test("a page's fetch (X-Requested-With) is challenged with Session, so no browser login dialog opens", async () => {
    const wrong = "Basic " + Buffer.from(`${s.users.hamlet.email}:wrong-key`).toString("base64");
    const fromPage = await fetch(s.url + "/api/v1/users/me", { headers: { authorization: wrong, "x-requested-with": "XMLHttpRequest" } });
    expect(fromPage.status).toBe(401);
    expect(fromPage.headers.get("www-authenticate")).toBe('Session realm="zulip"');
    const fromClient = await fetch(s.url + "/api/v1/users/me", { headers: { authorization: wrong } });
    expect(fromClient.headers.get("www-authenticate")).toBe('Basic realm="zulip"');
  });

  test("a non-Basic scheme → 401 UNAUTHORIZED", async () => {
    const res = await fetch(s.url + "/api/v1/users/me", { headers: { authorization: "Bearer abc" } });
    expect(res.status).toBe(401);
    expect((await res.json()).code).toBe("UNAUTHORIZED");
  });

  test("wrong key, unknown email → 401 INVALID_API_KEY", async () => {
    expectError(await new ApiClient(s.url, s.users.hamlet.email, "x".repeat(32)).get("/users/me"), 401, "INVALID_API_KEY", "Invalid API key");
    expectError(await new ApiClient(s.url, "nobody@zulip.test", s.users.hamlet.apiKey).get("/users/me"), 401, "INVALID_API_KEY");
  });

  test("the email is case-insensitive and the placeholder address works too", async () => {
    const hamlet = s.users.hamlet;
    expectSuccess(await new ApiClient(s.url, hamlet.email.toUpperCase(), hamlet.apiKey).get("/users/me"));
    const host = new URL(s.url).hostname;
    expectSuccess(await new ApiClient(s.url, `user${hamlet.id}@${host}`, hamlet.apiKey).get("/users/me"));
  });

  test("deactivated user → 401 USER_DEACTIVATED; reactivated works again", async () => {
    const u = await s.createUser("ophelia");
    expectSuccess(await s.as("iago").delete(`/users/${u.id}`));
    expectError(await s.as(u).get("/users/me"), 401, "USER_DEACTIVATED", "Account is deactivated");
    expectSuccess(await s.as("iago").post(`/users/${u.id}/reactivate`));
    expectSuccess(await s.as(u).get("/users/me"));
  });
});

describe("fetch_api_key", () => {
  test("returns api_key, email and user_id for the right password (multipart, like zulip-js)", async () => {
    const body = expectSuccess(
      await s.anonymous().post("/fetch_api_key", { username: s.users.hamlet.email, password: PASSWORD }, { multipart: true }),
    );
    expectSchema(FetchApiKeyResponse, body);
    expect(body).toMatchObject({ api_key: s.users.hamlet.apiKey, email: s.users.hamlet.email, user_id: s.users.hamlet.id });
  });

  test("wrong password → 401 AUTHENTICATION_FAILED; then rate limited per account with Retry-After", async () => {
    const who = { username: "desdemona@zulip.test", password: "wrong" };
    for (let i = 0; i < 3; i++) expectError(await s.anonymous().post("/fetch_api_key", who), 401, "AUTHENTICATION_FAILED");
    const res = await s.anonymous().post("/fetch_api_key", { ...who, password: PASSWORD });
    const body = expectError(res, 429, "RATE_LIMIT_HIT");
    expect(body["retry-after"]).toBeGreaterThan(0);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    // Other accounts are unaffected.
    expectSuccess(await s.anonymous().post("/fetch_api_key", { username: s.users.hamlet.email, password: PASSWORD }));
  });

  test("an account's email and its user{id}@host name share one failure limit", async () => {
    const host = new URL(s.url).hostname;
    const names = [s.users.cordelia.email, s.users.cordelia.email.toUpperCase(), `user${s.users.cordelia.id}@${host}`];
    for (const username of names) expectError(await s.anonymous().post("/fetch_api_key", { username, password: "wrong" }), 401, "AUTHENTICATION_FAILED");
    expectError(await s.anonymous().post("/fetch_api_key", { username: names[2], password: "wrong" }), 429, "RATE_LIMIT_HIT");
  });

  test("missing argument → REQUEST_VARIABLE_MISSING with var_name", async () => {
    const body = expectError(await s.anonymous().post("/fetch_api_key", { username: "a" }), 400, "REQUEST_VARIABLE_MISSING", "Missing 'password' argument");
    expect(body.var_name).toBe("password");
  });
});

describe("api key regeneration", () => {
  test("the old key stops working, the new one works", async () => {
    const u = await s.createUser("regen");
    const body = expectSuccess(await s.as(u).post("/users/me/api_key/regenerate"));
    expect(body.api_key).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(body.api_key).not.toBe(u.apiKey);
    expectError(await s.as(u).get("/users/me"), 401, "INVALID_API_KEY");
    expectSuccess(await s.as({ ...u, apiKey: body.api_key }).get("/users/me"));
  });
});

describe("deactivated organization", () => {
  test("every authenticated request → 401 REALM_DEACTIVATED, and login is refused", async () => {
    const t2 = await startTestServer();
    try {
      const { getRealm, putRealm } = await import("../../src/store/realm");
      const h = t2.server.h;
      await h.store.commit(() => putRealm(h.store, { ...getRealm(h.store)!, deactivated: true }));
      expectError(await t2.as("hamlet").get("/users/me"), 401, "REALM_DEACTIVATED");
      expectError(await t2.anonymous().post("/fetch_api_key", { username: t2.users.hamlet.email, password: PASSWORD }), 401, "REALM_DEACTIVATED");
    } finally {
      await t2.stop();
    }
  });
});

describe("the client's address behind a reverse proxy (X-Forwarded-For)", () => {
  const login = (t: TestServer, username: string, password: string, forwardedFor?: string) =>
    fetch(`${t.url}/api/v1/fetch_api_key`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...(forwardedFor ? { "x-forwarded-for": forwardedFor } : {}) },
      body: new URLSearchParams({ username, password }),
    });

  test("from a trusted proxy (loopback by default), failures count against the forwarded client, not everyone behind the proxy", async () => {
    const t = await startTestServer({ env: { HEARTH_AUTH_FAILURES_PER_IP: "3" } });
    try {
      for (let i = 0; i < 3; i++) expect((await login(t, `nobody${i}@zulip.test`, "wrong", "203.0.113.7")).status).toBe(401);
      expect((await login(t, t.users.hamlet.email, PASSWORD, "203.0.113.7")).status).toBe(429);
      // Another client behind the same proxy still signs in.
      expect((await login(t, t.users.hamlet.email, PASSWORD, "203.0.113.8")).status).toBe(200);
      // A client cannot escape by writing its own X-Forwarded-For: the proxy appends the real address last.
      expect((await login(t, t.users.hamlet.email, PASSWORD, "203.0.113.8, 203.0.113.7")).status).toBe(429);
    } finally {
      await t.stop();
    }
  });

  test("with HEARTH_TRUSTED_PROXIES empty the header is ignored: every request is its connection's address", async () => {
    const t = await startTestServer({ env: { HEARTH_AUTH_FAILURES_PER_IP: "3", HEARTH_TRUSTED_PROXIES: "" } });
    try {
      for (let i = 0; i < 3; i++) expect((await login(t, `nobody${i}@zulip.test`, "wrong", `198.51.100.${i}`)).status).toBe(401);
      expect((await login(t, t.users.hamlet.email, PASSWORD, "198.51.100.99")).status).toBe(429);
    } finally {
      await t.stop();
    }
  });
});
