/**
 * Pictures of the web client for the README: a server with a little conversation in
 * it, a member signed in through /login in headless Chromium, and the main views at
 * desktop and phone width, light and dark, written to docs/screenshots/.
 *
 * Usage: bun scripts/screenshots.ts
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { PASSWORD, startTestServer } from "../test/kit";
import { launchChromium, signInToChat, until } from "../test/kit/browser";

const OUT = resolve(import.meta.dir, "..", "docs", "screenshots");


const s = await startTestServer();
const browser = await launchChromium();
try {
  const denmark = await s.createChannel("desdemona", "Denmark", ["hamlet", "desdemona", "othello", "cordelia", "iago"]);
  const venice = await s.createChannel("desdemona", "Venice", ["hamlet", "desdemona", "othello"]);
  await s.createChannel("desdemona", "design", ["hamlet", "desdemona"]);
  const say = async (who: "hamlet" | "desdemona" | "othello" | "cordelia" | "iago", to: number, topic: string, content: string) =>
    (await s.as(who).post("/messages", { type: "stream", to, topic, content })).body.id as number;
  await say("othello", venice, "the fleet", "The Turkish fleet is scattered; the storm did our work.");
  await say("desdemona", denmark, "release plan", "Morning all! Where are we with **1.0**?");
  await say("othello", denmark, "release plan", "Builds are green on x64 and arm64.\n\n```sh\nnpm run build\n```");
  const q = await say("cordelia", denmark, "release plan", "> Builds are green\n\nLovely. I'll write the notes today :tada:");
  await say("iago", denmark, "release plan", "@**King Hamlet** can you check the upgrade path from 0.9?");
  await s.as("desdemona").post(`/messages/${q}/reactions`, { emoji_name: "heart" });
  await s.as("othello").post(`/messages/${q}/reactions`, { emoji_name: "heart" });
  await s.as("iago").post(`/messages/${q}/reactions`, { emoji_name: "thumbs_up" });
  await say("cordelia", denmark, "✔ broken avatar upload", "Fixed in the last build.");
  await say("othello", denmark, "offsite", "Who is coming to the offsite on Friday?");
  await s.as("desdemona").post("/messages", { type: "direct", to: [s.users.hamlet.id], content: "Got a minute for the review later?" });

  const page = await browser.newPage({ ownCookies: true });
  await page.emulate({ width: 1280, height: 800 });
  await signInToChat(page, s.url, s.users.hamlet.email, PASSWORD);
  mkdirSync(OUT, { recursive: true });
  const shoot = async (name: string, hash: string, width: number, height: number, dark: boolean, before = "") => {
    await page.emulate({ width, height, dark });
    await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
    await until(page, `!document.querySelector(".loading") && (document.querySelector("article.msg") || document.querySelector(".recent tr"))`);
    if (before) await page.evaluate(before);
    await Bun.sleep(400);
    writeFileSync(join(OUT, `${name}.png`), await page.screenshot());
    console.log(`docs/screenshots/${name}.png`);
  };
  const topic = `#narrow/channel/${denmark}-Denmark/topic/release.20plan`;
  await shoot("chat-desktop-light", topic, 1280, 800, false);
  await shoot("chat-desktop-dark", topic, 1280, 800, true);
  await shoot("recent-desktop-light", "#recent", 1280, 800, false);
  await shoot("chat-phone-light", topic, 390, 780, false);
  await shoot("chat-phone-dark", topic, 390, 780, true);
  await shoot("sidebar-phone-dark", topic, 390, 780, true, `document.querySelector(".menu").click()`);
} finally {
  await browser.close();
  await s.stop();
}
// A script, not a server: whatever handle the browser's pipes or the stopped server
// leave open must not keep it running once the pictures are written.
process.exit(0);
