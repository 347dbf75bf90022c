/**
 * The web client's panels, in headless Chromium against a real server, two members
 * signed in through the real /login form: browsing and creating channels (the other
 * member sees a new channel live and subscribes), a subscription's mute, pin and
 * colour from the sidebar, and personal settings. Neither page may log an error.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, PASSWORD, startTestServer, type TestServer } from "../kit";
import { click, launchChromium, signInToChat, until, type Browser, type Page } from "../kit/browser";

let s: TestServer;
let browser: Browser;
let hamlet: Page;
let desdemona: Page;
let denmark: number;


/** Sets a field as a user would: the value, then the event the app listens to. */
const setField = (page: Page, selector: string, value: string | boolean, eventName = "input") =>
  page.evaluate(`(() => {
    const field = document.querySelector(${JSON.stringify(selector)});
    field.focus();
    if (typeof ${JSON.stringify(value)} === "boolean") field.checked = ${JSON.stringify(value)}; else field.value = ${JSON.stringify(value)};
    field.dispatchEvent(new Event(${JSON.stringify(eventName)}, { bubbles: true }));
  })()`);
const channelRow = (name: string) => `[...document.querySelectorAll(".all-channels li")].find((li) => li.querySelector("a").textContent.endsWith(" " + ${JSON.stringify(name)}))`;
const sidebarRow = (id: number) => `document.querySelector('.sidebar .channels li[data-stream-id="${id}"]')`;

const signIn = (page: Page, email: string, password = PASSWORD) => signInToChat(page, s.url, email, password);

beforeAll(async () => {
  s = await startTestServer();
  denmark = await s.createChannel("desdemona", "Denmark", ["hamlet", "desdemona"]);
  browser = await launchChromium();
  hamlet = await browser.newPage({ ownCookies: true });
  desdemona = await browser.newPage({ ownCookies: true });
  await signIn(hamlet, s.users.hamlet.email);
  await signIn(desdemona, s.users.desdemona.email);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

/** Hamlet's settings as the server has them saved. */
const savedSettings = async () => expectSuccess(await s.as("hamlet").post("/register", { fetch_event_types: JSON.stringify(["user_settings"]) })).user_settings;

/** Waits until the server has saved `value` for Hamlet's setting `name` (a box changes before its PATCH commits). */
async function untilSaved(name: string, value: unknown) {
  for (let i = 0; i < 100 && (await savedSettings())[name] !== value; i++) await Bun.sleep(50);
  expect((await savedSettings())[name]).toBe(value);
}

describe("web client panels", () => {
  test("a channel created in the panel appears live in the other member's panel, who subscribes", async () => {
    await click(desdemona, ".open-channels");
    await until(desdemona, `${channelRow("Denmark")}?.querySelector(".subscribers").textContent === "2 subscribers"`);
    await click(hamlet, ".open-channels");
    await until(hamlet, channelRow("Denmark"));

    await setField(desdemona, "input[name=channel-name]", "Elsinore");
    await setField(desdemona, "input[name=channel-description]", "The castle & its <ghosts>");
    await desdemona.evaluate(`document.querySelector(".create-channel").requestSubmit()`);
    // The creator is subscribed: the channel is in her sidebar and marked so in the panel.
    await until(desdemona, `[...document.querySelectorAll(".sidebar .channels .label")].some((l) => l.textContent === "Elsinore")`);
    await until(desdemona, `${channelRow("Elsinore")}?.querySelector("button.unsubscribe")`);

    // Hamlet's open panel gains the channel from the events, description as text.
    await until(hamlet, `${channelRow("Elsinore")}?.querySelector(".description")?.textContent === "The castle & its <ghosts>"`);
    expect(await hamlet.evaluate(`${channelRow("Elsinore")}.querySelector(".description ghosts")`)).toBeNull();
    await hamlet.evaluate(`${channelRow("Elsinore")}.querySelector("button.subscribe").click()`);
    await until(hamlet, `[...document.querySelectorAll(".sidebar .channels .label")].some((l) => l.textContent === "Elsinore")`);
    await until(hamlet, `${channelRow("Elsinore")}?.querySelector("button.unsubscribe")`);
    // Desdemona's count follows Hamlet's subscription.
    await until(desdemona, `${channelRow("Elsinore")}.querySelector(".subscribers").textContent === "2 subscribers"`);
    const { subscriptions } = expectSuccess(await s.as("hamlet").get("/users/me/subscriptions"));
    expect(subscriptions.map((sub: any) => sub.name)).toContain("Elsinore");

    // A blank name is refused by the server, and its words appear beside the form.
    await setField(desdemona, "input[name=channel-name]", "   ");
    await desdemona.evaluate(`document.querySelector(".create-channel").requestSubmit()`);
    const said = await until<string>(desdemona, `document.querySelector(".create-channel .error")?.textContent`);
    expect(said).toContain("empty");

    // Unsubscribing from the panel takes the channel out of the sidebar.
    await hamlet.evaluate(`${channelRow("Elsinore")}.querySelector("button.unsubscribe").click()`);
    await until(hamlet, `![...document.querySelectorAll(".sidebar .channels .label")].some((l) => l.textContent === "Elsinore")`);
    await click(hamlet, ".panel .close");
    await click(desdemona, ".panel .close");
    await until(hamlet, `!document.querySelector(".panel")`);
  });

  test("mute, pin and colour from the sidebar apply live", async () => {
    const elsewhere = await s.createChannel("hamlet", "Aardvarks", ["hamlet"]);
    await until(hamlet, sidebarRow(elsewhere));
    await hamlet.evaluate(`${sidebarRow(denmark)}.querySelector(".sub-settings-toggle").click()`);
    await until(hamlet, `${sidebarRow(denmark)}.querySelector(".sub-settings")`);

    await setField(hamlet, `.sidebar .channels li[data-stream-id="${denmark}"] input[name=is_muted]`, true, "change");
    await until(hamlet, `${sidebarRow(denmark)}.classList.contains("muted")`);
    await setField(hamlet, `.sidebar .channels li[data-stream-id="${denmark}"] input[type=color]`, "#aa3300", "change");
    await until(hamlet, `getComputedStyle(${sidebarRow(denmark)}.querySelector(".swatch")).backgroundColor === "rgb(170, 51, 0)"`);
    // Aardvarks sorts first until Denmark is pinned.
    expect(await hamlet.evaluate(`document.querySelector(".sidebar .channels li").dataset.streamId`)).toBe(String(elsewhere));
    await setField(hamlet, `.sidebar .channels li[data-stream-id="${denmark}"] input[name=pin_to_top]`, true, "change");
    await until(hamlet, `document.querySelector(".sidebar .channels li").dataset.streamId === "${denmark}"`);

    const { subscriptions } = expectSuccess(await s.as("hamlet").get("/users/me/subscriptions"));
    const sub = subscriptions.find((x: any) => x.stream_id === denmark);
    expect([sub.is_muted, sub.pin_to_top, sub.color]).toEqual([true, true, "#aa3300"]);
    // Desdemona's subscription is her own.
    expect(await desdemona.evaluate(`${sidebarRow(denmark)}.classList.contains("muted")`)).toBe(false);

    // A muted channel's messages do not count in the title's total.
    expectSuccess(await s.as("hamlet").post("/mark_all_as_read"));
    await until(hamlet, `!document.title.startsWith("(")`);
    expectSuccess(await s.as("desdemona").post("/messages", { type: "stream", to: denmark, topic: "quiet", content: "Hush." }));
    await until(hamlet, `${sidebarRow(denmark)}.querySelector(".count")?.textContent === "1"`);
    expect(await hamlet.evaluate(`document.title.startsWith("(")`)).toBe(false);
  });

  test("personal settings: a new name and avatar reach the other page live; time format and theme apply", async () => {
    await click(hamlet, ".open-settings");
    await until(hamlet, `document.querySelector(".settings-panel input[name=full_name]")?.value === "King Hamlet"`);
    await setField(hamlet, "input[name=full_name]", "Prince Hamlet");
    await hamlet.evaluate(`document.querySelector(".name-form").requestSubmit()`);
    await until(desdemona, `document.querySelector('.people li[data-user-id="${s.users.hamlet.id}"] .label')?.textContent === "Prince Hamlet"`);
    await until(hamlet, `document.querySelector(".top .me").textContent === "Prince Hamlet"`);

    // An avatar drawn in the page, uploaded from the file field.
    const before = await desdemona.evaluate<string>(`document.querySelector('.people li[data-user-id="${s.users.hamlet.id}"] img.avatar')?.src ?? ""`);
    await hamlet.evaluate(`(async () => {
      const canvas = document.createElement("canvas");
      canvas.width = canvas.height = 40;
      const g = canvas.getContext("2d");
      g.fillStyle = "#c00";
      g.fillRect(0, 0, 40, 40);
      const blob = await new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
      const files = new DataTransfer();
      files.items.add(new File([blob], "me.png", { type: "image/png" }));
      const input = document.querySelector("input[name=avatar]");
      input.files = files.files;
      input.dispatchEvent(new Event("change", { bubbles: true }));
    })()`);
    const after = await until<string>(desdemona, `(() => { const src = document.querySelector('.people li[data-user-id="${s.users.hamlet.id}"] img.avatar')?.src; return src && src !== ${JSON.stringify(before)} ? src : ""; })()`);
    expect((await fetch(after)).headers.get("content-type")).toContain("image/");
    const me = expectSuccess(await s.as("hamlet").get("/users/me"));
    expect(me.full_name).toBe("Prince Hamlet");
    expect(after.endsWith(me.avatar_url)).toBe(true);

    // The time format: 13:30 style, in the page's times too.
    await until(hamlet, `/[AP]M/i.test(document.querySelector(".recent .when")?.textContent ?? "")`);
    await setField(hamlet, "select[name=twenty_four_hour_time]", "true", "change");
    await until(hamlet, `document.querySelector("select[name=twenty_four_hour_time]").value === "true"`);
    await until(hamlet, `/\\d\\d:\\d\\d$/.test(document.querySelector(".recent .when").textContent) && !/[AP]M/i.test(document.querySelector(".recent .when").textContent)`);
    let settings = await savedSettings();
    expect(settings.twenty_four_hour_time).toBe(true);

    // The theme: dark whatever the system says, then light, then the system's again.
    const background = () => hamlet.evaluate<string>(`getComputedStyle(document.body).backgroundColor`);
    await setField(hamlet, "select[name=color_scheme]", "2", "change");
    await until(hamlet, `document.documentElement.dataset.theme === "dark"`);
    expect(await background()).toBe("rgb(27, 30, 36)");
    await setField(hamlet, "select[name=color_scheme]", "3", "change");
    await until(hamlet, `document.documentElement.dataset.theme === "light"`);
    expect(await background()).toBe("rgb(255, 255, 255)");
    await setField(hamlet, "select[name=color_scheme]", "1", "change");
    await until(hamlet, `document.documentElement.dataset.theme === undefined`);
    settings = await savedSettings();
    expect(settings.color_scheme).toBe(1);

    // Notification preferences are the server's settings.
    await setField(hamlet, "input[name=enable_followed_topic_desktop_notifications]", false, "change");
    await untilSaved("enable_followed_topic_desktop_notifications", false);
    await setField(hamlet, "input[name=enable_followed_topic_desktop_notifications]", true, "change");
    await untilSaved("enable_followed_topic_desktop_notifications", true);
  });

  test("browser notifications, once allowed, for direct messages, mentions and followed topics, as the settings say", async () => {
    await until(hamlet, `document.querySelector("button.enable-notifications")`);
    await hamlet.grantPermissions(s.url, ["notifications"]);
    // Once granted, any render of the panel replaces the button by the news that notifications are on.
    await hamlet.evaluate(`document.querySelector("button.enable-notifications")?.click()`);
    await until(hamlet, `document.querySelector(".notify-permission").textContent.startsWith("Browser notifications are on")`);
    // Every notification the page shows is noted (and still shown) by a subclass.
    await hamlet.evaluate(`(() => {
      window.shown = [];
      const Real = Notification;
      window.Notification = class extends Real {
        constructor(title, options) { super(title, options); window.shown.push(title + " | " + options.body); }
      };
    })()`);
    await hamlet.evaluate(`location.hash = "#recent"`);
    const shown = () => hamlet.evaluate<string[]>(`window.shown`);
    const say = async (params: Record<string, unknown>) => expectSuccess(await s.as("desdemona").post("/messages", params));
    const dm = { type: "private", to: JSON.stringify([s.users.hamlet.id]) };

    await say({ ...dm, content: "Look, my lord, it comes!" });
    await until(hamlet, `window.shown.length === 1`);
    expect(await shown()).toEqual(["Desdemona | Look, my lord, it comes!"]);

    // A channel message is not announced; a mention in it is.
    await say({ type: "stream", to: denmark, topic: "ramparts", content: "The air bites shrewdly." });
    await say({ type: "stream", to: denmark, topic: "ramparts", content: "@**Prince Hamlet** it is very cold." });
    await until(hamlet, `window.shown.length === 2`);
    expect((await shown())[1]).toBe("Desdemona (#Denmark > ramparts) | @Prince Hamlet it is very cold.");

    // A followed topic is announced.
    expectSuccess(await s.as("hamlet").post("/user_topics", { stream_id: denmark, topic: "ghost", visibility_policy: 3 }));
    await say({ type: "stream", to: denmark, topic: "ghost", content: "It beckons you." });
    await until(hamlet, `window.shown.length === 3`);
    expect((await shown())[2]).toBe("Desdemona (#Denmark > ghost) | It beckons you.");

    // With DM notifications off, a DM is silent; the followed topic still speaks, after it.
    // The box changes at once; the page acts on the setting when its event arrives, and the
    // event queue is ordered, so once the server has saved it the next DM's event comes after.
    await setField(hamlet, "input[name=enable_desktop_notifications]", false, "change");
    await untilSaved("enable_desktop_notifications", false);
    await say({ ...dm, content: "Go not with it." });
    await say({ type: "stream", to: denmark, topic: "ghost", content: "Hold off your hands." });
    await until(hamlet, `window.shown.length === 4`);
    expect((await shown())[3]).toBe("Desdemona (#Denmark > ghost) | Hold off your hands.");
    await setField(hamlet, "input[name=enable_desktop_notifications]", true, "change");
    await untilSaved("enable_desktop_notifications", true);
  });

  test("a status shows in the people list live; a profile card from the people list and from a sender's name", async () => {
    await click(hamlet, ".panel .close");
    expectSuccess(await s.as("desdemona").post("/users/me/status", { status_text: "On the <battlements>", emoji_name: "tada" }));
    expectSuccess(await s.as("desdemona").patch("/settings", { timezone: "Asia/Tokyo" }));
    const person = `document.querySelector('.people li[data-user-id="${s.users.desdemona.id}"]')`;
    await until(hamlet, `${person}?.querySelector(".user-status .status-text")?.textContent === "On the <battlements>"`);
    expect(await hamlet.evaluate(`${person}.querySelector(".user-status .emoji").textContent`)).toBe("🎉");

    await hamlet.evaluate(`${person}.querySelector("a").click()`);
    await until(hamlet, `document.querySelector(".profile-card .profile-name")?.textContent === "Desdemona"`);
    expect(await hamlet.evaluate(`document.querySelector(".profile-email").textContent`)).toBe(s.users.desdemona.email);
    expect(await hamlet.evaluate(`document.querySelector(".profile-role").textContent`)).toBe("Owner");
    expect(await hamlet.evaluate(`document.querySelector(".profile-status").textContent`)).toContain("On the <battlements>");
    await until(hamlet, `/\\d\\d:\\d\\d/.test(document.querySelector(".profile-time")?.textContent ?? "")`);
    await click(hamlet, ".profile-card a.send-dm");
    await until(hamlet, `location.hash.startsWith("#narrow/dm/${s.users.desdemona.id}-") && !document.querySelector(".profile-card")`);

    // From the feed: the sender's name.
    await until(hamlet, `document.querySelector("article.msg .sender")`);
    await click(hamlet, "article.msg .sender");
    await until(hamlet, `document.querySelector(".profile-card .profile-name")?.textContent === "Desdemona"`);
    await click(hamlet, ".profile-card .close");
    await until(hamlet, `!document.querySelector(".profile-card")`);

    // Cleared, it goes away.
    expectSuccess(await s.as("desdemona").post("/users/me/status", { status_text: "", emoji_name: "" }));
    await until(hamlet, `!${person}.querySelector(".user-status")`);
  });

  test("a wrong current password is said in the form; a new one signs out everywhere, and the page goes to /login", async () => {
    const { hearth_session } = await hamlet.cookies();
    await click(hamlet, ".open-settings");
    await until(hamlet, `document.querySelector(".password-form")`);
    await setField(hamlet, "input[name=old_password]", "not my password");
    await setField(hamlet, "input[name=new_password]", "a much better secret 42");
    await hamlet.evaluate(`document.querySelector(".password-form").requestSubmit()`);
    await until(hamlet, `document.querySelector(".password-form .error")?.textContent`);
    expect(await hamlet.evaluate(`location.pathname`)).toBe("/");

    await setField(hamlet, "input[name=old_password]", PASSWORD);
    await hamlet.evaluate(`document.querySelector(".password-form").requestSubmit()`);
    await until(hamlet, `location.pathname === "/login"`);
    const stale = await fetch(`${s.url}/json/users/me`, { headers: { cookie: `hearth_session=${hearth_session}` } });
    expect(stale.status).toBe(401);
    await signIn(hamlet, s.users.hamlet.email, "a much better secret 42");
  });

  test("neither page logged an error but the refusals the tests asked for", () => {
    // The browser itself reports the 400s of the blank channel name and the wrong password.
    const refused = (path: string) => new RegExp(`status of 400 .*/json${path}$`);
    expect(hamlet.errors().filter((e) => !refused("/settings").test(e))).toEqual([]);
    expect(hamlet.errors().filter((e) => refused("/settings").test(e)).length).toBe(1);
    expect(desdemona.errors().filter((e) => !refused("/users/me/subscriptions").test(e))).toEqual([]);
    expect(desdemona.errors().filter((e) => refused("/users/me/subscriptions").test(e)).length).toBe(1);
  });
});
