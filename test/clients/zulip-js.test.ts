/** The real zulip-js client (npm), run under Node as its users do, against a real server. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expectSchema, PASSWORD, startTestServer, type TestServer } from "../kit";
import { GetOwnUserResponse, GetUsersResponse } from "../../src/schemas/users";
import { runZulipJs } from "./zulip-js";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

describe("zulip-js", () => {
  test("users.me.getProfile() and users.retrieve() with an API key", async () => {
    const { results } = await runZulipJs({ realm: s.url, username: s.users.hamlet.email, apiKey: s.users.hamlet.apiKey }, [
      { fn: "users.me.getProfile" },
      { fn: "users.retrieve" },
    ]);
    const [me, users] = results;
    expectSchema(GetOwnUserResponse, me);
    expect(me.user_id).toBe(s.users.hamlet.id);
    expectSchema(GetUsersResponse, users);
    expect(users.members.length).toBeGreaterThanOrEqual(7);
  });

  test("logging in with a password (multipart POST /fetch_api_key)", async () => {
    const { apiKey, results } = await runZulipJs({ realm: s.url, username: s.users.hamlet.email, password: PASSWORD }, [
      { fn: "users.me.getProfile" },
    ]);
    expect(apiKey).toBe(s.users.hamlet.apiKey);
    expect(results[0].email).toBe(s.users.hamlet.email);
  });

  test("a zuliprc file, and the server settings", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-zuliprc-"));
    const rc = join(dir, "zuliprc");
    writeFileSync(rc, `[api]\nemail=${s.users.iago.email}\nkey=${s.users.iago.apiKey}\nsite=${s.url}\n`);
    const { results } = await runZulipJs({ zuliprc: rc }, [{ fn: "server.settings" }, { fn: "users.me.getProfile" }]);
    expect(results[0]).toMatchObject({ result: "success", realm_uri: s.url });
    expect(results[1].user_id).toBe(s.users.iago.id);
  });

  test("a multipart POST from zulip-js (create a user as an administrator)", async () => {
    const { results } = await runZulipJs({ realm: s.url, username: s.users.iago.email, apiKey: s.users.iago.apiKey }, [
      { fn: "callEndpoint", args: ["/users", "POST", { email: "jsuser@zulip.test", password: "js-password", full_name: "JS User" }] },
    ]);
    expect(results[0]).toMatchObject({ result: "success" });
    expect(typeof results[0].user_id).toBe("number");
  });

  test("a wrong key gives Zulip's error body", async () => {
    const { results } = await runZulipJs({ realm: s.url, username: s.users.hamlet.email, apiKey: "x".repeat(32) }, [{ fn: "users.me.getProfile" }]);
    expect(results[0]).toMatchObject({ result: "error", code: "INVALID_API_KEY" });
  });
});
