/**
 * The web client with the keyboard alone and on a phone, in headless Chromium against a
 * real server: senders' names and avatars are buttons that open the profile card (Enter,
 * Space) and give the focus back when it closes; the compose typeahead is an ARIA
 * combobox; the move-topic and edit actions follow the organization's settings; and at
 * phone width the people list, which has no room beside the feed, opens over it from a
 * button in the header.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, PASSWORD, startTestServer, type TestServer } from "../kit";
import { type Browser, hoverRow, launchChromium, type Page, rowOf, signInToChat, until } from "../kit/browser";

let s: TestServer;
let browser: Browser;
let hamlet: Page;
let denmark: number;

const topicHash = (topic: string) => `#narrow/channel/${denmark}-Denmark/topic/${encodeURIComponent(topic).replace(/\./g, "%2E").replace(/%/g, ".")}`;
async function openTopic(page: Page, topic: string): Promise<void> {
  await page.evaluate(`location.hash = ${JSON.stringify(topicHash(topic))}`);
  await until(page, `document.querySelector(".compose input[name=topic]")?.value === ${JSON.stringify(topic)}`);
}
/** Presses Tab (or Shift+Tab) until the focused element matches `test`, as a keyboard user would. */
async function tabTo(page: Page, test: string, options: { shift?: boolean } = {}): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await page.evaluate(`(() => { const el = document.activeElement; return !!el && (${test}); })()`)) return;
    await page.press("Tab", options);
  }
  throw new Error(`Tab never reached: ${test}`);
}
const focused = (page: Page, selector: string) => page.evaluate<boolean>(`document.activeElement?.matches(${JSON.stringify(selector)}) ?? false`);

beforeAll(async () => {
  s = await startTestServer();
  denmark = await s.createChannel("desdemona", "Denmark", ["hamlet", "desdemona", "othello"]);
  browser = await launchChromium();
  hamlet = await browser.newPage({ ownCookies: true });
  await signInToChat(hamlet, s.url, s.users.hamlet.email, PASSWORD);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

describe("the web client by keyboard", () => {
  test("a sender's avatar and name are buttons: Enter and Space open the profile card, Escape closes it and the focus comes back", async () => {
    expectSuccess(await s.as("desdemona").post("/messages", { type: "stream", to: denmark, topic: "keys", content: "Who goes there?" }));
    await openTopic(hamlet, "keys");
    await until(hamlet, rowOf("Who goes there?"));
    const inRow = `${rowOf("Who goes there?")}.contains(el)`;

    await tabTo(hamlet, `${inRow} && el.matches("button.sender-avatar")`);
    expect(await hamlet.evaluate(`document.activeElement.getAttribute("aria-label")`)).toBe("Profile of Desdemona");
    await hamlet.press("Enter");
    await until(hamlet, `document.querySelector(".profile-card .profile-name")?.textContent === "Desdemona"`);
    // The card takes the focus; Escape closes it and gives the focus back to the avatar.
    await until(hamlet, `document.querySelector(".profile-card").contains(document.activeElement)`);
    await hamlet.press("Escape");
    await until(hamlet, `!document.querySelector(".profile-card")`);
    await until(hamlet, `document.activeElement?.matches("button.sender-avatar") && ${rowOf("Who goes there?")}.contains(document.activeElement)`);

    // The name is the next stop; Space opens the card too.
    await hamlet.press("Tab");
    expect(await focused(hamlet, "button.sender")).toBe(true);
    expect(await hamlet.evaluate(`document.activeElement.textContent`)).toBe("Desdemona");
    await hamlet.press(" ");
    await until(hamlet, `document.querySelector(".profile-card .profile-email")?.textContent === ${JSON.stringify(s.users.desdemona.email)}`);
    await until(hamlet, `document.activeElement?.matches(".profile-card .close")`);
    await hamlet.press("Enter");
    await until(hamlet, `!document.querySelector(".profile-card")`);
    await until(hamlet, `document.activeElement?.matches("button.sender")`);
    // The row's actions come next, by keyboard as by mouse (the row holds the focus, so they are shown).
    await hamlet.press("Tab");
    expect(await focused(hamlet, ".msg-actions .act-react")).toBe(true);
    expect(await hamlet.evaluate(`${rowOf("Who goes there?")}.contains(document.activeElement)`)).toBe(true);
    await hamlet.press("Tab");
    expect(await focused(hamlet, ".msg-actions .act-star")).toBe(true);
    expect(hamlet.errors()).toEqual([]);
  }, 60_000);

  test("the compose typeahead is a combobox: expanded, its listbox and the option the arrows reach are announced", async () => {
    await openTopic(hamlet, "keys");
    await tabTo(hamlet, `el.matches(".compose textarea[name=content]")`);
    const box = `document.querySelector(".compose textarea[name=content]")`;
    const attr = (name: string) => hamlet.evaluate<string | null>(`${box}.getAttribute(${JSON.stringify(name)})`);
    expect(await attr("role")).toBe("combobox");
    expect(await attr("aria-expanded")).toBe("false");
    expect(await attr("aria-autocomplete")).toBe("list");
    expect(await attr("aria-activedescendant")).toBe(null);

    // "@o" offers several people; the first is the active option.
    await hamlet.type("Ask @o");
    await until(hamlet, `document.querySelectorAll(".typeahead [role=option]").length >= 2`);
    expect(await attr("aria-expanded")).toBe("true");
    const list = await hamlet.evaluate<{ id: string; role: string }>(`(() => { const ul = document.querySelector(".typeahead"); return { id: ul.id, role: ul.getAttribute("role") }; })()`);
    expect(list.role).toBe("listbox");
    expect(await attr("aria-controls")).toBe(list.id);
    const selectedOption = `document.querySelector(".typeahead [role=option][aria-selected=true]")`;
    const first = await hamlet.evaluate<string>(`${selectedOption}.id`);
    expect(await attr("aria-activedescendant")).toBe(first);
    expect(await hamlet.evaluate(`document.querySelectorAll(".typeahead [aria-selected=true]").length`)).toBe(1);

    // ArrowDown moves the active option; the focus stays in the box.
    await hamlet.press("ArrowDown");
    await until(hamlet, `${box}.getAttribute("aria-activedescendant") !== ${JSON.stringify(first)}`);
    const second = await hamlet.evaluate<string>(`${selectedOption}.id`);
    expect(await attr("aria-activedescendant")).toBe(second);
    expect(await hamlet.evaluate(`document.getElementById(${JSON.stringify(second)}).getAttribute("role")`)).toBe("option");
    expect(await focused(hamlet, ".compose textarea[name=content]")).toBe(true);
    const label = await hamlet.evaluate<string>(`${selectedOption}.querySelector(".ta-label").textContent`);

    // Enter picks it and the list closes.
    await hamlet.press("Enter");
    await until(hamlet, `!document.querySelector(".typeahead")`);
    expect(await hamlet.evaluate(`${box}.value`)).toContain(`@**${label}`);
    expect(await attr("aria-expanded")).toBe("false");
    expect(await attr("aria-activedescendant")).toBe(null);

    // Escape closes it without choosing.
    await hamlet.type(" and @o");
    await until(hamlet, `${box}.getAttribute("aria-expanded") === "true"`);
    await hamlet.press("Escape");
    await until(hamlet, `${box}.getAttribute("aria-expanded") === "false" && !document.querySelector(".typeahead")`);
    expect(await hamlet.evaluate(`${box}.value.endsWith(" and @o")`)).toBe(true);
    await hamlet.evaluate(`(() => { ${box}.value = ""; ${box}.dispatchEvent(new Event("input", { bubbles: true })); })()`);
    expect(hamlet.errors()).toEqual([]);
  }, 60_000);
});

describe("actions follow the organization's settings", () => {
  test("where only moderators may move topics, a member is not offered Move topic on others' messages and an owner is; editing follows allow_message_editing", async () => {
    const desdemona = await browser.newPage({ ownCookies: true });
    await signInToChat(desdemona, s.url, s.users.desdemona.email, PASSWORD);
    expectSuccess(await s.as("desdemona").post("/messages", { type: "stream", to: denmark, topic: "rules", content: "The rule of the castle" }));
    expectSuccess(await s.as("hamlet").post("/messages", { type: "stream", to: denmark, topic: "rules", content: "A member's own words" }));

    // By default members may move topics.
    await openTopic(hamlet, "rules");
    await until(hamlet, `${rowOf("The rule of the castle")} && ${rowOf("A member's own words")}`);
    await hoverRow(hamlet, rowOf("The rule of the castle"));
    await hoverRow(hamlet, rowOf("A member's own words"));
    await until(hamlet, `${rowOf("The rule of the castle")}?.querySelector(".act-move")`);
    expect(await hamlet.evaluate(`!!${rowOf("A member's own words")}.querySelector(".act-edit")`)).toBe(true);

    const groups = expectSuccess(await s.as("desdemona").get("/user_groups")).user_groups as { id: number; name: string }[];
    const moderators = groups.find((g) => g.name === "role:moderators")!.id;
    expectSuccess(await s.as("desdemona").patch("/realm", { can_move_messages_between_topics_group: JSON.stringify({ new: moderators }), allow_message_editing: false }));

    // Hamlet (a member) opens the page afresh: no Move topic on Desdemona's message, no Edit on his own.
    // The old page is marked, so that the wait cannot end on it before it unloads.
    await hamlet.evaluate(`window.oldPage = true; location.reload()`);
    await until(hamlet, `!window.oldPage && ${rowOf("The rule of the castle")} && ${rowOf("A member's own words")}`);
    await hoverRow(hamlet, rowOf("The rule of the castle"));
    await hoverRow(hamlet, rowOf("A member's own words"));
    expect(await hamlet.evaluate(`!!${rowOf("The rule of the castle")}.querySelector(".act-move")`)).toBe(false);
    expect(await hamlet.evaluate(`!!${rowOf("A member's own words")}.querySelector(".act-edit")`)).toBe(false);
    // The server agrees: the move the page no longer offers is refused.
    const inRules = expectSuccess(await s.as("hamlet").get("/messages", { anchor: "newest", num_before: 5, num_after: 0, narrow: JSON.stringify([{ operator: "channel", operand: denmark }, { operator: "topic", operand: "rules" }]) })).messages as { id: number; content: string }[];
    const rule = inRules.find((m) => m.content.includes("The rule of the castle"))!.id;
    expect((await s.as("hamlet").patch(`/messages/${rule}`, { topic: "no rules", propagate_mode: "change_one" })).status).toBe(400);

    // The owner is a moderator and more: the action is there, and it moves the topic.
    await openTopic(desdemona, "rules");
    await until(desdemona, `${rowOf("The rule of the castle")} && ${rowOf("A member's own words")}`);
    await hoverRow(desdemona, rowOf("The rule of the castle"));
    await hoverRow(desdemona, rowOf("A member's own words"));
    await until(desdemona, `${rowOf("A member's own words")}?.querySelector(".act-move")`);
    expect(await desdemona.evaluate(`!!${rowOf("The rule of the castle")}.querySelector(".act-move")`)).toBe(true);

    // Given back to everyone, it comes back live (the realm event).
    const everyone = groups.find((g) => g.name === "role:everyone")!.id;
    expectSuccess(await s.as("desdemona").patch("/realm", { can_move_messages_between_topics_group: JSON.stringify({ new: everyone }), allow_message_editing: true }));
    await until(hamlet, `${rowOf("The rule of the castle")}?.querySelector(".act-move") && ${rowOf("A member's own words")}.querySelector(".act-edit")`);
    expect(hamlet.errors()).toEqual([]);
    expect(desdemona.errors()).toEqual([]);
    await desdemona.close();
  }, 60_000);
});

describe("the web client at phone width", () => {
  test("the people list, hidden beside the feed, opens over it from the header's People button and closes with Escape", async () => {
    const phone = await browser.newPage({ ownCookies: true });
    await phone.emulate({ width: 390, height: 800 });
    await signInToChat(phone, s.url, s.users.hamlet.email, PASSWORD);
    const shown = (selector: string) => phone.evaluate<boolean>(`(() => { const el = document.querySelector(${JSON.stringify(selector)}); return !!el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden"; })()`);

    expect(await shown(".people")).toBe(false);
    expect(await shown(".top .people-toggle")).toBe(true);
    expect(await phone.evaluate(`document.querySelector(".top .people-toggle").getAttribute("aria-expanded")`)).toBe("false");

    // By keyboard: to the button, Enter.
    await tabTo(phone, `el.matches(".top .people-toggle")`);
    await phone.press("Enter");
    await until(phone, `document.querySelector(".people.open")`);
    expect(await shown(".people")).toBe(true);
    expect(await phone.evaluate(`document.querySelector(".top .people-toggle").getAttribute("aria-expanded")`)).toBe("true");
    // Over the feed, within the screen, with everyone in it and the focus inside.
    const box = await phone.evaluate<{ position: string; left: number; right: number; width: number }>(`(() => {
      const el = document.querySelector(".people"); const r = el.getBoundingClientRect();
      return { position: getComputedStyle(el).position, left: r.left, right: r.right, width: r.width };
    })()`);
    expect(box.position).toBe("fixed");
    expect(box.right).toBeLessThanOrEqual(390);
    expect(box.left).toBeGreaterThanOrEqual(0);
    expect(box.width).toBeGreaterThan(150);
    const names = await phone.evaluate<string[]>(`[...document.querySelectorAll(".people li .label")].map((l) => l.textContent)`);
    expect(names).toEqual(expect.arrayContaining(["Desdemona", "King Hamlet", "Othello, the Moor of Venice"]));
    await until(phone, `document.querySelector(".people").contains(document.activeElement)`);

    await phone.press("Escape");
    await until(phone, `!document.querySelector(".people.open")`);
    expect(await shown(".people")).toBe(false);
    expect(await focused(phone, ".top .people-toggle")).toBe(true);

    // A click elsewhere puts it away.
    await phone.press("Enter");
    await until(phone, `document.querySelector(".people.open")`);
    await phone.evaluate(`document.querySelector("main").dispatchEvent(new MouseEvent("mousedown", { bubbles: true }))`);
    await until(phone, `!document.querySelector(".people.open")`);

    // Choosing someone opens their card and puts the list away.
    await phone.evaluate(`document.querySelector(".top .people-toggle").focus()`);
    await phone.press("Enter");
    await until(phone, `document.querySelector(".people.open")`);
    await phone.evaluate(`[...document.querySelectorAll(".people li a")].find((a) => a.textContent.includes("Desdemona")).click()`);
    await until(phone, `document.querySelector(".profile-card .profile-name")?.textContent === "Desdemona" && !document.querySelector(".people.open")`);
    expect(phone.errors()).toEqual([]);
    await phone.close();
  }, 60_000);
});
