/**
 * src/lib/startup_pages.ts: the executable's read-only pages a process gave back leave
 * its RSS, and the process goes on running the code they held.
 */
import { expect, test } from "bun:test";

test("the executable's read-only pages leave the RSS, and the process still runs", async () => {
  if (process.platform !== "linux") return;
  const child = Bun.spawn([process.execPath, new URL("../fixtures/release-startup-pages.ts", import.meta.url).pathname], { stdout: "pipe", stderr: "inherit" });
  const out = await new Response(child.stdout).text();
  expect(await child.exited).toBe(0);
  const { before, released, after } = JSON.parse(out.trim().split("\n").pop()!) as { before: number; released: number; after: number };
  // The runtime's code a started server has run is megabytes (tens of them for Hearth).
  expect(released).toBeGreaterThan(1024);
  expect(after).toBeLessThan(before - 1024);
});
