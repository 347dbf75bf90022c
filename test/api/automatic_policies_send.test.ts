/** The sender's automatic topic policies on send, every branch: which settings apply, and when the topic's policy already holds. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectSuccess, startTestServer, type TestServer } from "../kit";

let s: TestServer;
let rialto: number;
beforeAll(async () => {
  s = await startTestServer();
  rialto = await s.createChannel("iago", "Rialto", ["iago", "hamlet", "othello"]);
});
afterAll(() => s.stop());

async function sendAs(who: "iago" | "hamlet" | "othello", topic: string): Promise<number | undefined> {
  return expectSuccess(await s.as(who).post("/messages", { type: "stream", to: rialto, topic, content: "a line" })).automatic_new_visibility_policy;
}
async function policyOf(who: "iago" | "hamlet" | "othello", topic: string): Promise<number | undefined> {
  const topics = expectSuccess(await s.as(who).post("/register", { fetch_event_types: ["user_topic"] })).user_topics as any[];
  return topics.find((t) => t.stream_id === rialto && t.topic_name === topic)?.visibility_policy;
}
const setMuted = async (who: "hamlet" | "othello", muted: boolean) =>
  expectSuccess(await s.as(who).post("/users/me/subscriptions/properties", { subscription_data: [{ stream_id: rialto, property: "is_muted", value: muted }] }));

describe("the sender's automatic policies", () => {
  test("default settings: following on starting a topic only, not on continuing it or another's", async () => {
    expect(await sendAs("iago", "start")).toBe(3);
    expect(await sendAs("iago", "start")).toBeUndefined();
    expect(await sendAs("hamlet", "start")).toBeUndefined();
    expect(await policyOf("hamlet", "start")).toBeUndefined();
  });

  test("'on send' follows once; a topic already followed changes nothing", async () => {
    expectSuccess(await s.as("hamlet").patch("/settings", { automatically_follow_topics_policy: 2 }));
    expect(await sendAs("hamlet", "start")).toBe(3);
    expect(await sendAs("hamlet", "start")).toBeUndefined();
    expect(await policyOf("hamlet", "start")).toBe(3);
  });

  test("a muted channel: unmuting on send only when following does not apply and no policy is set", async () => {
    expectSuccess(await s.as("othello").patch("/settings", { automatically_follow_topics_policy: 4 }));
    await setMuted("othello", true);
    expect(await sendAs("othello", "quiet")).toBe(2);
    expect(await sendAs("othello", "quiet")).toBeUndefined();
    // A topic the user muted stays muted.
    expectSuccess(await s.as("othello").post("/user_topics", { stream_id: rialto, topic: "hushed", visibility_policy: 1 }));
    expect(await sendAs("othello", "hushed")).toBeUndefined();
    expect(await policyOf("othello", "hushed")).toBe(1);
    // Unmuting never applies: nothing changes.
    expectSuccess(await s.as("othello").patch("/settings", { automatically_unmute_topics_in_muted_streams_policy: 4 }));
    expect(await sendAs("othello", "loud")).toBeUndefined();
    // In a channel no longer muted, unmuting does not apply either.
    expectSuccess(await s.as("othello").patch("/settings", { automatically_unmute_topics_in_muted_streams_policy: 2 }));
    await setMuted("othello", false);
    expect(await sendAs("othello", "plain")).toBeUndefined();
    // Following takes precedence over unmuting in a muted channel.
    await setMuted("othello", true);
    expectSuccess(await s.as("othello").patch("/settings", { automatically_follow_topics_policy: 2 }));
    expect(await sendAs("othello", "loud")).toBe(3);
  });
});
