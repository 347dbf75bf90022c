/** Every write that returned success survives kill -9. */
import { expect, test } from "bun:test";
import { auth, freePort, hearth, startServe, tempDir } from "./process";

/** A data folder with an organization and its owner. */
async function initFolder() {
  const data = tempDir();
  const init = await hearth(["init", "--data", data, "--realm-name", "D", "--owner-email", "o@d.test", "--owner-password", "secret1", "--json"]);
  return { data, owner: JSON.parse(init.stdout) as { email: string; api_key: string } };
}

/** Writes through one server, kills it with SIGKILL, then checks through a new one on the same folder. */
async function acrossKill9(data: string, write: (url: string) => Promise<void>, check: (url: string) => Promise<void>) {
  const first = await startServe(["--data", data, "--port", String(freePort())]);
  try {
    await write(first.url);
  } finally {
    first.proc.kill("SIGKILL");
    await first.proc.exited;
  }
  // The pid file of the killed process is stale; the restart must take the folder over.
  const second = await startServe(["--data", data, "--port", String(freePort())]);
  try {
    await check(second.url);
  } finally {
    second.proc.kill("SIGTERM");
    await second.proc.exited;
  }
}

const form = (email: string, key: string, params: Record<string, string>) => ({
  method: "POST",
  headers: { ...auth(email, key), "content-type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(params),
});

test("users created before kill -9 are all there after a restart", async () => {
  const { data, owner } = await initFolder();
  const created: number[] = [];
  await acrossKill9(
    data,
    async (url) => {
      const responses = await Promise.all(
        Array.from({ length: 25 }, (_, i) =>
          fetch(`${url}/api/v1/users`, form(owner.email, owner.api_key, { email: `u${i}@d.test`, password: "pw", full_name: `User ${i}` })).then((r) => r.json()),
        ),
      );
      for (const r of responses) {
        expect(r.result).toBe("success");
        created.push(r.user_id);
      }
    },
    async (url) => {
      const users = await (await fetch(`${url}/api/v1/users`, { headers: auth(owner.email, owner.api_key) })).json();
      const ids = users.members.map((m: any) => m.user_id);
      for (const id of created) expect(ids).toContain(id);
    },
  );
});

test("messages sent before kill -9 are there after a restart, unread for their recipients", async () => {
  const { data, owner } = await initFolder();
  let member = { email: "m@d.test", key: "" };
  const sent: number[] = [];
  await acrossKill9(
    data,
    async (url) => {
      const created = await (await fetch(`${url}/api/v1/users`, form(owner.email, owner.api_key, { email: member.email, password: "pw", full_name: "Member" }))).json();
      const key = await (await fetch(`${url}/api/v1/fetch_api_key`, form(member.email, "", { username: member.email, password: "pw" }))).json();
      member = { ...member, key: key.api_key };
      // The new account's welcome message from Welcome Bot is unread too.
      const dms = encodeURIComponent(JSON.stringify([{ operator: "is", operand: "dm" }]));
      const welcome = await (await fetch(`${url}/api/v1/messages?anchor=newest&num_before=10&num_after=0&narrow=${dms}`, { headers: auth(member.email, member.key) })).json();
      expect(welcome.messages).toHaveLength(1);
      sent.push(welcome.messages[0].id);
      const subscriptions = { subscriptions: JSON.stringify([{ name: "general" }]), principals: JSON.stringify([created.user_id]) };
      expect((await (await fetch(`${url}/api/v1/users/me/subscriptions`, form(owner.email, owner.api_key, subscriptions))).json()).result).toBe("success");
      const send = (i: number) =>
        fetch(`${url}/api/v1/messages`, form(owner.email, owner.api_key, { type: "stream", to: "general", topic: "t", content: `message ${i}` })).then((r) => r.json());
      // One at a time (each commits alone, synchronously), then a burst (batched commits).
      for (let i = 0; i < 5; i++) sent.push((await send(i)).id);
      for (const r of await Promise.all(Array.from({ length: 20 }, (_, i) => send(5 + i)))) {
        expect(r.result).toBe("success");
        sent.push(r.id);
      }
    },
    async (url) => {
      const narrow = encodeURIComponent(JSON.stringify([{ operator: "is", operand: "unread" }]));
      const unread = await (await fetch(`${url}/api/v1/messages?anchor=newest&num_before=100&num_after=0&narrow=${narrow}`, { headers: auth(member.email, member.key) })).json();
      expect(unread.messages.map((m: any) => m.id).sort((a: number, b: number) => a - b)).toEqual([...sent].sort((a, b) => a - b));
    },
  );
});
