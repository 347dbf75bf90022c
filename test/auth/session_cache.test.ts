import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { PASSWORD, expectError, expectSuccess, startTestServer, type TestServer } from "../kit";
import { CookieSession } from "./session_kit";
import { userSessions } from "../../src/store/sessions";
import { auth } from "../kit/process";

/**
 * A session is read from the store's cache of sessions (src/store/sessions.ts) and
 * found by a remembered hash of its cookie (src/auth/session.ts). Each test warms both
 * with requests, makes one kind of session write through the API, and checks that the
 * very next request sees it: every writer of sessions (putSession, removeSession,
 * removeUserSessions, removeAllSessions) is followed.
 */
setDefaultTimeout(30_000);

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

async function member(name: string, password = "first password here"): Promise<{ id: number; email: string; password: string }> {
  const email = `${name}@zulip.test`;
  const created = expectSuccess(await s.as("desdemona").post("/users", { email, password, full_name: name }));
  return { id: created.user_id, email, password };
}

/** Signed in, with the session read (and cached) by a few requests. */
async function warmBrowser(t: TestServer, email: string, password: string): Promise<CookieSession> {
  const browser = new CookieSession(t.url);
  await browser.loginOk(email, password);
  for (let i = 0; i < 3; i++) expectSuccess(await browser.json("GET", "/users/me"));
  return browser;
}

describe("cached sessions follow every session write", () => {
  test("logout (removeSession)", async () => {
    const m = await member("cache-logout");
    const browser = await warmBrowser(s, m.email, m.password);
    const saved = browser.cookieHeader();
    const res = await browser.fetch("/logout", { method: "POST", headers: { "x-csrftoken": browser.csrfToken! } });
    expect(res.status).toBe(303);
    const after = await fetch(`${s.url}/json/users/me`, { headers: { cookie: saved } });
    expect(after.status).toBe(401);
  });

  test("revoking one session by its ID from another (removeSession)", async () => {
    const m = await member("cache-revoke");
    const laptop = await warmBrowser(s, m.email, m.password);
    const phone = await warmBrowser(s, m.email, m.password);
    const sessions = expectSuccess(await laptop.json("GET", "/hearth/sessions")).sessions as { id: string; current: boolean }[];
    const phoneId = sessions.find((x) => !x.current)!.id;
    expectSuccess(await laptop.json("DELETE", `/hearth/sessions/${phoneId}`));
    expectError(await phone.json("GET", "/users/me"), 401, "UNAUTHORIZED");
    expectSuccess(await laptop.json("GET", "/users/me"));
  });

  test("a password change (removeUserSessions)", async () => {
    const m = await member("cache-password");
    const first = await warmBrowser(s, m.email, m.password);
    const second = await warmBrowser(s, m.email, m.password);
    expectSuccess(await first.json("PATCH", "/settings", { old_password: m.password, new_password: "second password here" }));
    expectError(await first.json("GET", "/users/me"), 401, "UNAUTHORIZED");
    expectError(await second.json("GET", "/users/me"), 401, "UNAUTHORIZED");
  });

  test("deactivating the user (removeUserSessions)", async () => {
    const m = await member("cache-deactivate");
    const browser = await warmBrowser(s, m.email, m.password);
    expectSuccess(await s.as("desdemona").delete(`/users/${m.id}`));
    expectError(await browser.json("GET", "/users/me"), 401, "UNAUTHORIZED");
    expectSuccess(await s.as("desdemona").post(`/users/${m.id}/reactivate`));
    expectError(await browser.json("GET", "/users/me"), 401, "UNAUTHORIZED");
  });

  test("a new sign-in (putSession) leaves the cached one working, and both are found", async () => {
    const m = await member("cache-second");
    const first = await warmBrowser(s, m.email, m.password);
    const second = await warmBrowser(s, m.email, m.password);
    expectSuccess(await first.json("GET", "/users/me"));
    expectSuccess(await second.json("GET", "/users/me"));
    expect(userSessions(s.server.h.store, m.id).length).toBe(2);
  });

  test("deactivating the organization (removeAllSessions)", async () => {
    const t = await startTestServer();
    try {
      const browser = await warmBrowser(t, t.users.hamlet.email, PASSWORD);
      expectSuccess(await t.as("desdemona").post("/realm/deactivate"));
      expectError(await browser.json("GET", "/users/me"), 401, "UNAUTHORIZED");
    } finally {
      await t.stop();
    }
  });
});

describe("cached sessions and last_seen", () => {
  let short: TestServer;
  beforeAll(async () => {
    short = await startTestServer({ env: { HEARTH_SESSION_IDLE: "1s" } });
  });
  afterAll(() => short.stop());

  test("a recorded use (putSession) is what the next request reads, and idle expiry still refuses", async () => {
    const browser = await warmBrowser(short, short.users.hamlet.email, PASSWORD);
    const stored = () => userSessions(short.server.h.store, short.users.hamlet.id)[0];
    const before = stored().last_seen;
    // Past a tenth of the idle time, a request records the use in the background.
    await Bun.sleep(200);
    expectSuccess(await browser.json("GET", "/users/me"));
    while (stored().last_seen === before) await Bun.sleep(10);
    // Kept alive by use past the idle time counted from sign-in: the cached session
    // must be the touched one, else this request would read the old last_seen.
    for (let i = 0; i < 8; i++) {
      const seen = stored().last_seen;
      await Bun.sleep(200);
      expectSuccess(await browser.json("GET", "/users/me"));
      while (stored().last_seen === seen) await Bun.sleep(10);
    }
    await Bun.sleep(1_100);
    expectError(await browser.json("GET", "/users/me"), 401, "UNAUTHORIZED");
  });
});

describe("GET /json/events, the web app's poll", () => {
  test("answers alike on the short path and the general one, with the session alone", async () => {
    const browser = await warmBrowser(s, s.users.hamlet.email, PASSWORD);
    const { queue_id } = expectSuccess(await browser.json("POST", "/register", { event_types: ["realm_user"] }));
    expectSuccess(await s.as("iago").patch(`/users/${s.users.othello.id}`, { full_name: "Othello (web poll)" }));
    const poll = async (query: string, headers: Record<string, string> = {}, withCookie = true) => {
      const res = withCookie ? await browser.fetch(`/json/events?${query}`, { headers }) : await fetch(`${s.url}/json/events?${query}`, { headers });
      return { status: res.status, challenge: res.headers.get("www-authenticate"), body: await res.json() };
    };
    // The short path: queue_id, last_event_id and dont_block, unencoded.
    const plain = await poll(`queue_id=${queue_id}&last_event_id=-1&dont_block=true`);
    expect(plain.status).toBe(200);
    expect(plain.body.events.map((e: any) => e.person.full_name)).toEqual(["Othello (web poll)"]);
    // The general path: an encoded value, another order.
    expect(await poll(`queue_id=${queue_id}&last_event_id=%2D1&dont_block=true`)).toEqual(plain);
    expect(await poll(`dont_block=true&last_event_id=-1&queue_id=${queue_id}`)).toEqual(plain);
    // Without the cookie: 401 with the Session challenge on both paths, a valid Basic header notwithstanding.
    const basic = auth(s.users.hamlet.email, s.users.hamlet.apiKey);
    const refused = await poll(`queue_id=${queue_id}&last_event_id=-1&dont_block=true`, basic, false);
    expect(refused.status).toBe(401);
    expect(refused.challenge).toBe('Session realm="zulip"');
    expect(await poll(`queue_id=${queue_id}&last_event_id=%2D1&dont_block=true`, basic, false)).toEqual(refused);
    // A parked poll is answered by the next event.
    const parked = poll(`queue_id=${queue_id}&last_event_id=${plain.body.events[0].id}`);
    await Bun.sleep(50);
    expectSuccess(await s.as("iago").patch(`/users/${s.users.othello.id}`, { full_name: "Othello (parked)" }));
    const answered = await parked;
    expect(answered.status).toBe(200);
    expect(answered.body.events.map((e: any) => e.person.full_name)).toEqual(["Othello (parked)"]);
  });
});
