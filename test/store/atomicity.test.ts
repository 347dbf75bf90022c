/**
 * All-or-nothing requests: a request that answers an error must have written nothing.
 * These are the requests found to commit once and then fail on a later step (an audit
 * of the actions that commit more than once); each test compares the whole store
 * before and after the refused request.
 *
 * The one exception is by design (Zulip's): a refused webhook warns the bot's owner.
 *
 * Crash-only cases (a kill -9 between two commits of a request that succeeds) cannot be
 * provoked over HTTP; requests that succeed are checked instead to commit once (below).
 * Moves with the users' topic policies, reactions and votes with the "on participation"
 * policy, and PATCH /users/me/subscriptions (additions and removals) commit as one.
 * One stays several commits: POST /streams/{id}/delete_topic (batches of 1,000, as
 * Zulip's, then the policies).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectSuccess, startTestServer, type ApiResponse, type TestServer, type TestUser } from "../kit";

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

/**
 * Every record of every key space, as text, once the unread-rows worker has caught up
 * (it writes in the background, so it must be idle for the comparison to mean anything).
 */
async function storeSnapshot(): Promise<Map<string, string>> {
  await s.server.unreadRows.drain();
  const out = new Map<string, string>();
  for (const [name, db] of Object.entries(s.server.h.store.dbs)) {
    for (const { key, value } of db.getRange({})) out.set(`${name} ${JSON.stringify(key)}`, JSON.stringify(value));
  }
  return out;
}

/** The records `after` adds, changes or removes relative to `before`. */
function changedRecords(before: Map<string, string>, after: Map<string, string>): string[] {
  const changed: string[] = [];
  for (const [key, value] of after) if (before.get(key) !== value) changed.push(`${before.has(key) ? "changed" : "added"} ${key}: ${value.slice(0, 200)}`);
  for (const key of before.keys()) if (!after.has(key)) changed.push(`removed ${key}`);
  return changed;
}

/** Runs `request`, which must answer an error, and expects the store exactly as it was. */
async function expectRefusedWithoutWrites(request: () => Promise<ApiResponse>, status: number, code: string, msg?: string | RegExp): Promise<void> {
  const before = await storeSnapshot();
  const lastMessageId = s.server.h.store.lastId("message");
  expectError(await request(), status, code, msg);
  expect(s.server.h.store.lastId("message")).toBe(lastMessageId);
  expect(changedRecords(before, await storeSnapshot())).toEqual([]);
}

const webhook = (integration: "json" | "slack_incoming", query: string, body: string) =>
  fetch(`${s.url}/api/v1/external/${integration}?${query}`, { method: "POST", headers: { "content-type": "application/json" }, body });

/** A raw fetch's answer in the kit's shape; the Slack endpoint answers `{ok: false, error}`, read as a Zulip error. */
async function apiResponse(r: Response): Promise<ApiResponse> {
  const body = await r.json();
  if (body.ok === false) return { status: r.status, body: { result: "error", code: "BAD_REQUEST", msg: body.error }, headers: r.headers };
  return { status: r.status, body, headers: r.headers };
}

/** An incoming-webhook bot of its own per test: the owner warning is rate limited per bot (five minutes). */
async function freshWebhookBot(shortName: string): Promise<TestUser> {
  return s.createBot("hamlet", { full_name: `Hook ${shortName}`, short_name: shortName, bot_type: 2 });
}

describe("incoming webhooks (src/actions/webhooks.ts doSendWebhookMessage)", () => {
  // Zulip's webhooks tell the bot's owner when a payload cannot be posted (a missing
  // channel, one nobody reads): that direct message is the one write a refused webhook
  // request makes, by design — the owner must learn their integration is broken.
  async function expectRefusedWithOwnerWarningOnly(request: () => Promise<ApiResponse>, msg: string, warning: RegExp): Promise<void> {
    const before = await storeSnapshot();
    const lastMessageId = s.server.h.store.lastId("message");
    expectError(await request(), 400, "BAD_REQUEST", msg);
    expect(s.server.h.store.lastId("message")).toBe(lastMessageId + 1);
    const dm = expectSuccess(await s.as("hamlet").get("/messages", { anchor: "newest", num_before: 1, num_after: 0, apply_markdown: "false" })).messages[0];
    expect(dm).toMatchObject({ id: lastMessageId + 1, type: "private", sender_email: expect.stringMatching(/^notification-bot@/) });
    expect(dm.content).toMatch(warning);
    // Nothing else: the only records added are that message's own.
    for (const line of changedRecords(before, await storeSnapshot())) expect(line).not.toMatch(/^(changed|removed) (users|channels|subscriptions|topics) /);
  }

  test("a channel ID that does not exist: refused, and the owner warned (nothing else written)", async () => {
    const bot = await freshWebhookBot("atomic-missing-id");
    await expectRefusedWithOwnerWarningOnly(async () => apiResponse(await webhook("json", `api_key=${bot.apiKey}&stream=999999`, "{}")), "Channel with ID '999999' does not exist", /999999/);
  });

  test("a channel nobody reads, where the bot may not post: refused, and the owner warned (JSON and Slack webhooks)", async () => {
    const channelId = await s.createChannel("iago", "Atomic quiet json", ["iago"], { stream_post_policy: 2 });
    expectSuccess(await s.as("iago").delete("/users/me/subscriptions", { subscriptions: ["Atomic quiet json"] }));
    const bot = await freshWebhookBot("atomic-quiet-json");
    await expectRefusedWithOwnerWarningOnly(async () => apiResponse(await webhook("json", `api_key=${bot.apiKey}&stream=${channelId}&topic=alerts`, '{"a":1}')), "You do not have permission to post in this channel.", /does not have any subscribers/);
    await s.createChannel("iago", "Atomic quiet slack", ["iago"], { stream_post_policy: 2 });
    expectSuccess(await s.as("iago").delete("/users/me/subscriptions", { subscriptions: ["Atomic quiet slack"] }));
    const slackBot = await freshWebhookBot("atomic-quiet-slack");
    await expectRefusedWithOwnerWarningOnly(
      async () => apiResponse(await webhook("slack_incoming", `api_key=${slackBot.apiKey}&stream=${encodeURIComponent("Atomic quiet slack")}&topic=alerts`, '{"text":"hello"}')),
      "You do not have permission to post in this channel.",
      /does not have any subscribers/,
    );
  });
});

/** How many transactions `request` commits (every action commits through `store.commit`). */
async function commitsOf<T>(request: () => Promise<T>): Promise<{ result: T; commits: number }> {
  const store = s.server.h.store;
  const commit = store.commit;
  let commits = 0;
  store.commit = function (this: typeof store, ...args: Parameters<typeof commit>) {
    commits++;
    return commit.apply(this, args);
  } as typeof commit;
  try {
    return { result: await request(), commits };
  } finally {
    store.commit = commit;
  }
}

describe("requests that succeed commit once", () => {
  test("PATCH /users/me/subscriptions with additions and removals: one transaction, both written", async () => {
    await s.createChannel("iago", "Atomic leave", ["hamlet"]);
    await s.createChannel("iago", "Atomic join", ["iago"]);
    const { result, commits } = await commitsOf(() =>
      s.as("hamlet").patch("/users/me/subscriptions", { delete: JSON.stringify(["Atomic leave"]), add: JSON.stringify([{ name: "Atomic join" }]) }),
    );
    const body = expectSuccess(result);
    expect(body.removed).toEqual(["Atomic leave"]);
    expect(Object.values(body.subscribed)).toEqual([["Atomic join"]]);
    expect(commits).toBe(1);
    const names = expectSuccess(await s.as("hamlet").get("/users/me/subscriptions")).subscriptions.map((sub: { name: string }) => sub.name);
    expect(names).toContain("Atomic join");
    expect(names).not.toContain("Atomic leave");
  });
});

describe("the snapshot itself", () => {
  // Guards the helper: a refusal that never reaches a commit compares equal, and a write is seen.
  test("a request refused before any commit leaves the store as it was", async () => {
    await expectRefusedWithoutWrites(() => s.as("hamlet").post("/messages", { type: "stream", to: "no such channel", topic: "t", content: "x" }), 400, "STREAM_DOES_NOT_EXIST");
  });

  test("a write shows up in the comparison", async () => {
    const before = await storeSnapshot();
    expectSuccess(await s.as("hamlet").post("/users/me/alert_words", { alert_words: ["atomicity"] }));
    expect(changedRecords(before, await storeSnapshot()).length).toBeGreaterThan(0);
  });
});
