/** Every write that returned success survives kill -9. */
import { expect, test } from "bun:test";
import { auth, freePort, hearth, startServe, tempDir } from "./kit/process";

/** A data folder with an organization and its owner. */
async function initFolder() {
  const data = tempDir();
  const init = await hearth(["init", "--data", data, "--realm-name", "D", "--owner-email", "o@d.test", "--owner-password", "secret1", "--json"]);
  return { data, owner: JSON.parse(init.stdout) as { email: string; api_key: string } };
}

/** Writes through one server, kills it with SIGKILL, then checks through a new one on the same folder. */
async function acrossKill9(data: string, write: (url: string) => Promise<void>, check: (url: string) => Promise<void>, env: Record<string, string> = {}) {
  const first = await startServe(["--data", data, "--port", String(freePort())], env);
  try {
    await write(first.url);
  } finally {
    first.proc.kill("SIGKILL");
    await first.proc.exited;
  }
  // The pid file of the killed process is stale; the restart must take the folder over.
  const second = await startServe(["--data", data, "--port", String(freePort())], env);
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
          fetch(`${url}/api/v1/users`, form(owner.email, owner.api_key, { email: `u${i}@d.test`, password: "pw-long-enough", full_name: `User ${i}` })).then((r) => r.json()),
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
      const created = await (await fetch(`${url}/api/v1/users`, form(owner.email, owner.api_key, { email: member.email, password: "pw-long-enough", full_name: "Member" }))).json();
      const key = await (await fetch(`${url}/api/v1/fetch_api_key`, form(member.email, "", { username: member.email, password: "pw-long-enough" }))).json();
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

test("an outgoing-webhook call the bot's server had not answered before kill -9 is made after the restart", async () => {
  const { data, owner } = await initFolder();
  // The bot's server (here, on loopback) holds the first call open; it never answers it.
  let calls = 0;
  const received: string[] = [];
  const botServer = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      calls++;
      received.push(JSON.parse(await request.text()).data);
      return calls === 1 ? new Promise<Response>(() => {}) : new Response(JSON.stringify({ content: "made it" }));
    },
  });
  let bot = { id: 0 };
  const dmNarrow = () => encodeURIComponent(JSON.stringify([{ operator: "dm", operand: [bot.id] }]));
  try {
    await acrossKill9(
      data,
      async (url) => {
        const created = await (await fetch(`${url}/api/v1/bots`, form(owner.email, owner.api_key, { full_name: "Kept bot", short_name: "kept", bot_type: "3", payload_url: JSON.stringify(`http://127.0.0.1:${botServer.port}/`) }))).json();
        bot = { id: created.user_id };
        const sent = await (await fetch(`${url}/api/v1/messages`, form(owner.email, owner.api_key, { type: "direct", to: JSON.stringify([bot.id]), content: "ping before the crash" }))).json();
        expect(sent.result).toBe("success");
        while (calls === 0) await Bun.sleep(5);
      },
      async (url) => {
        const deadline = Date.now() + 10_000;
        let contents: string[] = [];
        while (Date.now() < deadline) {
          const page = await (await fetch(`${url}/api/v1/messages?anchor=newest&num_before=5&num_after=0&apply_markdown=false&narrow=${dmNarrow()}`, { headers: auth(owner.email, owner.api_key) })).json();
          contents = page.messages.map((m: any) => m.content);
          if (contents.includes("made it")) break;
          await Bun.sleep(20);
        }
        expect(contents).toEqual(["ping before the crash", "made it"]);
        expect(received).toEqual(["ping before the crash", "ping before the crash"]);
      },
      { HEARTH_OUTGOING_WEBHOOKS_TO_PRIVATE_NETWORKS: "allow" },
    );
  } finally {
    botServer.stop(true);
  }
});

test("a message whose event reached a client is there after a kill -9 that came as the event arrived", async () => {
  const { data, owner } = await initFolder();
  let seenId = 0;
  await acrossKill9(
    data,
    async (url) => {
      const queue = await (await fetch(`${url}/api/v1/register`, form(owner.email, owner.api_key, { event_types: JSON.stringify(["message"]) }))).json();
      const poll = fetch(`${url}/api/v1/events?queue_id=${queue.queue_id}&last_event_id=${queue.last_event_id}`, { headers: auth(owner.email, owner.api_key) });
      // Events go out once the message is visible to readers, before its fsync and so
      // before the sender's answer: the kill below may come before that answer.
      void fetch(`${url}/api/v1/messages`, form(owner.email, owner.api_key, { type: "stream", to: "general", topic: "t", content: "seen before the answer" })).catch(() => null);
      const events = (await (await poll).json()).events as any[];
      seenId = events.find((event) => event.type === "message").message.id;
    },
    async (url) => {
      const stored = await (await fetch(`${url}/api/v1/messages/${seenId}?apply_markdown=false`, { headers: auth(owner.email, owner.api_key) })).json();
      expect(stored.result).toBe("success");
      expect(stored.message.content).toBe("seen before the answer");
    },
  );
});
