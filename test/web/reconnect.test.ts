/**
 * The web client while the server is away: a visible "Reconnecting…" while its polls
 * fail (retried with backoff), and live again once the server is back on the same data
 * folder (the session and the event queue survive a graceful restart).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { PASSWORD, startTestServer, type TestServer } from "../kit";
import { launchChromium, type Browser, type Page } from "../kit/browser";
import { startServer, type RunningServer } from "../../src/server";

let s: TestServer;
let restarted: RunningServer | null = null;
let browser: Browser;
let page: Page;
let denmark: number;

async function until(expression: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await page.evaluate(expression).catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for: ${expression}`);
    await Bun.sleep(50);
  }
}

beforeAll(async () => {
  s = await startTestServer();
  denmark = await s.createChannel("desdemona", "Denmark", ["hamlet", "desdemona"]);
  browser = await launchChromium();
  page = await browser.newPage({ ownCookies: true });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await restarted?.stop();
  await s?.stop().catch(() => {});
});

test("the page says it is reconnecting while the server is down, and carries on when it is back", async () => {
  await page.goto(`${s.url}/`);
  await page.evaluate(`(() => {
    document.getElementById("username").value = ${JSON.stringify(s.users.hamlet.email)};
    document.getElementById("password").value = ${JSON.stringify(PASSWORD)};
    document.querySelector("form").requestSubmit();
  })()`);
  await until(`location.pathname === "/" && document.querySelector(".sidebar .channels")`);
  expect(await page.evaluate(`!!document.querySelector(".banner")`)).toBe(false);

  await s.server.stop();
  await until(`document.querySelector(".banner")?.textContent === "Reconnecting…"`);

  restarted = await startServer({ dataDir: s.dataDir, host: "127.0.0.1", port: s.server.port, externalUrl: null });
  await until(`!document.querySelector(".banner")`, 40_000);
  // Live again: a message sent now appears.
  await page.evaluate(`location.hash = "#narrow/channel/${denmark}-Denmark"`);
  await until(`document.querySelector(".view-title").textContent === "#Denmark"`);
  const sent = await fetch(`${s.url}/api/v1/messages`, {
    method: "POST",
    headers: { authorization: `Basic ${btoa(`${s.users.desdemona.email}:${s.users.desdemona.apiKey}`)}` },
    body: new URLSearchParams({ type: "stream", to: String(denmark), topic: "back", content: "We are back." }),
  });
  expect(sent.status).toBe(200);
  await until(`[...document.querySelectorAll("article.msg .rendered")].some((r) => r.textContent.includes("We are back."))`);
}, 90_000);
