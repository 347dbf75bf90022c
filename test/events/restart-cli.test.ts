/**
 * The real binary path: `hearth serve` stopped by SIGTERM keeps its queues; killed
 * with SIGKILL (a crash) it loses them, and clients get BAD_EVENT_QUEUE_ID.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApiClient, expectError, expectSuccess } from "../kit";
import { drainEvents, register } from "../kit/events";

const dataDir = mkdtempSync(join(tmpdir(), "hearth-cli-restart-"));
const main = join(import.meta.dir, "../../src/main.ts");
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Starts `hearth serve` on a free port (port 0) and reads the URL it prints. */
async function serve() {
  const proc = Bun.spawn([process.execPath, main, "serve", "--data", dataDir, "--port", "0", "--host", "127.0.0.1"], {
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = proc.stdout.getReader();
  let text = "";
  const deadline = Date.now() + 10000;
  while (Date.now() < deadline) {
    const match = /listening on (http:\/\/\S+)/.exec(text);
    if (match) {
      reader.releaseLock();
      return { proc, url: match[1] };
    }
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  proc.kill("SIGKILL");
  throw new Error(`hearth serve did not start: ${text}`);
}

test("SIGTERM keeps queues across a restart; SIGKILL loses them", async () => {
  const init = Bun.spawnSync([process.execPath, main, "init", "--data", dataDir, "--realm-name", "Restart", "--owner-email", "owner@restart.test", "--owner-password", "restart-password", "--json"]);
  const owner = JSON.parse(init.stdout.toString());

  let server = await serve();
  let client = new ApiClient(server.url, owner.email, owner.api_key);
  const { queue_id } = await register(client, { event_types: ["user_settings"] });
  expectSuccess(await client.patch("/settings", { enter_sends: true }));
  server.proc.kill("SIGTERM");
  expect(await server.proc.exited).toBe(0);

  server = await serve();
  client = new ApiClient(server.url, owner.email, owner.api_key);
  expect((await drainEvents(client, queue_id)).map((e) => e.property)).toEqual(["enter_sends"]);
  server.proc.kill("SIGKILL");
  await server.proc.exited;

  server = await serve();
  try {
    client = new ApiClient(server.url, owner.email, owner.api_key);
    const res = await client.get("/events", { queue_id, dont_block: true });
    expectError(res, 400, "BAD_EVENT_QUEUE_ID", `Bad event queue ID: ${queue_id}`);
  } finally {
    server.proc.kill("SIGTERM");
    await server.proc.exited;
  }
}, 30000);
