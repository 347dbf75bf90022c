import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ApiClient, expectError, expectSchema, expectSuccess, startTestServer, type TestServer } from "../kit";
import { drainEvents, register } from "../kit/events";
import { auth } from "../kit/process";
import { runZulipJs } from "../clients/zulip-js";
import { BadEventQueueIdError, GetEventsResponse } from "../../src/schemas/events";

let s: TestServer;
beforeAll(async () => {
  // A short heartbeat through the documented env var; removed again so other files keep the default.
  s = await startTestServer({ env: { HEARTH_EVENT_HEARTBEAT_SECS: "0.5" } });
  delete process.env.HEARTH_EVENT_HEARTBEAT_SECS;
});
afterAll(() => s.stop());

const rename = (name: string) => s.as("iago").patch(`/users/${s.users.othello.id}`, { full_name: name });

function expectBadQueue(res: Awaited<ReturnType<ApiClient["get"]>>, queueId: string) {
  expectError(res, 400, "BAD_EVENT_QUEUE_ID", `Bad event queue ID: ${queueId}`);
  expectSchema(BadEventQueueIdError, res.body);
  expect(res.body.queue_id).toBe(queueId);
}

describe("GET /events long-poll", () => {
  test("a parked poll answers within milliseconds of another user's action", async () => {
    const { queue_id } = await register(s.as("hamlet"), { event_types: ["realm_user"] });
    const poll = s.as("hamlet").get("/events", { queue_id, last_event_id: -1 });
    await Bun.sleep(50);
    let pollDone = 0;
    poll.then(() => (pollDone = performance.now()));
    const res = await rename("Othello (polled)");
    const actionDone = performance.now();
    const body = expectSuccess(await poll);
    expectSchema(GetEventsResponse, body);
    expect(body.events).toEqual([{ id: 0, type: "realm_user", op: "update", person: { user_id: s.users.othello.id, full_name: "Othello (polled)" } }]);
    expect(res.status).toBe(200);
    // The poll answers no later than a few ms after the action's own response.
    expect(pollDone - actionDone).toBeLessThan(50);
    expect(body.queue_id).toBe(queue_id);
  });

  test("dont_block answers at once with nothing waiting", async () => {
    const { queue_id } = await register(s.as("hamlet"));
    const t0 = performance.now();
    const body = expectSuccess(await s.as("hamlet").get("/events", { queue_id, dont_block: true }));
    expect(body.events).toEqual([]);
    expect(performance.now() - t0).toBeLessThan(200);
  });

  test("last_event_id acknowledges and prunes; IDs increase per queue", async () => {
    const { queue_id } = await register(s.as("hamlet"), { event_types: ["realm_user"] });
    for (const name of ["Othello 1", "Othello 2", "Othello 3"]) expectSuccess(await rename(name));
    const all = await drainEvents(s.as("hamlet"), queue_id, -1);
    expect(all.map((e) => e.id)).toEqual([0, 1, 2]);
    const rest = await drainEvents(s.as("hamlet"), queue_id, 1);
    expect(rest.map((e) => e.person.full_name)).toEqual(["Othello 3"]);
    // Acknowledged events are gone for good.
    expect((await drainEvents(s.as("hamlet"), queue_id, -1)).map((e) => e.id)).toEqual([2]);
    expect(await drainEvents(s.as("hamlet"), queue_id, 2)).toEqual([]);
  });

  test("heartbeat when nothing happens (interval from HEARTH_EVENT_HEARTBEAT_SECS)", async () => {
    const { queue_id } = await register(s.as("hamlet"), { event_types: ["realm_user"] });
    const t0 = performance.now();
    const body = expectSuccess(await s.as("hamlet").get("/events", { queue_id, last_event_id: -1 }));
    const waited = performance.now() - t0;
    expect(body.events).toEqual([{ type: "heartbeat", id: 0 }]);
    expect(waited).toBeGreaterThan(400);
    expect(waited).toBeLessThan(2000);
    // The heartbeat is acknowledged like any event.
    expect((await s.as("hamlet").get("/events", { queue_id, last_event_id: 0, dont_block: true })).body.events).toEqual([]);
  });

  // Elysia sets Bun's idleTimeout to 30 s; a parked poll must outlive it (the route
  // also raises its own limit with server.timeout()). Takes 32 s: HEARTH_SLOW_TESTS=1.
  test.skipIf(!process.env.HEARTH_SLOW_TESTS)("a poll parked longer than the server's 30 s idle limit still gets its heartbeat", async () => {
    const limits = s.server.h.queues.limits;
    const saved = limits.heartbeatSecs;
    limits.heartbeatSecs = 32;
    try {
      const { queue_id } = await register(s.as("hamlet"), { event_types: ["realm_user"] });
      const body = expectSuccess(await s.as("hamlet").get("/events", { queue_id, last_event_id: -1 }));
      expect(body.events).toEqual([{ type: "heartbeat", id: 0 }]);
    } finally {
      limits.heartbeatSecs = saved;
    }
  }, 45000);

  test("a second poll on the same queue replaces the first, which answers empty", async () => {
    const { queue_id } = await register(s.as("hamlet"), { event_types: ["realm_user"] });
    const first = s.as("hamlet").get("/events", { queue_id, last_event_id: -1 });
    await Bun.sleep(30);
    const second = s.as("hamlet").get("/events", { queue_id, last_event_id: -1 });
    expect(expectSuccess(await first).events).toEqual([]);
    expectSuccess(await rename("Othello (replaced)"));
    expect(expectSuccess(await second).events.map((e: any) => e.person.full_name)).toEqual(["Othello (replaced)"]);
  });

  test("a client that hangs up no longer holds its queue", async () => {
    const { queue_id } = await register(s.as("hamlet"), { event_types: ["realm_user"] });
    const controller = new AbortController();
    const auth = "Basic " + Buffer.from(`${s.users.hamlet.email}:${s.users.hamlet.apiKey}`).toString("base64");
    const poll = fetch(`${s.url}/api/v1/events?queue_id=${encodeURIComponent(queue_id)}&last_event_id=-1`, { headers: { authorization: auth }, signal: controller.signal }).catch(() => null);
    await Bun.sleep(50);
    const queue = s.server.h.queues.access(queue_id, s.users.hamlet.id);
    expect(queue.waiter).not.toBeNull();
    controller.abort();
    await poll;
    for (let i = 0; i < 20 && queue.waiter; i++) await Bun.sleep(10);
    expect(queue.waiter).toBeNull();
    // Released by the hang-up, not by the (0.5 s) heartbeat, which would have queued an event.
    expect(queue.events).toEqual([]);
    // Events published meanwhile wait for the next poll.
    expectSuccess(await rename("Othello (after hang-up)"));
    expect((await drainEvents(s.as("hamlet"), queue_id)).map((e) => e.person.full_name)).toEqual(["Othello (after hang-up)"]);
  });

  test("a poll answers alike in every form it may take (the short path and the general one)", async () => {
    const { queue_id } = await register(s.as("hamlet"), { event_types: ["realm_user"] });
    expectSuccess(await rename("Othello (forms)"));
    const poll = async (query: string, key = s.users.hamlet.apiKey) => {
      const res = await fetch(`${s.url}/api/v1/events?${query}`, { headers: auth(s.users.hamlet.email, key) });
      return { status: res.status, body: await res.json() };
    };
    // The short path: exactly queue_id, last_event_id and dont_block, unencoded.
    const plain = await poll(`queue_id=${queue_id}&last_event_id=-1&dont_block=true`);
    expect(plain.status).toBe(200);
    expect(plain.body.events.map((e: any) => e.person.full_name)).toEqual(["Othello (forms)"]);
    // Encoded values, other spellings and extra parameters take the general path.
    expect(await poll(`queue_id=${queue_id}&last_event_id=%2D1&dont_block=true`)).toEqual(plain);
    expect(await poll(`dont_block=true&last_event_id=-1&queue_id=${queue_id}`)).toEqual(plain);
    const extra = await poll(`queue_id=${queue_id}&last_event_id=-1&dont_block=true&client=test`);
    expect(extra.body).toEqual({ ...plain.body, ignored_parameters_unsupported: ["client"] });
    // Errors are the same on both paths.
    const badKey = await poll(`queue_id=${queue_id}&last_event_id=-1&dont_block=true`, "wrong");
    expect(badKey.status).toBe(401);
    expect(await poll(`queue_id=${queue_id}&last_event_id=%2D1&dont_block=true`, "wrong")).toEqual(badKey);
    const badQueue = await poll(`queue_id=nope&last_event_id=-1&dont_block=true`);
    expect(badQueue).toEqual({ status: 400, body: { result: "error", msg: "Bad event queue ID: nope", code: "BAD_EVENT_QUEUE_ID", queue_id: "nope" } });
    expect(await poll(`queue_id=%6Eope&last_event_id=-1&dont_block=true`)).toEqual(badQueue);
    const badId = await poll(`queue_id=${queue_id}&last_event_id=1.5&dont_block=true`);
    expect(badId.status).toBe(400);
    expect(badId.body.code).toBe("BAD_REQUEST");
    // Not JSON integers: refused like any other parameter (the short path leaves them to the general one).
    expect(await poll(`queue_id=${queue_id}&last_event_id=007&dont_block=true`)).toEqual(await poll(`last_event_id=007&queue_id=${queue_id}&dont_block=true`));
    expect((await poll(`queue_id=${queue_id}&last_event_id=007&dont_block=true`)).status).toBe(400);
    // The short path's own scanning: what it does not take, the general path judges.
    for (const bad of ["last_event_id=", "last_event_id=-", "last_event_id=0x1", "last_event_id=1-"]) {
      expect({ bad, ...(await poll(`queue_id=${queue_id}&${bad}&dont_block=true`)).body }).toMatchObject({ bad, result: "error", code: "BAD_REQUEST" });
    }
    expect((await poll(`queue_id=${queue_id}&last_event_id=-1&dont_block=truex`)).status).toBe(400);
    expect((await poll(`queue_id=${queue_id}&queue_id=${queue_id}&last_event_id=-1&dont_block=true`)).status).toBe(200);
    expect(await poll(`queue_id=${queue_id}&last_event_id=-1&dont_block=true&`)).toEqual(plain);
    expect(await poll(`queue_id=${queue_id}&last_event_id=-0&dont_block=true`)).toEqual(await poll(`queue_id=${queue_id}&last_event_id=%2D0&dont_block=true`));
    // A page's request gets the Session challenge on the short path too.
    const fromPage = await fetch(`${s.url}/api/v1/events?queue_id=${queue_id}&last_event_id=-1&dont_block=true`, { headers: { ...auth(s.users.hamlet.email, "wrong"), "x-requested-with": "XMLHttpRequest" } });
    expect(fromPage.status).toBe(401);
    expect(fromPage.headers.get("www-authenticate")).toBe('Session realm="zulip"');
  });

  test("a parked poll whose answer cannot be built gets Zulip's JSON error, never Bun's error page", async () => {
    const { queue_id } = await register(s.as("hamlet"));
    const parked = fetch(`${s.url}/api/v1/events?queue_id=${queue_id}&last_event_id=-1`, { headers: auth(s.users.hamlet.email, s.users.hamlet.apiKey) });
    await Bun.sleep(50);
    // No action publishes such an event: a value JSON cannot hold stands in for a bug.
    s.server.h.events.publish({ type: "custom", value: 1n } as any, [s.users.hamlet.id]);
    const res = await parked;
    expect(res.status).toBe(500);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(await res.json()).toEqual({ result: "error", msg: "Internal server error", code: "INTERNAL_SERVER_ERROR" });
    expectSuccess(await s.as("hamlet").delete("/events", { queue_id }));
  });

  test("queues belong to their user", async () => {
    const { queue_id } = await register(s.as("hamlet"));
    expectError(await s.as("othello").get("/events", { queue_id, dont_block: true }), 400, "BAD_REQUEST");
    expectError(await s.as("othello").delete("/events", { queue_id }), 400, "BAD_REQUEST");
  });

  test("queue_id is required unless dont_block registers a queue on the fly", async () => {
    expectError(await s.as("hamlet").get("/events", {}), 400, "REQUEST_VARIABLE_MISSING", "Missing 'queue_id' argument");
    const body = expectSuccess(await s.as("hamlet").get("/events", { dont_block: true, event_types: ["realm_user"] }));
    expect(body.events).toEqual([]);
    expectSuccess(await rename("Othello (implicit)"));
    expect((await drainEvents(s.as("hamlet"), body.queue_id)).length).toBe(1);
  });
});

describe("queue lifetime", () => {
  test("unknown queue: BAD_EVENT_QUEUE_ID with the queue_id", async () => {
    expectBadQueue(await s.as("hamlet").get("/events", { queue_id: "nope", dont_block: true }), "nope");
  });

  test("DELETE /events removes the queue", async () => {
    const { queue_id } = await register(s.as("hamlet"));
    expectSuccess(await s.as("hamlet").delete("/events", { queue_id }));
    expectBadQueue(await s.as("hamlet").get("/events", { queue_id, dont_block: true }), queue_id);
    expectBadQueue(await s.as("hamlet").delete("/events", { queue_id }), queue_id);
  });

  test("deactivating a user frees their queues; a parked poll answers at once", async () => {
    const u = await s.createUser("rosalind");
    const { queue_id } = await register(s.as(u));
    const parked = s.as(u).get("/events", { queue_id, last_event_id: -1 });
    await Bun.sleep(30);
    expectSuccess(await s.as("iago").delete(`/users/${u.id}`));
    expect(expectSuccess(await parked).events).toEqual([]);
    expect(s.server.h.queues.queuesOf(u.id)).toEqual([]);
    expectError(await s.as(u).get("/events", { queue_id, dont_block: true }), 401, "USER_DEACTIVATED");
  });

  test("an idle queue expires after idle_queue_timeout", async () => {
    const reg = await register(s.as("hamlet"), { idle_queue_timeout: 1 });
    expect(reg.idle_queue_timeout_secs).toBe(1);
    await Bun.sleep(600);
    // Polling is activity: the queue survives past its first second.
    expectSuccess(await s.as("hamlet").get("/events", { queue_id: reg.queue_id, dont_block: true }));
    await Bun.sleep(600);
    expectSuccess(await s.as("hamlet").get("/events", { queue_id: reg.queue_id, dont_block: true }));
    await Bun.sleep(1200);
    expectBadQueue(await s.as("hamlet").get("/events", { queue_id: reg.queue_id, dont_block: true }), reg.queue_id);
  });

  test("the periodic sweep frees idle queues without any request", async () => {
    const reg = await register(s.as("hamlet"), { idle_queue_timeout: 1 });
    const before = s.server.h.queues.size;
    expect(s.server.h.queues.collectIdle(Date.now() + 1500)).toBeGreaterThanOrEqual(1);
    expect(s.server.h.queues.size).toBeLessThan(before);
    expectBadQueue(await s.as("hamlet").get("/events", { queue_id: reg.queue_id, dont_block: true }), reg.queue_id);
  });

  test("a queue over its event cap is dropped; its client must re-register", async () => {
    const limits = s.server.h.queues.limits;
    const saved = limits.maxEventsPerQueue;
    limits.maxEventsPerQueue = 3;
    try {
      const { queue_id } = await register(s.as("hamlet"), { event_types: ["realm_user"] });
      const busy = await register(s.as("cordelia"), { event_types: ["realm_user"] });
      for (let i = 0; i < 3; i++) {
        expectSuccess(await rename(`Othello cap ${i}`));
        await drainEvents(s.as("cordelia"), busy.queue_id, 100); // an attentive client acknowledges
      }
      expect((await drainEvents(s.as("hamlet"), queue_id)).length).toBe(3);
      expectSuccess(await rename("Othello cap 3"));
      expectBadQueue(await s.as("hamlet").get("/events", { queue_id, dont_block: true }), queue_id);
      expectSuccess(await s.as("cordelia").get("/events", { queue_id: busy.queue_id, dont_block: true }));
    } finally {
      limits.maxEventsPerQueue = saved;
    }
  });

  test("past the global queue cap the least recently used queue is dropped", async () => {
    const limits = s.server.h.queues.limits;
    const saved = limits.maxQueues;
    limits.maxQueues = s.server.h.queues.size + 2;
    try {
      const oldest = await register(s.as("hamlet"));
      const middle = await register(s.as("hamlet"));
      // Touch every other queue so that `oldest` is the least recently used.
      const newest = await register(s.as("hamlet"));
      expect(s.server.h.queues.size).toBeLessThanOrEqual(limits.maxQueues);
      expectSuccess(await s.as("hamlet").get("/events", { queue_id: newest.queue_id, dont_block: true }));
      await register(s.as("hamlet"));
      expect(s.server.h.queues.size).toBeLessThanOrEqual(limits.maxQueues);
      expectBadQueue(await s.as("hamlet").get("/events", { queue_id: oldest.queue_id, dont_block: true }), oldest.queue_id);
      void middle;
    } finally {
      limits.maxQueues = saved;
    }
  });
});

describe("zulip-js (under Node, as its users run it)", () => {
  test("queues.register, events.retrieve of a realm_user event, queues.deregister", async () => {
    const hamlet = s.users.hamlet;
    const config = { username: hamlet.email, apiKey: hamlet.apiKey, realm: s.url };
    const [reg] = (await runZulipJs(config, [{ fn: "queues.register", args: [{ event_types: ["realm_user"] }] }])).results;
    expect(reg.result).toBe("success");
    expectSuccess(await rename("Othello (zulip-js)"));
    const [res, gone] = (
      await runZulipJs(config, [
        { fn: "events.retrieve", args: [{ queue_id: reg.queue_id, last_event_id: reg.last_event_id, dont_block: false }] },
        { fn: "queues.deregister", args: [{ queue_id: reg.queue_id }] },
      ])
    ).results;
    expect(res.result).toBe("success");
    expect(res.events).toEqual([{ id: 0, type: "realm_user", op: "update", person: { user_id: s.users.othello.id, full_name: "Othello (zulip-js)" } }]);
    expect(gone.result).toBe("success");
  });
});

describe("graceful restart", () => {
  test("queues and their pending events survive stop/start; after a crash clients re-register", async () => {
    const first = await startTestServer();
    const dataDir = first.dataDir;
    const hamlet = first.users.hamlet;
    const { queue_id } = await register(first.as("hamlet"), { event_types: ["realm_user"] });
    expectSuccess(await first.as("iago").patch(`/users/${first.users.othello.id}`, { full_name: "Othello before restart" }));
    // A parked poll does not hold up the shutdown.
    const parked = first.as("cordelia").get("/events", { queue_id: (await register(first.as("cordelia"))).queue_id });
    await Bun.sleep(30);
    const t0 = performance.now();
    await first.server.stop();
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(expectSuccess(await parked).events).toEqual([]);
    expect(existsSync(join(dataDir, "event_queues.json"))).toBe(true);

    const second = await startTestServer({ dataDir });
    try {
      const client = new ApiClient(second.url, hamlet.email, hamlet.apiKey);
      const events = await drainEvents(client, queue_id);
      expect(events.map((e) => e.person.full_name)).toEqual(["Othello before restart"]);
      // The queue keeps working and its IDs keep increasing.
      const iago = new ApiClient(second.url, first.users.iago.email, first.users.iago.apiKey);
      expectSuccess(await iago.patch(`/users/${first.users.othello.id}`, { full_name: "Othello after restart" }));
      expect((await drainEvents(client, queue_id, 0)).map((e) => e.id)).toEqual([1]);
      // The saved file is consumed at start: a crash from here on loses the queues.
      expect(existsSync(join(dataDir, "event_queues.json"))).toBe(false);
    } finally {
      await second.server.stop();
    }
    // A damaged saved queue is dropped, and deliveries to its user keep working.
    const savedPath = join(dataDir, "event_queues.json");
    const saved = JSON.parse(readFileSync(savedPath, "utf8"));
    for (const q of saved.queues) delete q.events;
    writeFileSync(savedPath, JSON.stringify(saved));
    const third = await startTestServer({ dataDir });
    try {
      const client = new ApiClient(third.url, hamlet.email, hamlet.apiKey);
      expectBadQueue(await client.get("/events", { queue_id, dont_block: true }), queue_id);
      const iago = new ApiClient(third.url, first.users.iago.email, first.users.iago.apiKey);
      expectSuccess(await iago.patch(`/users/${first.users.othello.id}`, { full_name: "Othello, third start" }));
    } finally {
      await third.server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
