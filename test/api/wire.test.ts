import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectSuccess, startTestServer, type TestServer } from "../kit";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const auth = () => "Basic " + Buffer.from(`${s.users.iago.email}:${s.users.iago.apiKey}`).toString("base64");

describe("Zulip wire rules", () => {
  test("unknown routes under /api/v1 answer JSON 404", async () => {
    const res = await fetch(s.url + "/api/v1/no/such/endpoint", { headers: { authorization: auth() } });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(await res.json()).toMatchObject({ result: "error", code: "NOT_FOUND" });
  });

  test("routes on Bun's router: decoded path parameters, a trailing slash, HEAD, other methods 404", async () => {
    const get = (path: string, method = "GET") => fetch(s.url + path, { method, headers: { authorization: auth() } });
    const hamlet = s.users.hamlet;
    // A path parameter arrives decoded (an email with its @ encoded).
    const byEmail = await get(`/api/v1/users/${encodeURIComponent(hamlet.email)}`);
    expect(((await byEmail.json()) as any).user.user_id).toBe(hamlet.id);
    // With a trailing slash, with and without path parameters, as before.
    expect(((await (await get(`/api/v1/users/${hamlet.id}/`)).json()) as any).user.user_id).toBe(hamlet.id);
    expect(((await (await get("/api/v1/users/me/")).json()) as any).user_id).toBe(s.users.iago.id);
    expect((await get("/api/v1/users/me/", "HEAD")).status).toBe(200);
    // A method the path does not have, and a slash-ended unknown path, are JSON 404s.
    for (const [path, method] of [["/api/v1/users/me", "PUT"], ["/api/v1/users/me/", "PUT"], ["/api/v1/no/such/", "GET"], ["/", "DELETE"]]) {
      const res = await get(path, method);
      expect(res.status).toBe(404);
      expect(((await res.json()) as any).code).toBe("NOT_FOUND");
    }
    // The same routes under /json/ want the browser's session, not Basic credentials.
    expect((await get("/json/users/me")).status).toBe(401);
    expect((await get(`/json/users/${hamlet.id}/`)).status).toBe(401);
  });

  test("unknown parameters are listed in ignored_parameters_unsupported, never an error", async () => {
    const body = expectSuccess(await s.as("hamlet").get("/users", { client_gravatar: true, frobnicate: 1, widget_content: null }));
    expect(body.ignored_parameters_unsupported.sort()).toEqual(["frobnicate", "widget_content"]);
  });

  test("PATCH parameters in the query string (zulip-js) and in the body are both read", async () => {
    const u = await s.createUser("patchy");
    expectSuccess(await s.as("iago").patch(`/users/${u.id}`, { full_name: "Via Query" }, { query: true }));
    expect(expectSuccess(await s.as("iago").get(`/users/${u.id}`)).user.full_name).toBe("Via Query");
    expectSuccess(await s.as("iago").patch(`/users/${u.id}`, { full_name: "Via Multipart" }, { multipart: true }));
    expect(expectSuccess(await s.as("iago").get(`/users/${u.id}`)).user.full_name).toBe("Via Multipart");
  });

  test("a JSON null counts as absent", async () => {
    const body = expectSuccess(await s.as("hamlet").get("/users", { include_custom_profile_fields: "null" }));
    // include_custom_profile_fields defaults to false: no profile_data.
    expect("profile_data" in body.members.find((m: any) => m.user_id === s.users.hamlet.id)).toBe(false);
    expect(body.ignored_parameters_unsupported).toBeUndefined();
  });

  test("malformed JSON in a JSON field → 400 BAD_REQUEST", async () => {
    expectError(await s.as("hamlet").get("/users", { client_gravatar: "[1," }), 400, "BAD_REQUEST", 'Argument "client_gravatar" is not valid JSON.');
  });

  test("a wrongly typed value → 400 with Zulip's wording", async () => {
    expectError(await s.as("hamlet").get("/users", { client_gravatar: 5 }), 400, "BAD_REQUEST", "client_gravatar is not a boolean");
    expectError(await s.as("iago").patch(`/users/${s.users.hamlet.id}`, { role: "\"x\"" }), 400, "BAD_REQUEST", "role is not an integer");
    // An integer to JSON, but not one any client can read back.
    expectError(await s.as("hamlet").post("/scheduled_messages", { type: "stream", to: 1, topic: "t", content: "x", scheduled_delivery_timestamp: "1e300" }), 400, "BAD_REQUEST");
  });

  test("non-UTF-8 bytes → 400, not a crash", async () => {
    const bad = new Uint8Array([...new TextEncoder().encode("full_name="), 0xff, 0xfe, 0x41]);
    const res = await fetch(`${s.url}/api/v1/users/${s.users.hamlet.id}`, {
      method: "PATCH",
      headers: { authorization: auth(), "content-type": "application/x-www-form-urlencoded" },
      body: bad,
    });
    expect(res.status).toBe(400);
    expect((await res.json()).code).toBe("BAD_REQUEST");
    const pct = await fetch(`${s.url}/api/v1/users/${s.users.hamlet.id}?full_name=%FF%FE`, { method: "PATCH", headers: { authorization: auth() } });
    expect(pct.status).toBe(400);
  });

  test("a 10 MB form field gets a clear error, and the server keeps serving", async () => {
    const res = await s.as("iago").patch(`/users/${s.users.hamlet.id}`, { full_name: "x".repeat(10 * 1024 * 1024) });
    expectError(res, 400, "BAD_REQUEST", "Name too long!");
    expectSuccess(await s.as("hamlet").get("/users/me"));
  });

  test("without credentials a body is read only up to 1 MiB: declared or chunked, 413; with them, larger forms are read", async () => {
    /** A body sent chunked (no Content-Length): the server cannot refuse it from its headers. */
    const chunked = (text: string) =>
      new ReadableStream({
        start(controller) {
          for (let at = 0; at < text.length; at += 64 * 1024) controller.enqueue(new TextEncoder().encode(text.slice(at, at + 64 * 1024)));
          controller.close();
        },
      });
    const big = `username=${encodeURIComponent(s.users.hamlet.email)}&password=${"x".repeat(2 * 1024 * 1024)}`;
    const form = { "content-type": "application/x-www-form-urlencoded" };
    for (const body of [big, chunked(big)]) {
      const res = await fetch(`${s.url}/api/v1/fetch_api_key`, { method: "POST", headers: form, body });
      expect(res.status).toBe(413);
      expect(await res.json()).toEqual({ result: "error", msg: "Request body too large", code: "BAD_REQUEST" });
    }
    const multipart = new FormData();
    multipart.set("username", s.users.hamlet.email);
    multipart.set("password", "x".repeat(2 * 1024 * 1024));
    expect((await fetch(`${s.url}/api/v1/fetch_api_key`, { method: "POST", body: multipart })).status).toBe(413);
    // A small form without credentials is read as always (a wrong password: 401, not 413).
    expectError(await s.anonymous().post("/fetch_api_key", { username: s.users.hamlet.email, password: "wrong" }), 401, "AUTHENTICATION_FAILED");
    // A body of another type carries no form parameters: left unread, whatever its size.
    const json = await fetch(`${s.url}/api/v1/fetch_api_key`, { method: "POST", headers: { "content-type": "application/json" }, body: chunked(JSON.stringify({ pad: "z".repeat(2 * 1024 * 1024) })) });
    expectError({ status: json.status, body: await json.json(), headers: json.headers }, 400, "REQUEST_VARIABLE_MISSING", "Missing 'username' argument");
    // Signed in, a 2 MiB form is read and judged on its values.
    const res = await fetch(`${s.url}/api/v1/users/${s.users.hamlet.id}`, { method: "PATCH", headers: { ...form, authorization: auth() }, body: chunked(`full_name=${"y".repeat(2 * 1024 * 1024)}`) });
    expectError({ status: res.status, body: await res.json(), headers: res.headers }, 400, "BAD_REQUEST", "Name too long!");
  });

  test("malformed multipart body → 400", async () => {
    const res = await fetch(`${s.url}/api/v1/users`, {
      method: "POST",
      headers: { authorization: auth(), "content-type": "multipart/form-data; boundary=zzz" },
      body: "--zzz\r\nnonsense",
    });
    expect(res.status).toBe(400);
    expect((await res.json()).result).toBe("error");
  });

  test("multipart values that look like JSON stay text", async () => {
    const u = await s.createUser("jsonish");
    expectSuccess(await s.as("iago").patch(`/users/${u.id}`, { full_name: "[1,2]" }, { multipart: true }));
    expect(expectSuccess(await s.as("iago").get(`/users/${u.id}`)).user.full_name).toBe("[1,2]");
  });
});
