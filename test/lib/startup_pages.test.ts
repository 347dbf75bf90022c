/**
 * src/lib/startup_pages.ts: the executable's read-only pages a process gave back leave
 * its RSS, and the process goes on running the code they held.
 */
import { expect, test } from "bun:test";
import { START_JIT_HOLD_MS, settleStart } from "../../src/lib/startup_pages";

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

test("the start settles only once its backlog is written, and a failed backlog does not fail it", async () => {
  let writeBacklog!: () => void;
  let settled = false;
  const settling = settleStart(new Promise<void>((resolve) => (writeBacklog = resolve)), true).then((released) => {
    settled = true;
    return released;
  });
  // Past the JIT's hold: the policy is back to normal, but the pages wait for the backlog.
  await Bun.sleep(START_JIT_HOLD_MS + 100);
  expect(settled).toBe(false);
  writeBacklog();
  // Pages kept (the test runner's own): nothing given back.
  expect(await settling).toBe(0);

  const logged: unknown[] = [];
  const error = console.error;
  console.error = (...args: unknown[]) => void logged.push(args);
  try {
    expect(await settleStart(Promise.reject(new Error("store closed")), true)).toBe(0);
  } finally {
    console.error = error;
  }
  expect(String((logged[0] as unknown[])[1])).toContain("store closed");
});
