/**
 * The web client's compose box and message actions, in headless Chromium against a
 * real server, signed in through the real /login form: typeahead for people, groups,
 * channels, topics and emoji; drafts kept across a reload and dropped when sent; the
 * Markdown preview; a file dropped into the box uploaded through tus; quote and reply,
 * mark unread from here, and moving a topic. The page logs no error.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, PASSWORD, startTestServer, type TestServer } from "../kit";
import { type Browser, hoverRow, launchChromium, type Page, rowOf, signInToChat, until } from "../kit/browser";

let s: TestServer;
let browser: Browser;
let hamlet: Page;
let denmark: number;
let horatios: number[];


const BOX = ".compose textarea[name=content]";
/** Types into the message box as a user would: the text, the caret at its end, the input event. */
const typeInBox = (page: Page, text: string) =>
  page.evaluate(`(() => {
    const field = document.querySelector(${JSON.stringify(BOX)});
    field.focus();
    field.value = ${JSON.stringify(text)};
    field.setSelectionRange(field.value.length, field.value.length);
    field.dispatchEvent(new Event("input", { bubbles: true }));
  })()`);
const press = (page: Page, key: string) =>
  page.evaluate(`document.querySelector(${JSON.stringify(BOX)}).dispatchEvent(new KeyboardEvent("keydown", { key: ${JSON.stringify(key)}, bubbles: true, cancelable: true }))`);
const boxValue = (page: Page) => page.evaluate<string>(`document.querySelector(${JSON.stringify(BOX)}).value`);
const suggestions = (page: Page) => page.evaluate<string[]>(`[...document.querySelectorAll(".typeahead li .ta-label")].map((li) => li.textContent)`);

const signIn = (page: Page, email: string, password = PASSWORD) => signInToChat(page, s.url, email, password);

const topicHash = (topic: string) => `#narrow/channel/${denmark}-Denmark/topic/${encodeURIComponent(topic).replace(/\./g, "%2E").replace(/%/g, ".")}`;
async function openTopic(page: Page, topic: string): Promise<void> {
  await page.evaluate(`location.hash = ${JSON.stringify(topicHash(topic))}`);
  await until(page, `document.querySelector(".compose input[name=topic]")?.value === ${JSON.stringify(topic)}`);
}

beforeAll(async () => {
  s = await startTestServer();
  denmark = await s.createChannel("desdemona", "Denmark", ["hamlet", "desdemona", "othello"]);
  expectSuccess(await s.as("desdemona").post("/messages", { type: "stream", to: denmark, topic: "castle walls", content: "The walls need mending." }));
  expectSuccess(await s.as("desdemona").post("/user_groups/create", { name: "Players", description: "The travelling players", members: [s.users.othello.id] }));
  horatios = [(await s.createUser("Horatio")).id, (await s.createUser("horatio2")).id];
  expectSuccess(await s.as("desdemona").patch(`/users/${horatios[1]}`, { full_name: "Horatio" }));
  browser = await launchChromium();
  hamlet = await browser.newPage({ ownCookies: true });
  await signIn(hamlet, s.users.hamlet.email);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

describe("web compose box", () => {
  test("typeahead completes people, groups, channels, topics and emoji with the keyboard, and the server renders them", async () => {
    await openTopic(hamlet, "plans");

    await typeInBox(hamlet, "Ask @desd");
    await until(hamlet, `document.querySelector(".typeahead")`);
    expect(await suggestions(hamlet)).toEqual(["Desdemona"]);
    await press(hamlet, "Tab");
    expect(await boxValue(hamlet)).toBe("Ask @**Desdemona** ");
    expect(await hamlet.evaluate(`!document.querySelector(".typeahead")`)).toBe(true);

    // Two people of one name are told apart by ID.
    await typeInBox(hamlet, "Ask @**Desdemona** and @horat");
    await until(hamlet, `document.querySelectorAll(".typeahead li").length === 2`);
    expect(await suggestions(hamlet)).toEqual(["Horatio", "Horatio"]);
    await press(hamlet, "ArrowDown");
    await press(hamlet, "Tab");
    expect(horatios.map((id) => `Ask @**Desdemona** and @**Horatio|${id}** `)).toContain(await boxValue(hamlet));

    await typeInBox(hamlet, "Ask @**Desdemona** and @play");
    await until(hamlet, `[...document.querySelectorAll(".typeahead li")].some((li) => li.textContent.includes("Players"))`);
    expect(await suggestions(hamlet)).toContain("Players");
    // Arrows move through the list; Escape closes it and leaves the text alone.
    await press(hamlet, "Escape");
    expect(await hamlet.evaluate(`!document.querySelector(".typeahead")`)).toBe(true);
    expect(await boxValue(hamlet)).toBe("Ask @**Desdemona** and @play");
    await typeInBox(hamlet, "Ask @**Desdemona** and @Play");
    await until(hamlet, `document.querySelector(".typeahead")`);
    const players = (await suggestions(hamlet)).indexOf("Players");
    for (let i = 0; i < players; i++) await press(hamlet, "ArrowDown");
    await press(hamlet, "Enter");
    expect(await boxValue(hamlet)).toBe("Ask @**Desdemona** and @*Players* ");

    await typeInBox(hamlet, "Ask @**Desdemona** and @*Players* in #Den");
    await until(hamlet, `document.querySelector(".typeahead")`);
    expect(await suggestions(hamlet)).toEqual(["#Denmark"]);
    await press(hamlet, "Enter");
    await typeInBox(hamlet, (await boxValue(hamlet)).trimEnd().replace(/\*\*$/, ">cas"));
    await until(hamlet, `document.querySelector(".typeahead")`);
    expect(await suggestions(hamlet)).toEqual(["#Denmark › castle walls"]);
    await press(hamlet, "Enter");
    await typeInBox(hamlet, `${await boxValue(hamlet)}:thumbs_u`);
    await until(hamlet, `document.querySelector(".typeahead")`);
    expect(await suggestions(hamlet)).toEqual([":thumbs_up:"]);
    await press(hamlet, "Tab");
    const text = "Ask @**Desdemona** and @*Players* in #**Denmark>castle walls** :thumbs_up: ";
    expect(await boxValue(hamlet)).toBe(text);

    // With the list closed, Enter sends; the server turns the syntax into mentions and links.
    await press(hamlet, "Enter");
    const row = await until<string>(hamlet, `${rowOf("Ask")}?.querySelector(".rendered").innerHTML`);
    expect(row).toContain(`class="user-mention"`);
    expect(row).toContain(`class="user-group-mention"`);
    expect(row).toContain(`class="stream-topic"`);
    await until(hamlet, `document.querySelector(${JSON.stringify(BOX)}).value === ""`);
    expect(hamlet.errors()).toEqual([]);
  }, 60_000);

  test("a draft survives a reload, each conversation keeps its own, and sending deletes it", async () => {
    const drafts = async () => expectSuccess(await s.as("hamlet").get("/drafts")).drafts as { content: string; topic: string; to: number[] }[];
    await openTopic(hamlet, "drafty");
    await typeInBox(hamlet, "Half a thought");
    const deadline = Date.now() + 10_000;
    while (!(await drafts()).some((d) => d.content === "Half a thought")) {
      if (Date.now() > deadline) throw new Error("the draft was not saved");
      await Bun.sleep(100);
    }
    expect((await drafts()).find((d) => d.content === "Half a thought")).toMatchObject({ topic: "drafty", to: [denmark] });

    // The old page is marked, so that the check cannot pass on it before it unloads.
    await hamlet.evaluate(`window.oldPage = true; location.reload()`);
    await until(hamlet, `!window.oldPage && document.querySelector(${JSON.stringify(BOX)})?.value === "Half a thought"`);
    // Another conversation has an empty box; coming back brings the draft again.
    await openTopic(hamlet, "elsewhere");
    await until(hamlet, `document.querySelector(${JSON.stringify(BOX)}).value === ""`);
    await openTopic(hamlet, "drafty");
    await until(hamlet, `document.querySelector(${JSON.stringify(BOX)}).value === "Half a thought"`);

    // Text typed just before a reload is saved as the page goes.
    await typeInBox(hamlet, "Half a thought, and more");
    await hamlet.evaluate(`window.oldPage = true; location.reload()`);
    await until(hamlet, `!window.oldPage && document.querySelector(${JSON.stringify(BOX)})?.value === "Half a thought, and more"`);
    // The page's last save is a keepalive request: it may commit a moment after the new page shows the text.
    for (const until = Date.now() + 10_000; Date.now() < until && (await drafts())[0]?.content !== "Half a thought, and more"; ) await Bun.sleep(100);
    expect((await drafts()).map((d) => d.content)).toEqual(["Half a thought, and more"]);

    await typeInBox(hamlet, "Half a thought, finished.");
    await press(hamlet, "Enter");
    await until(hamlet, rowOf("Half a thought, finished."));
    const gone = Date.now() + 10_000;
    while ((await drafts()).length) {
      if (Date.now() > gone) throw new Error(`the draft was not deleted: ${JSON.stringify(await drafts())}`);
      await Bun.sleep(100);
    }
    expect(hamlet.errors()).toEqual([]);
  }, 60_000);

  test("the preview shows the server's rendering; a file dropped or pasted into the box is uploaded and linked", async () => {
    await openTopic(hamlet, "previews");
    await typeInBox(hamlet, "Some **bold** words");
    await hamlet.evaluate(`document.querySelector(".compose .preview-toggle").click()`);
    expect(await until<string>(hamlet, `document.querySelector(".compose-preview strong")?.textContent`)).toBe("bold");
    expect(await hamlet.evaluate(`document.querySelector(${JSON.stringify(BOX)}).hidden`)).toBe(true);
    await hamlet.evaluate(`document.querySelector(".compose .preview-toggle").click()`);
    await until(hamlet, `!document.querySelector(".compose-preview") && !document.querySelector(${JSON.stringify(BOX)}).hidden`);
    expect(await boxValue(hamlet)).toBe("Some **bold** words");

    await typeInBox(hamlet, "");
    await hamlet.evaluate(`(() => {
      const files = new DataTransfer();
      files.items.add(new File(["minutes of the meeting"], "minutes.txt", { type: "text/plain" }));
      document.querySelector(".compose").dispatchEvent(new DragEvent("drop", { dataTransfer: files, bubbles: true, cancelable: true }));
    })()`);
    await until(hamlet, `document.querySelector(${JSON.stringify(BOX)}).value.includes("[minutes.txt](/user_uploads/")`);
    await hamlet.evaluate(`(() => {
      const files = new DataTransfer();
      files.items.add(new File(["a pasted note"], "pasted.txt", { type: "text/plain" }));
      document.querySelector(${JSON.stringify(BOX)}).dispatchEvent(new ClipboardEvent("paste", { clipboardData: files, bubbles: true, cancelable: true }));
    })()`);
    await until(hamlet, `document.querySelector(${JSON.stringify(BOX)}).value.includes("[pasted.txt](/user_uploads/")`);
    const url = /\[minutes\.txt\]\((\/user_uploads\/[^)]+)\)/.exec(await boxValue(hamlet))![1];
    const { hearth_session } = await hamlet.cookies();
    const file = await fetch(`${s.url}${url}`, { headers: { cookie: `hearth_session=${hearth_session}` } });
    expect(await file.text()).toBe("minutes of the meeting");
    await typeInBox(hamlet, "");
    expect(hamlet.errors()).toEqual([]);
  }, 60_000);

  test("message actions: mark unread from here, quote and reply, move a topic", async () => {
    const desdemona = s.as("desdemona");
    const first = expectSuccess(await desdemona.post("/messages", { type: "stream", to: denmark, topic: "old news", content: "First report" })).id as number;
    const second = expectSuccess(await desdemona.post("/messages", { type: "stream", to: denmark, topic: "old news", content: "Second report" })).id as number;
    const flagsOf = async (topic: string) =>
      expectSuccess(await s.as("hamlet").get("/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow: JSON.stringify([{ operator: "channel", operand: denmark }, { operator: "topic", operand: topic }]) })).messages.map((m: any) => ({ id: m.id, read: m.flags.includes("read") }));
    const serverSays = async (topic: string, check: (ms: { id: number; read: boolean }[]) => boolean) => {
      const deadline = Date.now() + 10_000;
      while (!check(await flagsOf(topic))) {
        if (Date.now() > deadline) throw new Error(`unexpected flags: ${JSON.stringify(await flagsOf(topic))}`);
        await Bun.sleep(100);
      }
    };

    // Reading the topic marks both read; "mark unread from here" on the first makes both unread again, and they stay so.
    await openTopic(hamlet, "old news");
    await until(hamlet, rowOf("Second report"));
    await serverSays("old news", (ms) => ms.length === 2 && ms.every((m) => m.read));
    await hoverRow(hamlet, rowOf("First report"));
    await hamlet.evaluate(`${rowOf("First report")}.querySelector(".act-unread").click()`);
    await serverSays("old news", (ms) => ms.every((m) => !m.read));
    await until(hamlet, `${rowOf("First report")}.classList.contains("unread") && ${rowOf("Second report")}.classList.contains("unread")`);
    await Bun.sleep(600);
    expect(await hamlet.evaluate(`${rowOf("Second report")}.classList.contains("unread")`)).toBe(true);
    expect((await flagsOf("old news")).every((m: { read: boolean }) => !m.read)).toBe(true);

    // Quote and reply puts Zulip's quote block, with a link to the message, into the box.
    await hoverRow(hamlet, rowOf("Second report"));
    await hamlet.evaluate(`${rowOf("Second report")}.querySelector(".act-quote").click()`);
    const quote = `@_**Desdemona|${s.users.desdemona.id}** [said](${s.url}/#narrow/channel/${denmark}-Denmark/topic/old.20news/near/${second}):\n\`\`\`quote\nSecond report\n\`\`\`\n`;
    await until(hamlet, `document.querySelector(${JSON.stringify(BOX)}).value === ${JSON.stringify(quote)}`);
    await typeInBox(hamlet, `${quote}Old, but true.`);
    await press(hamlet, "Enter");
    const reply = await until<string>(hamlet, `${rowOf("Old, but true.")}?.querySelector(".rendered").innerHTML`);
    expect(reply).toContain("<blockquote>");
    expect(reply).toContain("Second report");
    expect(reply).toContain(`class="user-mention silent"`);

    // Moving the topic from the first message takes the whole topic along.
    await hoverRow(hamlet, rowOf("First report"));
    await hamlet.evaluate(`${rowOf("First report")}.querySelector(".act-move").click()`);
    await until(hamlet, `${rowOf("First report")}.querySelector(".move-form")`);
    await hamlet.evaluate(`(() => {
      const field = ${rowOf("First report")}.querySelector(".move-form input[name=new-topic]");
      field.value = "new news";
      field.dispatchEvent(new Event("input", { bubbles: true }));
      field.form.requestSubmit();
    })()`);
    // (the reply went along, and the server may add a notice that the topic moved)
    await serverSays("new news", (ms) => ms.length >= 3);
    expect((await flagsOf("new news")).map((m: { id: number }) => m.id).slice(0, 2)).toEqual([first, second]);
    expect(await flagsOf("old news")).toEqual([]);
    expect(hamlet.errors()).toEqual([]);
  }, 60_000);
});
