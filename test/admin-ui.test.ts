/**
 * The administration page (admin-ui/), in headless Chromium against a real server:
 * an owner signs in at /login (the page sends the browser there and back) and the page
 * calls /json/ with the session cookie and the CSRF token; it changes organization settings, adds,
 * deactivates, reactivates and promotes users, creates an invitation link that a newcomer
 * opens and joins with, revokes it, and finally deactivates the organization; each
 * change is checked through the API as any client would see it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, PASSWORD, startTestServer, type TestServer } from "./kit";
import { launchChromium, until, type Browser, type Page } from "./kit/browser";
import { hearth, tempDir } from "./kit/process";
import { existsSync } from "node:fs";
import { userSessions } from "../src/store/sessions";
import { join } from "node:path";

let s: TestServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  s = await startTestServer();
  browser = await launchChromium();
  page = await browser.newPage();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

const status = () => page.evaluate<string>(`document.getElementById("status").textContent`);
const waitForStatus = (text: string) => page.waitFor(`document.getElementById("status").textContent === ${JSON.stringify(text)}`);
/** Like page.waitFor, across navigations. */
const settle = <T>(expression: string, timeoutMs = 10_000) => until<T>(page, expression, timeoutMs);
/** Fills and sends the /login form the browser was sent to. */
const logIn = async (email: string, password: string) => {
  await settle(`location.pathname === "/login" && document.querySelector('form[action="/login"]') !== null && document.readyState === "complete"`);
  await page.evaluate(`(() => {
    const form = document.querySelector('form[action="/login"]');
    form.elements.username.value = ${JSON.stringify(email)};
    form.elements.password.value = ${JSON.stringify(password)};
    form.requestSubmit();
  })()`);
};
const addUser = (fullName: string, email: string, password: string) =>
  page.evaluate(`(() => {
    const form = document.getElementById("add-user");
    form.elements.full_name.value = ${JSON.stringify(fullName)};
    form.elements.email.value = ${JSON.stringify(email)};
    form.elements.password.value = ${JSON.stringify(password)};
    form.requestSubmit();
  })()`);
const rowOf = (userId: number) => `document.querySelector('#users tr[data-user-id="${userId}"]')`;

describe("administration page", () => {
  test("/admin sends a browser without a session to /login and back; only owners and administrators get in", async () => {
    const redirect = await fetch(`${s.url}/admin`, { redirect: "manual" });
    expect(redirect.status).toBe(302);
    const headers = (await fetch(`${s.url}/static/admin.html`)).headers;
    expect(headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(headers.get("content-security-policy")).not.toContain("unsafe-inline");
    expect(headers.get("x-frame-options")).toBe("DENY");
    await page.goto(`${s.url}/admin`);
    await settle(`location.pathname === "/login"`);
    expect(await page.evaluate(`location.search`)).toBe("?next=/admin/");

    await logIn(s.users.hamlet.email, "wrong password");
    await settle(`document.querySelector(".error")?.textContent === "Your username or password is incorrect"`);
    await logIn(s.users.hamlet.email, PASSWORD);
    await settle(`location.pathname === "/static/admin.html" && document.getElementById("status").textContent === "This page is for organization owners and administrators."`);
    expect(await page.evaluate(`document.getElementById("admin").hidden`)).toBe(true);
    // A member signs out from here too.
    await page.evaluate(`document.getElementById("logout").click()`);

    await logIn(s.users.desdemona.email, PASSWORD);
    await settle(`location.pathname === "/static/admin.html" && !document.getElementById("admin").hidden && document.querySelectorAll("#users tr").length > 0`);
    await page.waitFor(`document.getElementById("settings").elements.name.value === "Zulip Dev"`);
    expect(await status()).toBe("");
    // No key in the page's storage; the chat is a link away.
    expect(await page.evaluate(`sessionStorage.length + localStorage.length`)).toBe(0);
    expect(await page.evaluate(`document.getElementById("chat-link").getAttribute("href")`)).toBe("/");
    expect(userSessions(s.server.h.store, s.users.hamlet.id)).toEqual([]);
  }, 30_000);

  test("organization settings are saved through PATCH /realm", async () => {
    await page.evaluate(`(() => {
      const form = document.getElementById("settings");
      form.elements.name.value = "Elsinore <Castle>";
      form.elements.description.value = "Something is rotten.";
      form.elements.mandatory_topics.checked = true;
      form.requestSubmit();
    })()`);
    await waitForStatus("Organization settings saved.");
    const settings = expectSuccess(await s.anonymous().get("/server_settings"));
    expect(settings.realm_name).toBe("Elsinore <Castle>");
    const state = expectSuccess(await s.as("hamlet").post("/register", { fetch_event_types: JSON.stringify(["realm"]) }));
    expect(state.realm_description).toBe("Something is rotten.");
    expect(state.realm_mandatory_topics).toBe(true);
    // What the page shows came back from the server.
    expect(await page.evaluate(`document.getElementById("settings").elements.mandatory_topics.checked`)).toBe(true);
  });

  test("owners see the backup schedule and download a backup that verifies", async () => {
    await page.waitFor(`!document.getElementById("backups-section").hidden && document.getElementById("backup-schedule").textContent !== ""`);
    expect(await page.evaluate(`document.getElementById("backup-schedule").textContent`)).toContain("No scheduled backups");
    const downloads = tempDir();
    await browser.saveDownloadsIn(downloads);
    await page.evaluate(`document.getElementById("download-backup").click()`);
    await page.waitFor(`/^Backup hearth-backup-\\d{8}-\\d{6}\\.tar\\.gz downloaded\\.$/.test(document.getElementById("status").textContent)`);
    const name = (await page.evaluate<string>(`document.getElementById("status").textContent`)).split(" ")[1];
    // The browser saved it where the user's downloads go.
    for (let i = 0; i < 200 && !existsSync(join(downloads, name)); i++) await Bun.sleep(25);
    const verified = await hearth(["verify-backup", join(downloads, name)]);
    expect(verified.stderr).toBe("");
    expect(verified.code).toBe(0);
  });

  test("users are deactivated, reactivated and given roles; names are shown as text", async () => {
    const hamlet = s.users.hamlet;
    await page.evaluate(`${rowOf(hamlet.id)}.querySelector("button.deactivate").click()`);
    await waitForStatus("King Hamlet deactivated.");
    expect(expectSuccess(await s.as("desdemona").get(`/users/${hamlet.id}`)).user.is_active).toBe(false);
    expect((await s.as("hamlet").get("/users/me")).status).toBe(401);
    await page.waitFor(`${rowOf(hamlet.id)}?.querySelector("button.reactivate")`);
    await page.evaluate(`${rowOf(hamlet.id)}.querySelector("button.reactivate").click()`);
    await waitForStatus("King Hamlet reactivated.");
    expect(expectSuccess(await s.as("hamlet").get("/users/me")).is_active).toBe(true);

    const othello = s.users.othello;
    await page.evaluate(`(() => {
      const select = ${rowOf(othello.id)}.querySelector("select");
      select.value = "300";
      select.dispatchEvent(new Event("change"));
    })()`);
    await waitForStatus("Othello, the Moor of Venice is now moderator.");
    expect(expectSuccess(await s.as("desdemona").get(`/users/${othello.id}`)).user.role).toBe(300);

    // Adding a user: they can then log in with the password given.
    await addUser("Horatio", "horatio@zulip.test", "friend-of-hamlet");
    await waitForStatus("Horatio added.");
    const key = await fetch(`${s.url}/api/v1/fetch_api_key`, { method: "POST", body: new URLSearchParams({ username: "horatio@zulip.test", password: "friend-of-hamlet" }) });
    expect(key.status).toBe(200);
    await page.waitFor(`[...document.querySelectorAll("#users tr")].some((row) => row.cells[0].textContent === "Horatio")`);
    // A refused addition says why and keeps the form.
    await addUser("Horatio again", "horatio@zulip.test", "whatever-1");
    await page.waitFor(`document.getElementById("status").className === "error"`);
    expect(await page.evaluate(`document.getElementById("add-user").elements.full_name.value`)).toBe("Horatio again");

    // Names cannot hold "<" or ">", but entities: as HTML this would read "Ophelia <b>".
    const trickyName = "Ophelia &lt;b&gt;";
    const tricky = { id: expectSuccess(await s.as("desdemona").post("/users", { email: "tricky@zulip.test", password: "pw-tricky-1", full_name: trickyName })).user_id };
    await page.goto(`${s.url}/admin`);
    await page.waitFor(rowOf(tricky.id));
    expect(await page.evaluate(`${rowOf(tricky.id)}.cells[0].textContent`)).toBe(trickyName);
  });

  test("default channels for new users are set and unset; a private channel cannot be one", async () => {
    const denmark = await s.createChannel("iago", "Denmark", ["hamlet"]);
    const vault = await s.createChannel("iago", "Vault", ["iago"], { invite_only: true });
    await page.goto(`${s.url}/admin`);
    const box = (id: number) => `document.querySelector('#channels tr[data-channel-id="${id}"] input')`;
    await page.waitFor(box(denmark));
    expect(await page.evaluate(`${box(vault)}.disabled`)).toBe(true);
    const defaults = async () => expectSuccess(await s.as("hamlet").post("/register", { fetch_event_types: JSON.stringify(["default_streams"]) })).realm_default_streams;
    expect(await defaults()).not.toContain(denmark);
    await page.evaluate(`${box(denmark)}.click()`);
    await waitForStatus("#Denmark is now a default channel.");
    expect(await defaults()).toContain(denmark);
    await page.waitFor(`${box(denmark)}?.checked === true`);
    await page.evaluate(`${box(denmark)}.click()`);
    await waitForStatus("#Denmark is no longer a default channel.");
    expect(await defaults()).not.toContain(denmark);
  });

  test("an invitation link is created, opened and used to join in the browser, then revoked", async () => {
    await page.goto(`${s.url}/admin`);
    await page.waitFor(`document.getElementById("invite-link").elements.invite_as.options.length > 0`);
    // An owner may invite to any role, the member role is preselected.
    expect(await page.evaluate(`[...document.getElementById("invite-link").elements.invite_as.options].map((o) => o.text)`)).toEqual(["Owner", "Administrator", "Moderator", "Member", "Guest"]);
    expect(await page.evaluate(`document.getElementById("invite-link").elements.invite_as.value`)).toBe("400");
    await page.evaluate(`(() => {
      const form = document.getElementById("invite-link");
      form.elements.invite_as.value = "600";
      form.elements.expires_in_minutes.value = "null";
      form.requestSubmit();
    })()`);
    await waitForStatus("Invitation link created.");
    await page.waitFor(`document.querySelector("#invites tr") !== null`);
    const link = await page.evaluate<string>(`document.querySelector("#invites tr input").value`);
    expect(await page.evaluate(`document.querySelector("#invites tr").cells[1].textContent`)).toBe("Guest");
    expect(await page.evaluate(`document.querySelector("#invites tr").cells[2].textContent`)).toBe("never");
    const listed = expectSuccess(await s.as("desdemona").get("/invites")).invites;
    expect(listed).toEqual([expect.objectContaining({ link_url: link, invited_as: 600, expiry_date: null })]);

    // Whoever gets the link opens it in their own browser and fills in the form; joining signs them in there.
    const newcomer = await browser.newPage({ ownCookies: true });
    await newcomer.goto(link);
    await newcomer.waitFor(`document.querySelector("form input[name=email]") !== null`);
    await newcomer.evaluate(`(() => {
      const form = document.querySelector("form");
      form.elements.email.value = "viola@zulip.test";
      form.elements.full_name.value = "Viola";
      form.elements.password.value = "twelfth-night";
      form.requestSubmit();
    })()`);
    await newcomer.waitFor(`document.querySelector("h1")?.textContent === "Welcome!"`);
    expect(Object.keys(await newcomer.cookies())).toContain("hearth_session");
    await newcomer.close();
    const key = expectSuccess(await s.anonymous().post("/fetch_api_key", { username: "viola@zulip.test", password: "twelfth-night" }));
    const viola = expectSuccess(await s.as("desdemona").get(`/users/${key.user_id}`)).user;
    expect(viola).toMatchObject({ full_name: "Viola", role: 600 });

    await page.goto(`${s.url}/admin`);
    await page.waitFor(`document.querySelector("#invites tr .revoke") !== null`);
    await page.evaluate(`document.querySelector("#invites tr .revoke").click()`);
    await waitForStatus("Invitation link revoked.");
    await page.waitFor(`document.querySelector("#invites tr") === null`);
    expect(expectSuccess(await s.as("desdemona").get("/invites")).invites).toEqual([]);
    expect((await fetch(link)).status).toBe(404);
  });

  test("logging out revokes the session; deactivating the organization takes two clicks", async () => {
    expect(userSessions(s.server.h.store, s.users.desdemona.id).length).toBe(1);
    await page.evaluate(`document.getElementById("logout").click()`);
    await settle(`location.pathname === "/login"`);
    expect(userSessions(s.server.h.store, s.users.desdemona.id)).toEqual([]);
    expect(await page.evaluate(`document.cookie`)).toBe("");

    await page.goto(`${s.url}/admin`);
    await logIn(s.users.desdemona.email, PASSWORD);
    await settle(`location.pathname === "/static/admin.html" && !document.getElementById("danger").hidden && document.getElementById("settings").elements.name.value !== ""`);
    await page.evaluate(`document.getElementById("deactivate-realm").click()`);
    // One click only arms the button; give any request it might have sent time to land.
    expect(await page.evaluate(`document.getElementById("deactivate-realm").textContent`)).toBe("Click again to deactivate the organization");
    await Bun.sleep(300);
    expect(expectSuccess(await s.anonymous().get("/server_settings")).realm_name).toBe("Elsinore <Castle>");
    expect((await s.as("hamlet").get("/users/me")).status).toBe(200);
    await page.evaluate(`document.getElementById("deactivate-realm").click()`);
    await waitForStatus("The organization is deactivated.");
    const res = await s.as("hamlet").get("/users/me");
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("REALM_DEACTIVATED");
  }, 30_000);
});
