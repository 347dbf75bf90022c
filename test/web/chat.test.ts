/**
 * The web client at `/`, in headless Chromium against a real server: two members
 * sign in through the real /login form, each in a browser context of their own, and
 * chat: a message in a channel seen live by the other, a reply in the same topic,
 * typing notices, a reaction, an edit and a delete, a direct message; unread counts
 * go down as messages are read; logging out ends the session. Neither page may log
 * an error, and the page carries its Content-Security-Policy.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, PASSWORD, startTestServer, type TestServer } from "../kit";
import { type Browser, click, hoverRow, launchChromium, type Page, rowOf, until } from "../kit/browser";

let s: TestServer;
let browser: Browser;
let hamlet: Page;
let desdemona: Page;
let denmark: number;


/** Types into a field as a user would: value set, then the input event the app listens to. */
const typeInto = (page: Page, selector: string, text: string) =>
  page.evaluate(`(() => {
    const field = document.querySelector(${JSON.stringify(selector)});
    field.focus();
    field.value = ${JSON.stringify(text)};
    field.dispatchEvent(new Event("input", { bubbles: true }));
  })()`);
const pressEnter = (page: Page, selector: string) =>
  page.evaluate(`document.querySelector(${JSON.stringify(selector)}).dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }))`);

async function signIn(page: Page, email: string): Promise<void> {
  await page.goto(`${s.url}/`);
  expect(await page.evaluate<string>(`location.pathname + location.search`)).toBe("/login?next=/");
  await page.evaluate(`(() => {
    document.getElementById("username").value = ${JSON.stringify(email)};
    document.getElementById("password").value = ${JSON.stringify(PASSWORD)};
    document.querySelector("form").requestSubmit();
  })()`);
  await until(page, `location.pathname === "/" && document.querySelector(".sidebar .channels")`);
}

beforeAll(async () => {
  s = await startTestServer();
  denmark = await s.createChannel("desdemona", "Denmark", ["hamlet", "desdemona"]);
  browser = await launchChromium();
  hamlet = await browser.newPage({ ownCookies: true });
  desdemona = await browser.newPage({ ownCookies: true });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

describe("web client", () => {
  test("/ leads a visitor to sign in; the signed-in page loads only its own files under a strict CSP", async () => {
    const anonymous = await fetch(`${s.url}/`, { redirect: "manual" });
    expect(anonymous.status).toBe(302);
    expect(anonymous.headers.get("location")).toBe("/login?next=/");

    await signIn(hamlet, s.users.hamlet.email);
    await signIn(desdemona, s.users.desdemona.email);
    const { hearth_session } = await hamlet.cookies();
    const page = await fetch(`${s.url}/`, { headers: { cookie: `hearth_session=${hearth_session}` } });
    expect(page.status).toBe(200);
    const csp = page.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    const html = await page.text();
    // No inline script or style: every script and stylesheet is a file of the server's.
    expect(html).not.toMatch(/<script>|<script(?![^>]*\bsrc=)[^>]*>|<style/);
    const script = /<script type="module" src="(\/web\/app\.[^"]+\.js)">/.exec(html)![1];
    const asset = await fetch(`${s.url}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("cache-control")).toContain("immutable");
    expect((await fetch(`${s.url}/web/app.nothing.js`)).status).toBe(404);

    // Each page reports its member present; the other's people list shows the green dot.
    await until(hamlet, `document.querySelector('.people li[data-user-id="${s.users.desdemona.id}"] .presence.active')`);
    await until(desdemona, `document.querySelector('.people li[data-user-id="${s.users.hamlet.id}"] .presence.active')`);
    // Owners get a way to the administration page; members do not.
    expect(await desdemona.evaluate(`!!document.querySelector("a.admin-link")`)).toBe(true);
    expect(await hamlet.evaluate(`!!document.querySelector("a.admin-link")`)).toBe(false);
  });

  test("a message in a channel arrives live; the reply in the same topic comes back; typing is shown", async () => {
    await hamlet.evaluate(`location.hash = "#narrow/channel/${denmark}-Denmark/topic/battlements"`);
    await until(hamlet, `document.querySelector(".view-title").textContent === "#Denmark > battlements" && document.querySelector("input[name=topic]").value === "battlements"`);
    await typeInto(hamlet, "textarea[name=content]", "Who's there? <b>not bold</b>");
    await pressEnter(hamlet, "textarea[name=content]");
    await until(hamlet, rowOf("Who's there?"));
    await until(hamlet, `document.querySelector("textarea[name=content]").value === ""`);

    // Desdemona, on her recent conversations, sees the unread count rise live.
    await until(desdemona, `document.querySelector('.channels li[data-stream-id="${denmark}"] .count')?.textContent === "1"`);
    await until(desdemona, `document.title.startsWith("(1) ")`);
    await desdemona.evaluate(`[...document.querySelectorAll(".recent a")].find((a) => a.textContent === "battlements").click()`);
    await until(desdemona, rowOf("Who's there?"));
    // Text the user typed is text: the server's rendering escapes it, and the page shows it as written.
    expect(await desdemona.evaluate(`${rowOf("Who's there?")}.querySelector(".rendered b")`)).toBeNull();
    // Seen, so read: the count goes away, in the page and on the server.
    await until(desdemona, `!document.querySelector('.channels li[data-stream-id="${denmark}"] .count') && !document.title.startsWith("(")`);
    await until(desdemona, `!document.querySelector("article.msg.unread")`);
    const unread = async () => expectSuccess(await s.as("desdemona").post("/register", { fetch_event_types: JSON.stringify(["message", "update_message_flags"]) })).unread_msgs.count;
    for (let i = 0; i < 100 && (await unread()) !== 0; i++) await Bun.sleep(50);
    expect(await unread()).toBe(0);

    // Desdemona types: Hamlet sees it; she sends, in the topic the view chose.
    await typeInto(desdemona, "textarea[name=content]", "Nay, answer me.");
    await until(hamlet, `document.querySelector(".typing").textContent === "Desdemona is typing…"`);
    await pressEnter(desdemona, "textarea[name=content]");
    await until(hamlet, rowOf("Nay, answer me."));
    await until(hamlet, `document.querySelector(".typing").textContent === ""`);
    const [reply] = expectSuccess(await s.as("hamlet").get("/messages", { anchor: "newest", num_before: 1, num_after: 0 })).messages;
    expect(reply.subject).toBe("battlements");
    expect(reply.sender_id).toBe(s.users.desdemona.id);
  });

  test("a reaction, an edit and a delete reach the other page", async () => {
    // Hamlet reacts to Desdemona's reply with the picker.
    await hoverRow(hamlet, rowOf("Nay, answer me."));
    await hamlet.evaluate(`${rowOf("Nay, answer me.")}.querySelector(".act-react").click()`);
    await until(hamlet, `${rowOf("Nay, answer me.")}.querySelector(".emoji-picker")`);
    await hamlet.evaluate(`${rowOf("Nay, answer me.")}.querySelector('.emoji-picker button[aria-label="thumbs_up"]').click()`);
    await until(desdemona, `${rowOf("Nay, answer me.")}.querySelector(".reaction .count")?.textContent === "1"`);
    expect(await desdemona.evaluate(`${rowOf("Nay, answer me.")}.querySelector(".reaction").title`)).toContain("King Hamlet");

    // Hamlet edits his message.
    await hoverRow(hamlet, rowOf("Who's there?"));
    await hamlet.evaluate(`${rowOf("Who's there?")}.querySelector(".act-edit").click()`);
    await until(hamlet, `document.querySelector(".edit-form textarea")?.value === "Who's there? <b>not bold</b>"`);
    await typeInto(hamlet, ".edit-form textarea", "Who's there, I say?");
    await hamlet.evaluate(`document.querySelector(".edit-form").requestSubmit()`);
    await until(desdemona, `${rowOf("Who's there, I say?")}?.querySelector(".edited")`);

    // And deletes it, after confirming.
    await hoverRow(hamlet, rowOf("Who's there, I say?"));
    await hamlet.evaluate(`${rowOf("Who's there, I say?")}.querySelector(".act-delete").click()`);
    await until(hamlet, `${rowOf("Who's there, I say?")}.querySelector(".confirm button.danger")`);
    await hamlet.evaluate(`${rowOf("Who's there, I say?")}.querySelector(".confirm button.danger").click()`);
    await until(desdemona, `!${rowOf("Who's there")}`);
    await until(hamlet, `!${rowOf("Who's there")}`);
  });

  test("a starred message is in the Starred view", async () => {
    await hoverRow(desdemona, rowOf("Nay, answer me."));
    await desdemona.evaluate(`${rowOf("Nay, answer me.")}.querySelector(".act-star").click()`);
    await until(desdemona, `${rowOf("Nay, answer me.")}.querySelector(".act-star.on")`);
    await desdemona.evaluate(`location.hash = "#narrow/is/starred"`);
    await until(desdemona, `document.querySelector(".view-title").textContent === "Starred messages" && ${rowOf("Nay, answer me.")}`);
    expect(await desdemona.evaluate(`document.querySelectorAll("article.msg").length`)).toBe(1);
  });

  test("a long history scrolls back page by page, with only a window of it in the page", async () => {
    const lines = await s.createChannel("desdemona", "Lines", ["hamlet", "desdemona"]);
    // Ten at a time: within a batch the order may vary, which nothing below depends on.
    for (let i = 1; i <= 320; i += 10) {
      const batch = Array.from({ length: 10 }, (_, k) => s.as("desdemona").post("/messages", { type: "stream", to: lines, topic: "soliloquy", content: `line ${i + k}.` }));
      for (const sent of await Promise.all(batch)) expectSuccess(sent);
    }
    expectSuccess(await s.as("hamlet").post("/mark_all_as_read"));
    await hamlet.evaluate(`location.hash = "#narrow/channel/${lines}-Lines"`);
    await until(hamlet, rowOf("line 320."));
    expect(await hamlet.evaluate(`!!${rowOf("line 1.")}`)).toBe(false);
    // Scrolling up fetches older pages until the first line; never more than a window of messages is in the page.
    let most = 0;
    for (let i = 0; i < 60 && !(await hamlet.evaluate(`!!${rowOf("line 1.")}`)); i++) {
      await hamlet.evaluate(`(() => { const feed = document.querySelector(".feed"); feed.scrollTop = 0; feed.dispatchEvent(new Event("scroll")); })()`);
      await Bun.sleep(150);
      most = Math.max(most, await hamlet.evaluate<number>(`document.querySelectorAll("article.msg").length`));
    }
    await until(hamlet, `${rowOf("line 1.")} && document.querySelector(".feed-start")`);
    expect(most).toBeLessThanOrEqual(150);
    expect(await hamlet.evaluate(`!!${rowOf("line 320.")}`)).toBe(false);
    // And back down to the newest.
    for (let i = 0; i < 60 && !(await hamlet.evaluate(`!!${rowOf("line 320.")}`)); i++) {
      await hamlet.evaluate(`(() => { const feed = document.querySelector(".feed"); feed.scrollTop = feed.scrollHeight; feed.dispatchEvent(new Event("scroll")); })()`);
      await Bun.sleep(100);
    }
    await until(hamlet, rowOf("line 320."));
  }, 60_000);

  test("a direct message: the count in the sidebar, the conversation, then read", async () => {
    // A recipient that does not exist is said beside the box, and the text stays.
    await hamlet.evaluate(`location.hash = "#narrow/is/dm"`);
    await until(hamlet, `document.querySelector(".view-title").textContent === "Direct messages"`);
    await hamlet.evaluate(`(() => { const mode = document.querySelector(".compose-to select"); mode.value = "dm"; mode.dispatchEvent(new Event("change", { bubbles: true })); })()`);
    await until(hamlet, `document.querySelector("input[name=recipients]")`);
    await typeInto(hamlet, "input[name=recipients]", "nobody@zulip.test");
    await typeInto(hamlet, "textarea[name=content]", "Hello?");
    await pressEnter(hamlet, "textarea[name=content]");
    await until(hamlet, `document.querySelector(".compose-error")?.textContent === "Unknown recipient: nobody@zulip.test"`);
    expect(await hamlet.evaluate(`document.querySelector("textarea[name=content]").value`)).toBe("Hello?");

    await hamlet.evaluate(`location.hash = "#narrow/dm/${s.users.desdemona.id}-desdemona"`);
    await until(hamlet, `document.querySelector("input[name=recipients]")?.value === "desdemona@zulip.test"`);
    await typeInto(hamlet, "textarea[name=content]", "A word in private.");
    await pressEnter(hamlet, "textarea[name=content]");
    await until(hamlet, rowOf("A word in private."));

    await desdemona.evaluate(`location.hash = "#recent"`);
    await until(desdemona, `document.querySelector(".sidebar .views li:last-child .count")?.textContent === "1"`);
    await until(desdemona, `[...document.querySelectorAll(".sidebar .dms a")].some((a) => a.textContent.startsWith("King Hamlet"))`);
    await desdemona.evaluate(`[...document.querySelectorAll(".sidebar .dms a")].find((a) => a.textContent.startsWith("King Hamlet")).click()`);
    await until(desdemona, rowOf("A word in private."));
    await until(desdemona, `!document.querySelector(".sidebar .views li:last-child .count")`);
    expect(await desdemona.evaluate(`document.querySelector(".recipient-bar").textContent`)).toContain("You and King Hamlet");
  });

  test("links into the app open their view in place; the back button returns", async () => {
    await hamlet.evaluate(`location.hash = "#narrow/channel/${denmark}-Denmark/topic/battlements"`);
    await typeInto(hamlet, "textarea[name=content]", "See #**Denmark>battlements** and #**Denmark**");
    await pressEnter(hamlet, "textarea[name=content]");
    await until(hamlet, `${rowOf("See")}?.querySelector("a.stream")`);
    await hamlet.evaluate(`${rowOf("See")}.querySelector("a.stream").click()`);
    await until(hamlet, `document.querySelector(".view-title").textContent === "#Denmark"`);
    expect(await hamlet.evaluate(`location.pathname`)).toBe("/");
    await hamlet.evaluate(`history.back()`);
    await until(hamlet, `document.querySelector(".view-title").textContent === "#Denmark > battlements"`);
  });

  test("a file uploads through tus with the session and goes into the message as a link", async () => {
    await desdemona.evaluate(`(() => {
      const input = document.querySelector(".uploader input[type=file]");
      const files = new DataTransfer();
      files.items.add(new File(["x".repeat(300000)], "ghost [notes].txt", { type: "text/plain" }));
      input.files = files.files;
      input.dispatchEvent(new Event("change", { bubbles: true }));
    })()`);
    const link = await until<string>(desdemona, `/\\[ghost notes\\.txt\\]\\((\\/user_uploads\\/[^)]+)\\)/.exec(document.querySelector("textarea[name=content]").value)?.[1]`);
    const uploaded = await fetch(`${s.url}${link}`, { headers: { authorization: `Basic ${btoa(`${s.users.desdemona.email}:${s.users.desdemona.apiKey}`)}` } });
    expect(uploaded.status).toBe(200);
    expect((await uploaded.text()).length).toBe(300000);
    // Desdemona is still in her conversation with Hamlet.
    await hamlet.evaluate(`location.hash = "#narrow/dm/${s.users.desdemona.id}-desdemona"`);
    await pressEnter(desdemona, "textarea[name=content]");
    await until(hamlet, `${rowOf("ghost notes.txt")}?.querySelector("a[href^='/user_uploads/']")`);
  });

  test("math renders with KaTeX's inline styles, which the page's policy allows", async () => {
    expectSuccess(await s.as("desdemona").post("/messages", { type: "stream", to: denmark, topic: "battlements", content: "Count them: $$x^2 + y_1$$" }));
    await hamlet.evaluate(`location.hash = "#narrow/channel/${denmark}-Denmark/topic/battlements"`);
    await until(hamlet, `${rowOf("Count them")}?.querySelector(".katex [style]")`);
    // The struts KaTeX sizes with style attributes took effect (a policy without
    // style-src-attr would block them and report a violation, which the last test sees).
    const height = await hamlet.evaluate<string>(`${rowOf("Count them")}.querySelector(".katex [style*=height]").style.height`);
    expect(height).not.toBe("");
    expect(await hamlet.evaluate<number>(`${rowOf("Count them")}.querySelector(".katex [style*=height]").getBoundingClientRect().height`)).toBeGreaterThan(0);
  });

  test("search finds messages by their words", async () => {
    await typeInto(hamlet, ".search input", "answer");
    await hamlet.evaluate(`document.querySelector(".search").requestSubmit()`);
    await until(hamlet, `document.querySelector(".view-title").textContent === "Search: answer" && ${rowOf("Nay, answer me.")}`);
    expect(await hamlet.evaluate(`location.hash`)).toBe("#narrow/search/answer");
    expect(await hamlet.evaluate(`document.querySelectorAll("article.msg").length`)).toBe(1);
  });

  test("neither page logged an error", () => {
    expect(hamlet.errors()).toEqual([]);
    expect(desdemona.errors()).toEqual([]);
  });

  test("logging out ends the session", async () => {
    const { hearth_session } = await hamlet.cookies();
    expect(hearth_session).toBeTruthy();
    await click(hamlet, ".logout button");
    await until(hamlet, `location.pathname === "/login"`);
    const stale = await fetch(`${s.url}/json/users/me`, { headers: { cookie: `hearth_session=${hearth_session}` } });
    expect(stale.status).toBe(401);
    const page = await fetch(`${s.url}/`, { headers: { cookie: `hearth_session=${hearth_session}` }, redirect: "manual" });
    expect(page.status).toBe(302);
  });
});
