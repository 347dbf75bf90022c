import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { PASSWORD, expectError, expectSuccess, readResponse, startTestServer, type TestServer } from "../kit";
import { CookieSession } from "./session_kit";
import { userSessions } from "../../src/store/sessions";
import { Upload } from "tus-js-client";
import { hearth, tempDir } from "../kit/process";

// Every sign-in hashes a password (argon2, deliberately slow): on a busy machine a test takes seconds.
setDefaultTimeout(30_000);

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

/** A member with a password of their own, so changing it leaves the shared cast alone. */
async function memberWithPassword(name: string, password = "first password here"): Promise<{ id: number; email: string; password: string }> {
  const email = `${name}@zulip.test`;
  const created = expectSuccess(await s.as("desdemona").post("/users", { email, password, full_name: name }));
  return { id: created.user_id, email, password };
}

async function signIn(email: string, password: string, userAgent = "test-browser/1.0"): Promise<CookieSession> {
  const browser = new CookieSession(s.url);
  const res = await browser.login(email, password, "/", { "user-agent": userAgent });
  expect(res.status).toBe(303);
  return browser;
}

describe("GET/DELETE /hearth/sessions", () => {
  test("lists the caller's own sessions, marks the current one, and revokes one by its public ID", async () => {
    const member = await memberWithPassword("lister");
    const laptop = await signIn(member.email, member.password, "Laptop/1.0");
    const phone = await signIn(member.email, member.password, "Phone/2.0");
    const hamlet = await signIn(s.users.hamlet.email, PASSWORD);
    const listed = expectSuccess(await laptop.json("GET", "/hearth/sessions")).sessions as any[];
    expect(listed.map((x) => [x.user_agent, x.current]).sort()).toEqual([
      ["Laptop/1.0", true],
      ["Phone/2.0", false],
    ]);
    for (const x of listed) {
      expect(Object.keys(x).sort()).toEqual(["created", "current", "id", "ip", "last_seen", "user_agent"]);
      expect(x.ip).toBe("127.0.0.1");
      expect(Number.isInteger(x.created)).toBe(true);
      // The public ID is not the cookie's secret.
      expect(laptop.cookieHeader()).not.toContain(x.id);
    }
    // Through the API key: the same list, none current.
    const viaApi = expectSuccess(await s.as({ id: member.id, email: member.email, apiKey: await apiKeyOf(member), name: "lister" }).get("/hearth/sessions")).sessions as any[];
    expect(viaApi.map((x) => x.current)).toEqual([false, false]);
    // Someone else's session is not found among the caller's.
    const hamletsId = (expectSuccess(await hamlet.json("GET", "/hearth/sessions")).sessions as any[]).find((x) => x.current).id;
    expectError(await laptop.json("DELETE", `/hearth/sessions/${hamletsId}`), 400, "BAD_REQUEST", "Invalid session ID");
    expectSuccess(await hamlet.json("GET", "/users/me"));
    expectError(await laptop.json("DELETE", "/hearth/sessions/no-such-id"), 400, "BAD_REQUEST");
    // Revoking needs the CSRF token like any write.
    const phoneId = listed.find((x) => !x.current).id;
    expectError(await laptop.json("DELETE", `/hearth/sessions/${phoneId}`, {}, false), 403, "CSRF_FAILED");
    expectSuccess(await laptop.json("DELETE", `/hearth/sessions/${phoneId}`));
    expectError(await phone.json("GET", "/users/me"), 401, "UNAUTHORIZED");
    expectSuccess(await laptop.json("GET", "/users/me"));
    expect((expectSuccess(await laptop.json("GET", "/hearth/sessions")).sessions as any[]).length).toBe(1);
  });
});

async function apiKeyOf(member: { email: string; password: string }): Promise<string> {
  return expectSuccess(await s.anonymous().post("/fetch_api_key", { username: member.email, password: member.password })).api_key;
}

describe("revocation", () => {
  test("a password change signs every browser out; the API key keeps working", async () => {
    const member = await memberWithPassword("changer");
    const key = await apiKeyOf(member);
    const first = await signIn(member.email, member.password);
    const second = await signIn(member.email, member.password);
    expectSuccess(await first.json("PATCH", "/settings", { old_password: member.password, new_password: "second password here" }));
    expectError(await first.json("GET", "/users/me"), 401, "UNAUTHORIZED");
    expectError(await second.json("GET", "/users/me"), 401, "UNAUTHORIZED");
    expect(userSessions(s.server.h.store, member.id)).toEqual([]);
    expectSuccess(await s.as({ id: member.id, email: member.email, apiKey: key, name: "changer" }).get("/users/me"));
    // The new password signs in again; the old one does not.
    expect((await new CookieSession(s.url).login(member.email, member.password)).status).toBe(401);
    const again = await signIn(member.email, "second password here");
    expectSuccess(await again.json("GET", "/users/me"));
  });

  test("other settings changes and a new API key leave sessions alone", async () => {
    const member = await memberWithPassword("keeper");
    const browser = await signIn(member.email, member.password);
    expectSuccess(await browser.json("PATCH", "/settings", { full_name: "Keeper Renamed" }));
    expectSuccess(await browser.json("POST", "/users/me/api_key/regenerate"));
    expectSuccess(await browser.json("GET", "/users/me"));
  });

  test("deactivating a user revokes their sessions; reactivating does not bring them back", async () => {
    const member = await memberWithPassword("leaver");
    const browser = await signIn(member.email, member.password);
    expectSuccess(await s.as("desdemona").delete(`/users/${member.id}`));
    expectError(await browser.json("GET", "/users/me"), 401, "UNAUTHORIZED");
    expect(userSessions(s.server.h.store, member.id)).toEqual([]);
    expectSuccess(await s.as("desdemona").post(`/users/${member.id}/reactivate`));
    expectError(await browser.json("GET", "/users/me"), 401, "UNAUTHORIZED");
  });

  test("deactivating oneself through /json/ signs that browser out", async () => {
    const member = await memberWithPassword("quitter");
    const browser = await signIn(member.email, member.password);
    expectSuccess(await browser.json("DELETE", "/users/me"));
    expectError(await browser.json("GET", "/users/me"), 401, "UNAUTHORIZED");
  });
});

describe("tus and files with the session cookie", () => {
  test("a browser uploads through tus with X-CSRFToken, then loads the file with its cookie", async () => {
    const browser = await signIn(s.users.hamlet.email, PASSWORD);
    const bytes = new TextEncoder().encode("hello from a browser session");
    const create = (csrf: boolean) =>
      browser.fetch("/api/v1/tus", {
        method: "POST",
        headers: {
          "tus-resumable": "1.0.0",
          "upload-length": String(bytes.length),
          "upload-metadata": `filename ${Buffer.from("note.txt").toString("base64")},filetype ${Buffer.from("text/plain").toString("base64")}`,
          ...(csrf ? { "x-csrftoken": browser.csrfToken! } : {}),
        },
      });
    const refused = await create(false);
    expect(refused.status).toBe(403);
    expect((await readResponse(refused)).body.code).toBe("CSRF_FAILED");
    const created = await create(true);
    expect(created.status).toBe(201);
    const location = created.headers.get("location")!;
    // Reading the offset is a HEAD: no token needed.
    const head = await browser.fetch(location, { method: "HEAD", headers: { "tus-resumable": "1.0.0" } });
    expect(head.headers.get("upload-offset")).toBe("0");
    const patch = (csrf: boolean) =>
      browser.fetch(location, {
        method: "PATCH",
        body: bytes,
        headers: { "tus-resumable": "1.0.0", "upload-offset": "0", "content-type": "application/offset+octet-stream", ...(csrf ? { "x-csrftoken": browser.csrfToken! } : {}) },
      });
    expect((await patch(false)).status).toBe(403);
    const done = await readResponse(await patch(true));
    expect(done.status).toBe(200);
    const url = done.body.url as string;
    expect(url).toStartWith("/user_uploads/");
    const file = await browser.fetch(url);
    expect(file.status).toBe(200);
    expect(await file.text()).toBe("hello from a browser session");
    // Without the cookie the file is not served; /json/ gives the temporary URL too.
    expect((await fetch(s.url + url)).status).toBe(401);
    const temporary = expectSuccess(await browser.json("GET", url));
    expect(temporary.url).toContain("/user_uploads/temporary/");
    // Without credentials at all, tus is refused.
    const anonymous = await fetch(`${s.url}/api/v1/tus`, { method: "POST", headers: { "tus-resumable": "1.0.0", "upload-length": "1" } });
    expect(anonymous.status).toBe(401);
  });
});

/** tus-js-client as the web client runs it: the cookie travels with the request, the token in a custom header. */
function tusJsUpload(browser: CookieSession, data: Buffer, csrf: boolean): Promise<any> {
  return new Promise((resolve, reject) => {
    const upload = new Upload(data, {
      endpoint: `${browser.baseUrl}/api/v1/tus/`,
      headers: { cookie: browser.cookieHeader(), ...(csrf ? { "X-CSRFToken": browser.csrfToken! } : {}) },
      chunkSize: 64 * 1024,
      retryDelays: null,
      metadata: { filename: "chunks.bin", filetype: "application/octet-stream" },
      onSuccess: ({ lastResponse }) => resolve(JSON.parse(lastResponse.getBody())),
      onError: reject,
    });
    upload.start();
  });
}

describe("tus-js-client with the session", () => {
  test("uploads in chunks with X-CSRFToken; without it the upload is refused", async () => {
    const browser = await signIn(s.users.hamlet.email, PASSWORD);
    const data = Buffer.alloc(200_000, 7);
    const body = await tusJsUpload(browser, data, true);
    expect(body.filename).toBe("chunks.bin");
    const file = await browser.fetch(body.url);
    expect(Buffer.from(await file.arrayBuffer()).equals(data)).toBe(true);
    const refused = await tusJsUpload(browser, data, false).then(
      () => null,
      (e: any) => e,
    );
    expect(refused?.originalResponse?.getStatus()).toBe(403);
  });
});

describe("idle expiry", () => {
  let short: TestServer;
  beforeAll(async () => {
    short = await startTestServer({ env: { HEARTH_SESSION_IDLE: "1s" } });
  });
  afterAll(() => short.stop());

  test("a session unused for longer than --session-idle is refused and removed; use moves last_seen", async () => {
    const browser = new CookieSession(short.url);
    expect((await browser.login(short.users.hamlet.email, PASSWORD)).status).toBe(303);
    const stored = () => userSessions(short.server.h.store, short.users.hamlet.id);
    const created = stored()[0];
    // Another browser signs in and is never used again.
    expect((await new CookieSession(short.url).login(short.users.hamlet.email, PASSWORD)).status).toBe(303);
    // A request after a tenth of the idle time records the use (written in the background).
    await Bun.sleep(200);
    expectSuccess(await browser.json("GET", "/users/me"));
    const current = () => stored().find((x) => x.id === created.id)!;
    while (current().last_seen === created.last_seen) await Bun.sleep(10);
    expect(current().last_seen).toBeGreaterThan(created.last_seen);
    await Bun.sleep(1_100);
    expectError(await browser.json("GET", "/users/me"), 401, "UNAUTHORIZED");
    // The refused session is removed; the abandoned one goes at the user's next sign-in.
    while (stored().some((x) => x.id === created.id)) await Bun.sleep(10);
    expect(stored().length).toBe(1);
    const fresh = new CookieSession(short.url);
    expect((await fresh.login(short.users.hamlet.email, PASSWORD)).status).toBe(303);
    expect(stored().length).toBe(1);
    expectSuccess(await fresh.json("GET", "/users/me"));
  });
});

describe("realm deactivation", () => {
  test("signs every browser out", async () => {
    const t = await startTestServer();
    try {
      const browser = new CookieSession(t.url);
      expect((await browser.login(t.users.hamlet.email, PASSWORD)).status).toBe(303);
      expectSuccess(await browser.json("GET", "/users/me"));
      expectSuccess(await t.as("desdemona").post("/realm/deactivate"));
      expectError(await browser.json("GET", "/users/me"), 401, "UNAUTHORIZED");
      expect(userSessions(t.server.h.store, t.users.hamlet.id)).toEqual([]);
    } finally {
      await t.stop();
    }
  });
});

describe("serve --session-idle", () => {
  test("a malformed duration is a usage error", async () => {
    const res = await hearth(["serve", "--data", tempDir(), "--port", "0", "--session-idle", "soon"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("invalid --session-idle 'soon'");
  });
});
