/** Every write that returned success survives kill -9. */
import { expect, test } from "bun:test";
import { auth, freePort, hearth, startServe, tempDir } from "./process";

test("users created before kill -9 are all there after a restart", async () => {
  const data = tempDir();
  const init = await hearth(["init", "--data", data, "--realm-name", "D", "--owner-email", "o@d.test", "--owner-password", "secret1", "--json"]);
  const owner = JSON.parse(init.stdout);
  const first = await startServe(["--data", data, "--port", String(freePort())]);
  const created: number[] = [];
  try {
    const responses = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        fetch(`${first.url}/api/v1/users`, {
          method: "POST",
          headers: { ...auth(owner.email, owner.api_key), "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ email: `u${i}@d.test`, password: "pw", full_name: `User ${i}` }),
        }).then((r) => r.json()),
      ),
    );
    for (const r of responses) {
      expect(r.result).toBe("success");
      created.push(r.user_id);
    }
  } finally {
    first.proc.kill("SIGKILL");
    await first.proc.exited;
  }
  // The pid file of the killed process is stale; the restart must take the folder over.
  const second = await startServe(["--data", data, "--port", String(freePort())]);
  try {
    const users = await (await fetch(`${second.url}/api/v1/users`, { headers: auth(owner.email, owner.api_key) })).json();
    const ids = users.members.map((m: any) => m.user_id);
    for (const id of created) expect(ids).toContain(id);
  } finally {
    second.proc.kill("SIGTERM");
    await second.proc.exited;
  }
});
