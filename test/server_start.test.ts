/** Starting the server in-process: a failed start must leave the data folder usable. */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServer } from "../src/server";
import { Store } from "../src/store/db";
import { doInitRealm } from "../src/actions/realm";

test("a start that fails (port in use) unlocks the data folder for the next start", async () => {
  const blocker = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-start-"));
  try {
    const store = new Store(dataDir);
    await doInitRealm(store, { realmName: "Start", ownerEmail: "owner@start.test", ownerPassword: "pw-long-enough", ownerFullName: "Owner", externalUrl: null });
    await store.close();
    await expect(startServer({ dataDir, host: "127.0.0.1", port: blocker.port!, externalUrl: null })).rejects.toThrow("already in use");
    const server = await startServer({ dataDir, host: "127.0.0.1", port: 0, externalUrl: null });
    expect((await fetch(`${server.url}/api/v1/server_settings`)).status).toBe(200);
    await server.stop();
  } finally {
    blocker.stop(true);
    rmSync(dataDir, { recursive: true, force: true });
  }
});
