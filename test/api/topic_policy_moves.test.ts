/**
 * Users' topic policies (mute, unmute, follow) follow a whole topic that moves, merge
 * with the destination's when it already has messages, and go with a deleted topic —
 * Zulip's do_update_message and delete_in_topic rules — each change announced as
 * `user_topic` (and the legacy `muted_topics`) to its user.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, startTestServer, type CastName, type TestServer } from "../kit";
import { register, verifyAction } from "../kit/events";

const MUTED = 1;
const UNMUTED = 2;
const FOLLOWED = 3;

let s: TestServer;
let denmark: number;
let vault: number;

beforeAll(async () => {
  s = await startTestServer();
  denmark = await s.createChannel("iago", "Denmark", ["iago", "hamlet", "othello", "cordelia"]);
  vault = await s.createChannel("iago", "Vault", ["iago", "hamlet"], { invite_only: true });
});
afterAll(() => s.stop());

async function send(topic: string, channel = denmark): Promise<number> {
  return expectSuccess(await s.as("iago").post("/messages", { type: "channel", to: channel, topic, content: `about ${topic}` })).id;
}

async function setPolicy(who: CastName, topic: string, policy: number, channel = denmark): Promise<void> {
  expectSuccess(await s.as(who).post("/user_topics", { stream_id: channel, topic, visibility_policy: policy }));
}

/** A user's policies as register gives them: "channel/topic" → policy. */
async function policies(who: CastName): Promise<Record<string, number>> {
  const state = await register(s.as(who), { fetch_event_types: ["user_topic"] });
  return Object.fromEntries(state.user_topics.map((t: any) => [`${t.stream_id}/${t.topic_name}`, t.visibility_policy]));
}

describe("topic policies and moves", () => {
  test("a renamed topic takes its policies along (change_all)", async () => {
    const first = await send("old plans");
    await send("old plans");
    await setPolicy("hamlet", "old plans", MUTED);
    await setPolicy("othello", "old plans", FOLLOWED);
    const r = await verifyAction(s, () => s.as("iago").patch(`/messages/${first}`, { topic: "new plans", propagate_mode: "change_all", send_notification_to_old_thread: false, send_notification_to_new_thread: false }), {
      viewers: ["hamlet", "othello", "cordelia"],
    });
    expect(r.types.hamlet.filter((t) => t === "user_topic" || t === "muted_topics")).toEqual(["muted_topics", "user_topic", "user_topic"]);
    expect(r.types.cordelia).not.toContain("user_topic");
    expect(await policies("hamlet")).toMatchObject({ [`${denmark}/new plans`]: MUTED });
    expect(await policies("hamlet")).not.toHaveProperty(`${denmark}/old plans`);
    expect(await policies("othello")).toMatchObject({ [`${denmark}/new plans`]: FOLLOWED });
  });

  test("a rename that only changes case keeps the policies", async () => {
    const first = await send("Case Topic");
    await setPolicy("hamlet", "Case Topic", FOLLOWED);
    await verifyAction(s, () => s.as("iago").patch(`/messages/${first}`, { topic: "case topic", propagate_mode: "change_all", send_notification_to_old_thread: false, send_notification_to_new_thread: false }), { viewers: ["hamlet"] });
    expect(Object.entries(await policies("hamlet")).filter(([key]) => key.toLowerCase() === `${denmark}/case topic`).map(([, policy]) => policy)).toEqual([FOLLOWED]);
  });

  test("moving the last messages one by one moves the policy with the last one; moving one of several does not", async () => {
    const a = await send("pieces");
    const b = await send("pieces");
    await setPolicy("hamlet", "pieces", FOLLOWED);
    await verifyAction(s, () => s.as("iago").patch(`/messages/${a}`, { topic: "elsewhere", propagate_mode: "change_one", send_notification_to_old_thread: false, send_notification_to_new_thread: false }), { viewers: ["hamlet"] });
    expect(await policies("hamlet")).toMatchObject({ [`${denmark}/pieces`]: FOLLOWED });
    expect(await policies("hamlet")).not.toHaveProperty(`${denmark}/elsewhere`);
    // The last message out: the whole topic (as the mover sees it) has moved.
    await verifyAction(s, () => s.as("iago").patch(`/messages/${b}`, { topic: "elsewhere", propagate_mode: "change_one", send_notification_to_old_thread: false, send_notification_to_new_thread: false }), { viewers: ["hamlet"] });
    expect(await policies("hamlet")).toMatchObject({ [`${denmark}/elsewhere`]: FOLLOWED });
    expect(await policies("hamlet")).not.toHaveProperty(`${denmark}/pieces`);
  });

  test("into a topic with messages, the more visible policy wins (followed > unmuted > none > muted)", async () => {
    const moved = await send("merging in");
    await send("merge target");
    await setPolicy("hamlet", "merging in", MUTED);
    await setPolicy("hamlet", "merge target", UNMUTED);
    await setPolicy("othello", "merging in", FOLLOWED);
    await setPolicy("othello", "merge target", MUTED);
    await setPolicy("cordelia", "merge target", MUTED);
    await verifyAction(s, () => s.as("iago").patch(`/messages/${moved}`, { topic: "merge target", propagate_mode: "change_all", send_notification_to_old_thread: false, send_notification_to_new_thread: false }), {
      viewers: ["hamlet", "othello", "cordelia"],
    });
    expect(await policies("hamlet")).toMatchObject({ [`${denmark}/merge target`]: UNMUTED });
    expect(await policies("othello")).toMatchObject({ [`${denmark}/merge target`]: FOLLOWED });
    // No policy on the moved topic is "none", more visible than muted.
    expect(await policies("cordelia")).not.toHaveProperty(`${denmark}/merge target`);
    for (const who of ["hamlet", "othello"] as const) expect(await policies(who)).not.toHaveProperty(`${denmark}/merging in`);
  });

  test("to a private channel: users who cannot read it lose the policy instead", async () => {
    const moved = await send("sensitive");
    await setPolicy("hamlet", "sensitive", FOLLOWED);
    await setPolicy("othello", "sensitive", FOLLOWED);
    // Not the newest message: a client keeps its max_message_id when a message leaves it.
    await send("filler");
    await verifyAction(s, () => s.as("iago").patch(`/messages/${moved}`, { stream_id: vault, propagate_mode: "change_all", send_notification_to_old_thread: false, send_notification_to_new_thread: false }), {
      viewers: ["hamlet", "othello"],
    });
    expect(await policies("hamlet")).toMatchObject({ [`${vault}/sensitive`]: FOLLOWED });
    expect(await policies("othello")).toEqual(expect.not.objectContaining({ [`${vault}/sensitive`]: expect.anything() }));
    expect(await policies("othello")).not.toHaveProperty(`${denmark}/sensitive`);
  });

  test("deleting a topic deletes the policies on it", async () => {
    await send("doomed");
    await setPolicy("hamlet", "doomed", MUTED);
    await setPolicy("othello", "doomed", FOLLOWED);
    await send("filler");
    const r = await verifyAction(s, () => s.as("iago").post(`/streams/${denmark}/delete_topic`, { topic_name: "doomed" }), { viewers: ["hamlet", "othello", "cordelia"] });
    expect(r.types.othello).toContain("user_topic");
    expect(r.types.cordelia).not.toContain("user_topic");
    for (const who of ["hamlet", "othello"] as const) expect(await policies(who)).not.toHaveProperty(`${denmark}/doomed`);
  });
});
