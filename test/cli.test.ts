/** The command-line contract, run as a user would: `bun src/main.ts …` subprocesses. */
import { describe, expect, test } from "bun:test";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";

import { auth, freePort, hearth, startServe, tempDir } from "./kit/process";

/**
 * A new organization's starting point, as the Zulip server sets one up: three public
 * default channels with the owner in them, #general for new-channel announcements, and
 * a message from Welcome Bot in each, unread.
 */
async function expectStarterContent(url: string, email: string, key: string) {
  const get = async (path: string) => (await fetch(`${url}/api/v1${path}`, { headers: auth(email, key) })).json();
  const subscriptions = (await get("/users/me/subscriptions")).subscriptions.map((sub: any) => [sub.name, sub.description, sub.invite_only]);
  expect(subscriptions.sort()).toEqual([
    ["Zulip", "Questions and discussion about using the Zulip apps with this server", false],
    ["general", "For team-wide conversations", false],
    ["sandbox", "Experiment here :test_tube:", false],
  ]);
  const ids = Object.fromEntries((await get("/streams")).streams.map((c: any) => [c.name, c.stream_id]));
  const state = await (await fetch(`${url}/api/v1/register`, { method: "POST", headers: auth(email, key), body: new URLSearchParams({ fetch_event_types: '["realm","default_streams"]' }) })).json();
  expect(state.realm_new_stream_announcements_stream_id).toBe(ids.general);
  expect([...state.realm_default_streams].sort()).toEqual([ids.general, ids.sandbox, ids.Zulip].sort());
  const messages = (await get(`/messages?anchor=newest&num_before=10&num_after=0&narrow=[]`)).messages;
  expect(messages.map((m: any) => [m.sender_full_name, m.display_recipient, m.subject, m.flags])).toEqual([
    ["Welcome Bot", "general", "greetings", []],
    ["Welcome Bot", "sandbox", "experiments", []],
    ["Welcome Bot", "Zulip", "getting started", []],
  ]);
}

describe("hearth CLI", () => {
  test("--help, --version, unknown commands and flags", async () => {
    const help = await hearth(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("hearth serve");
    const version = await hearth(["--version"]);
    expect(version.code).toBe(0);
    expect(version.stdout).toMatch(/^hearth \d+\.\d+\.\d+/);
    const bogus = await hearth(["bogus"]);
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toContain("unknown command 'bogus'");
    const badFlag = await hearth(["init", "--data", tempDir(), "--frobnicate"]);
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toContain("unknown option '--frobnicate'");
    const missing = await hearth(["init", "--data", tempDir()]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("missing required option '--realm-name'");
  });

  test("init --json, create-user --json, then serve with those credentials", async () => {
    const data = tempDir();
    const init = await hearth(["init", "--data", data, "--realm-name", "Acme", "--owner-email", "boss@acme.test", "--owner-password", "hunter22", "--external-url", "https://chat.acme.test/", "--json"]);
    expect(init.code).toBe(0);
    const owner = JSON.parse(init.stdout);
    expect(owner).toEqual({ email: "boss@acme.test", api_key: expect.stringMatching(/^[A-Za-z0-9]{32}$/), user_id: expect.any(Number), realm_url: "https://chat.acme.test" });
    expect(statSync(join(data, "db")).mode & 0o077).toBe(0);
    expect(statSync(join(data, "db", "data.mdb")).mode & 0o077).toBe(0);

    const again = await hearth(["init", "--data", data, "--realm-name", "Acme", "--owner-email", "b@acme.test", "--owner-password", "hunter22"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already holds an organization");

    const created = await hearth(["create-user", "--data", data, "--email", "mod@acme.test", "--full-name", "Mod", "--password", "modpass1", "--role", "300", "--json"]);
    expect(created.code).toBe(0);
    const mod = JSON.parse(created.stdout);
    expect(mod).toMatchObject({ email: "mod@acme.test", realm_url: "https://chat.acme.test" });
    const bot = JSON.parse((await hearth(["create-user", "--data", data, "--email", "bot@acme.test", "--full-name", "Bot", "--password", "x", "--bot", "--json"])).stdout);
    const badRole = await hearth(["create-user", "--data", data, "--email", "x@acme.test", "--full-name", "X", "--password", "p", "--role", "250"]);
    expect(badRole.code).toBe(2);

    const port = freePort();
    const { proc, url } = await startServe(["--data", data, "--port", String(port)]);
    try {
      expect(url).toBe(`http://127.0.0.1:${port}`);
      const settings = await (await fetch(`${url}/api/v1/server_settings`)).json();
      expect(settings.realm_uri).toBe("https://chat.acme.test");
      expect(settings.realm_name).toBe("Acme");
      const me = await (await fetch(`${url}/api/v1/users/me`, { headers: auth(mod.email, mod.api_key) })).json();
      expect(me).toMatchObject({ result: "success", role: 300, user_id: mod.user_id });
      const botMe = await (await fetch(`${url}/api/v1/users/me`, { headers: auth(bot.email, bot.api_key) })).json();
      expect(botMe).toMatchObject({ is_bot: true, bot_type: 1 });
      await expectStarterContent(url, owner.email, owner.api_key);
      // Users created later join the default channels.
      const modSubscriptions = await (await fetch(`${url}/api/v1/users/me/subscriptions`, { headers: auth(mod.email, mod.api_key) })).json();
      expect(modSubscriptions.subscriptions.map((sub: any) => sub.name).sort()).toEqual(["Zulip", "general", "sandbox"]);

      // While the server runs, the folder is locked for other commands and servers.
      const busy = await hearth(["create-user", "--data", data, "--email", "z@acme.test", "--full-name", "Z", "--password", "zzzzzz"]);
      expect(busy.code).toBe(1);
      expect(busy.stderr).toContain("in use by another Hearth process");
    } finally {
      proc.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
    }
    expect(existsSync(join(data, "hearth.pid"))).toBe(false);
  });

  test("serve on an empty folder creates the organization and prints the owner's credentials once", async () => {
    const data = join(tempDir(), "fresh");
    const port = freePort();
    const { proc, url, output } = await startServe([], { HEARTH_DATA: data, HEARTH_PORT: String(port), HEARTH_HOST: "127.0.0.1" });
    try {
      const email = /email:\s+(\S+)/.exec(output)![1];
      const password = /password:\s+(\S+)/.exec(output)![1];
      const key = /API key:\s+(\S+)/.exec(output)![1];
      const me = await (await fetch(`${url}/api/v1/users/me`, { headers: auth(email, key) })).json();
      expect(me).toMatchObject({ result: "success", role: 100 });
      const login = await (await fetch(`${url}/api/v1/fetch_api_key`, { method: "POST", body: new URLSearchParams({ username: email, password }) })).json();
      expect(login.api_key).toBe(key);
      await expectStarterContent(url, email, key);
    } finally {
      proc.kill("SIGINT");
      expect(await proc.exited).toBe(0);
    }
    const second = await startServe(["--data", data, "--port", String(freePort())]);
    try {
      expect(second.output).not.toContain("password:");
    } finally {
      second.proc.kill("SIGTERM");
      await second.proc.exited;
    }
  });

  test("a port in use and a bad port fail clearly", async () => {
    const blocker = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
    try {
      const data = tempDir();
      const res = await hearth(["serve", "--data", data, "--port", String(blocker.port)]);
      expect(res.code).toBe(1);
      expect(res.stderr).toContain("already in use");
      const bad = await hearth(["serve", "--data", data, "--port", "99999"]);
      expect(bad.code).toBe(2);
    } finally {
      blocker.stop(true);
    }
  });

  test("reactivate-realm", async () => {
    const data = tempDir();
    await hearth(["init", "--data", data, "--realm-name", "R", "--owner-email", "o@r.test", "--owner-password", "secret1"]);
    const { Store } = await import("../src/store/db");
    const { getRealm, putRealm } = await import("../src/store/realm");
    const store = new Store(data);
    await store.commit(() => putRealm(store, { ...getRealm(store)!, deactivated: true }));
    await store.close();
    const res = await hearth(["reactivate-realm", "--data", data]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain("active again");
    const store2 = new Store(data);
    expect(getRealm(store2)!.deactivated).toBe(false);
    await store2.close();
  });
});
