/**
 * State + events for actions no other test checks: the combined subscriptions call,
 * profile field edits and reordering, flags over a narrow, automatic topic policies
 * on send, message reports, and tus uploads.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectSuccess, startTestServer, type CastName, type TestServer, type TestUser } from "../kit";
import { captureEvents, verifyAction, type VerifyResult } from "../kit/events";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const ALL: CastName[] = ["desdemona", "iago", "shiva", "hamlet", "othello", "cordelia", "polonius"];

/** Viewers (besides `except`) who received any event. */
const others = (r: VerifyResult, ...except: string[]) =>
  Object.entries(r.types)
    .filter(([name, types]) => !except.includes(name) && types.length > 0)
    .map(([name]) => name);

const send = async (who: CastName, channelId: number, topic: string, content: string): Promise<number> =>
  expectSuccess(await s.as(who).post("/messages", { type: "stream", to: channelId, topic, content })).id;

describe("PATCH /users/me/subscriptions (add and delete in one call)", () => {
  test("subscribes to an existing and a new channel, then leaves another; peers hear of each, the guest of none", async () => {
    await s.createChannel("othello", "Elsinore", ["hamlet", "cordelia"]);
    const verona = await s.createChannel("othello", "Verona", ["cordelia"]);
    let body: any;
    const r = await verifyAction(
      s,
      async () => {
        body = expectSuccess(
          await s.as("hamlet").patch("/users/me/subscriptions", {
            delete: ["Elsinore"],
            add: [{ name: "Verona" }, { name: "Wittenberg", description: "Where Hamlet studied" }],
          }),
        );
      },
      { registerParams: { include_subscribers: true } },
    );
    expect(body.subscribed).toEqual({ [String(s.users.hamlet.id)]: ["Verona", "Wittenberg"] });
    expect(body.removed).toEqual(["Elsinore"]);
    // Zulip composes the add view, then the remove view.
    expect(r.types.hamlet).toEqual(["stream/create", "subscription/add", "subscription/remove"]);
    const added = r.events.hamlet[1].subscriptions;
    expect(added.map((c: any) => c.name)).toEqual(["Verona", "Wittenberg"]);
    expect(added[1]).toMatchObject({ description: "Where Hamlet studied", subscribers: [s.users.hamlet.id] });
    expect(r.events.hamlet[2].subscriptions).toEqual([{ stream_id: expect.any(Number), name: "Elsinore" }]);
    for (const peer of ["desdemona", "iago", "shiva", "othello", "cordelia"]) {
      expect(r.types[peer]).toEqual(["stream/create", "subscription/peer_add", "subscription/peer_add", "subscription/peer_remove"]);
      expect(r.events[peer][1]).toMatchObject({ stream_ids: [verona], user_ids: [s.users.hamlet.id] });
    }
    // A guest sees no public channel it is not in, nor its subscribers.
    expect(r.types.polonius).toEqual([]);
  });

  test("leaving a private channel: its other subscribers (and administrators) hear of it, outsiders do not", async () => {
    await s.createChannel("othello", "Cabal", ["hamlet"], { invite_only: true });
    const r = await verifyAction(s, () => s.as("hamlet").patch("/users/me/subscriptions", { delete: ["Cabal"] }), { registerParams: { include_subscribers: true } });
    expect(r.types.hamlet).toEqual(["subscription/remove", "stream/delete"]);
    expect(r.types.othello).toEqual(["subscription/peer_remove"]);
    expect(r.types.cordelia).toEqual([]);
    expect(r.types.shiva).toEqual([]);
    expect(r.types.polonius).toEqual([]);
  });

  test("an invalid request changes nothing and tells nobody", async () => {
    const r = await verifyAction(s, async () => {
      expectError(await s.as("hamlet").patch("/users/me/subscriptions", { delete: ["No such channel"], add: [{ name: "Padua" }] }), 400, "STREAM_DOES_NOT_EXIST");
    });
    expect(others(r)).toEqual([]);
    expect(expectSuccess(await s.as("hamlet").get("/get_stream_id", { stream: "Verona" })).stream_id).toBeNumber();
    expect((await s.as("hamlet").get("/get_stream_id", { stream: "Padua" })).status).toBe(400);
  });

  // Zulip's add_subscriptions_backend passes `color` as bulk_add_subscriptions' color_map:
  // the one subscription/add event already carries the color; no subscription/update follows.
  test("a color given in `add` rides in the subscription/add event (no separate update)", async () => {
    await s.createChannel("othello", "Illyria", ["othello"]);
    const r = await verifyAction(s, () => s.as("hamlet").patch("/users/me/subscriptions", { add: [{ name: "Illyria", color: "#76ce90" }] }), { viewers: ["hamlet"] });
    expect(r.types.hamlet).toEqual(["subscription/add"]);
    expect(r.events.hamlet[0].subscriptions[0].color).toBe("#76ce90");
  });
});

describe("custom profile field edits (administrators only)", () => {
  test("rename, change the hint, reorder: everyone gets the whole list", async () => {
    const ids: number[] = [];
    for (const name of ["Phone number", "Biography", "Pronouns"]) {
      ids.push(expectSuccess(await s.as("iago").post("/realm/profile_fields", { field_type: name === "Biography" ? 2 : 1, name, hint: "old hint" })).id);
    }
    const renamed = await verifyAction(s, () => s.as("iago").patch(`/realm/profile_fields/${ids[0]}`, { name: "Telephone", hint: "With country code" }));
    for (const name of ALL) expect(renamed.types[name]).toEqual(["custom_profile_fields"]);
    expect(renamed.events.hamlet[0].fields.find((f: any) => f.id === ids[0])).toMatchObject({ name: "Telephone", hint: "With country code" });

    const order = [ids[2], ids[0], ids[1]];
    const reordered = await verifyAction(s, () => s.as("desdemona").patch("/realm/profile_fields", { order }));
    for (const name of ALL) expect(reordered.types[name]).toEqual(["custom_profile_fields"]);
    const fields = reordered.events.polonius[0].fields as any[];
    expect([...fields].sort((a, b) => a.order - b.order).map((f) => f.id)).toEqual(order);
  });

  test("members and moderators may not edit or reorder; nobody hears anything", async () => {
    const id = expectSuccess(await s.as("iago").get("/realm/profile_fields")).custom_fields[0].id;
    const r = await verifyAction(s, async () => {
      expectError(await s.as("hamlet").patch(`/realm/profile_fields/${id}`, { name: "Mine" }), 400, "UNAUTHORIZED_PRINCIPAL");
      expectError(await s.as("shiva").patch("/realm/profile_fields", { order: [id] }), 400, "UNAUTHORIZED_PRINCIPAL");
    });
    expect(others(r)).toEqual([]);
  });
});

describe("POST /messages/flags/narrow", () => {
  let channel = 0;
  const ids: number[] = [];
  const narrow = () => [
    { operator: "channel", operand: channel },
    { operator: "topic", operand: "batch" },
  ];

  beforeAll(async () => {
    channel = await s.createChannel("othello", "Flagstaff", ["hamlet", "cordelia"]);
    for (const n of [1, 2, 3]) ids.push(await send("othello", channel, "batch", `message ${n}`));
    await send("othello", channel, "other topic", "not in the narrow");
  });

  test("marking a topic read: one update_message_flags event to the caller only", async () => {
    let body: any;
    const r = await verifyAction(s, async () => {
      body = expectSuccess(await s.as("hamlet").post("/messages/flags/narrow", { op: "add", flag: "read", anchor: "oldest", num_before: 0, num_after: 50, narrow: narrow() }));
    });
    expect(body).toMatchObject({ processed_count: 3, updated_count: 3, first_processed_id: ids[0], last_processed_id: ids[2], found_oldest: true, found_newest: true });
    expect(r.types.hamlet).toEqual(["update_message_flags/add"]);
    expect(r.events.hamlet[0]).toMatchObject({ flag: "read", messages: ids, all: false });
    expect(others(r, "hamlet")).toEqual([]);
  });

  test("marking unread carries message_details; starring one message by anchor", async () => {
    const unread = await verifyAction(
      s,
      () => s.as("hamlet").post("/messages/flags/narrow", { op: "remove", flag: "read", anchor: ids[1], num_before: 1, num_after: 0, narrow: narrow() }),
      { viewers: ["hamlet", "othello", "cordelia"] },
    );
    expect(unread.types).toEqual({ hamlet: ["update_message_flags/remove"], othello: [], cordelia: [] });
    expect(unread.events.hamlet[0].messages).toEqual([ids[0], ids[1]]);
    expect(Object.keys(unread.events.hamlet[0].message_details).map(Number)).toEqual([ids[0], ids[1]]);
    expect(unread.events.hamlet[0].message_details[String(ids[0])]).toMatchObject({ type: "stream", stream_id: channel, topic: "batch" });

    const starred = await verifyAction(
      s,
      () => s.as("cordelia").post("/messages/flags/narrow", { op: "add", flag: "starred", anchor: ids[2], include_anchor: true, num_before: 0, num_after: 0, narrow: narrow() }),
      { viewers: ["hamlet", "othello", "cordelia"] },
    );
    expect(starred.types).toEqual({ hamlet: [], othello: [], cordelia: ["update_message_flags/add"] });
    expect(starred.events.cordelia[0]).toMatchObject({ flag: "starred", messages: [ids[2]] });
  });
});

describe("automatic topic policies on send", () => {
  let channel = 0;
  beforeAll(async () => {
    channel = await s.createChannel("othello", "Rialto", ["othello", "hamlet", "cordelia", "shiva"]);
    // Othello starts the topic, so hamlet's later message is not an initiation.
    await send("othello", channel, "ducats", "Three thousand ducats");
    expectSuccess(await s.as("hamlet").patch("/settings", { automatically_follow_topics_policy: 2 }));
    expectSuccess(await s.as("cordelia").patch("/settings", { automatically_follow_topics_where_mentioned: true }));
    expectSuccess(await s.as("shiva").patch("/settings", { automatically_follow_topics_where_mentioned: false }));
  });

  const sorted = (types: string[]) => [...types].sort();

  test("'follow on send': the sender follows a topic someone else started; mentioned users who opted in follow too", async () => {
    let body: any;
    const r = await verifyAction(s, async () => {
      body = expectSuccess(await s.as("hamlet").post("/messages", { type: "stream", to: channel, topic: "ducats", content: "@**Cordelia, Lear's daughter** and @**Shiva**, look" }));
    });
    expect(body.automatic_new_visibility_policy).toBe(3);
    expect(sorted(r.types.hamlet)).toEqual(["message", "muted_topics", "user_topic"]);
    expect(r.events.hamlet.find((e) => e.type === "user_topic")).toMatchObject({ stream_id: channel, topic_name: "ducats", visibility_policy: 3 });
    expect(sorted(r.types.cordelia)).toEqual(["message", "muted_topics", "user_topic"]);
    expect(r.events.cordelia.find((e) => e.type === "user_topic")).toMatchObject({ stream_id: channel, topic_name: "ducats", visibility_policy: 3 });
    // Mentioned, but opted out.
    expect(r.types.shiva).toEqual(["message"]);
    expect(r.types.othello).toEqual(["message"]);
    for (const name of ["desdemona", "iago", "polonius"]) expect(r.types[name]).toEqual([]);
  });

  test("already following: sending again changes nothing", async () => {
    const r = await verifyAction(s, () => send("hamlet", channel, "ducats", "again @**Cordelia, Lear's daughter**"), { viewers: ["hamlet", "cordelia"] });
    expect(r.types).toEqual({ hamlet: ["message"], cordelia: ["message"] });
  });

  // Zulip's do_send_messages sets the topic policies before it queues the message event
  // (zerver/actions/message_send.py), so a client learns it follows the topic first.
  test("Zulip's order: muted_topics and user_topic come before the message event", async () => {
    const r = await verifyAction(s, () => send("hamlet", channel, "pound of flesh", "@**Cordelia, Lear's daughter** hi"), { viewers: ["hamlet", "cordelia"] });
    expect(r.types.hamlet).toEqual(["muted_topics", "user_topic", "message"]);
    expect(r.types.cordelia).toEqual(["muted_topics", "user_topic", "message"]);
  });

  // Zulip: "Explicitly muted takes precedence over this setting" — mentioned users who
  // muted the topic (or already follow it) are skipped.
  test("a mentioned user who muted the topic stays muted", async () => {
    expectSuccess(await s.as("cordelia").post("/user_topics", { stream_id: channel, topic: "casket", visibility_policy: 1 }));
    const r = await verifyAction(s, () => send("othello", channel, "casket", "@**Cordelia, Lear's daughter** choose"), { viewers: ["cordelia"] });
    expect(r.types.cordelia).toEqual(["message"]);
    const topics = expectSuccess(await s.as("cordelia").post("/register", { fetch_event_types: ["user_topic"] })).user_topics;
    expect(topics.find((t: any) => t.topic_name === "casket").visibility_policy).toBe(1);
  });
});

describe("message reports", () => {
  test("Notification Bot posts the report to the moderation request channel's subscribers only", async () => {
    const moderation = await s.createChannel("iago", "moderation", ["iago", "shiva"], { invite_only: true });
    expectSuccess(await s.as("iago").patch("/realm", { moderation_request_channel_id: moderation }));
    const general = await s.createChannel("othello", "general chat", ["hamlet", "cordelia"]);
    const reported = await send("othello", general, "insults", "You are a fishmonger");
    // Not the channel's first message, so no first_message_id change rides along.
    await send("iago", moderation, "welcome", "Reports arrive here.");
    const r = await verifyAction(s, () => s.as("hamlet").post(`/messages/${reported}/report`, { report_type: "harassment", description: "Rude." }));
    expect(r.types.iago).toEqual(["message"]);
    expect(r.types.shiva).toEqual(["message"]);
    const m = r.events.shiva[0].message;
    expect(m).toMatchObject({ stream_id: moderation, subject: "Othello, the Moor of Venice's moderation requests", sender_email: expect.stringContaining("notification-bot") });
    expect(m.content).toContain("reported");
    expect(m.content).toContain("**harassment**");
    expect(m.content).toContain("Rude.");
    // The reporter, the reported sender, and everyone outside the private channel
    // (the owner, who could see its metadata, included) hear nothing.
    expect(others(r, "iago", "shiva")).toEqual([]);
    // Another user's report of the same message goes to the same topic, the same people.
    const again = await verifyAction(s, () => s.as("cordelia").post(`/messages/${reported}/report`, { report_type: "spam", description: "" }));
    expect(again.events.iago[0].message.subject).toBe(m.subject);
    expect(again.types.iago).toEqual(["message"]);
    expect(again.types.shiva).toEqual(["message"]);
    expect(others(again, "iago", "shiva")).toEqual([]);
  });
});

describe("tus uploads", () => {
  const basic = (u: TestUser) => "Basic " + Buffer.from(`${u.email}:${u.apiKey}`).toString("base64");
  const b64 = (text: string) => Buffer.from(text).toString("base64");

  test("only the completed upload sends attachment/add, to the uploader only", async () => {
    const hamlet = s.users.hamlet;
    const data = Buffer.from("To be, or not to be, that is the question.");
    const half = 20;
    let location = "";
    // Creating the upload and sending the first chunk tell nobody anything.
    const partial = await verifyAction(s, async () => {
      const created = await fetch(`${s.url}/api/v1/tus/`, {
        method: "POST",
        headers: {
          authorization: basic(hamlet),
          "tus-resumable": "1.0.0",
          "upload-length": String(data.length),
          "upload-metadata": `filename ${b64("soliloquy.txt")},filetype ${b64("text/plain")}`,
        },
      });
      expect(created.status).toBe(201);
      location = new URL(created.headers.get("location")!, s.url).href;
      const first = await fetch(location, {
        method: "PATCH",
        headers: { authorization: basic(hamlet), "tus-resumable": "1.0.0", "upload-offset": "0", "content-type": "application/offset+octet-stream" },
        body: data.subarray(0, half),
      });
      expect(first.status).toBe(204);
      expect(first.headers.get("upload-offset")).toBe(String(half));
    });
    expect(others(partial)).toEqual([]);

    let final: any;
    const r = await verifyAction(s, async () => {
      const res = await fetch(location, {
        method: "PATCH",
        headers: { authorization: basic(hamlet), "tus-resumable": "1.0.0", "upload-offset": String(half), "content-type": "application/offset+octet-stream" },
        body: data.subarray(half),
      });
      expect(res.status).toBe(200);
      final = await res.json();
    });
    expect(final.url).toMatch(/\/soliloquy\.txt$/);
    expect(r.types.hamlet).toEqual(["attachment/add"]);
    expect(others(r, "hamlet")).toEqual([]);
    const event = r.events.hamlet[0];
    const listed = expectSuccess(await s.as("hamlet").get("/attachments"));
    const attachment = listed.attachments.find((a: any) => final.url.endsWith(a.path_id));
    expect(event.attachment).toEqual(attachment);
    expect(event.attachment).toMatchObject({ name: "soliloquy.txt", size: data.length, message_ids: [] });
    expect(event.upload_space_used).toBe(listed.upload_space_used);
  });

  test("an abandoned (terminated) upload sends nothing", async () => {
    const queue = await captureEvents(s, ["hamlet"]);
    const created = await fetch(`${s.url}/api/v1/tus/`, {
      method: "POST",
      headers: { authorization: basic(s.users.hamlet), "tus-resumable": "1.0.0", "upload-length": "10", "upload-metadata": `filename ${b64("x.bin")}` },
    });
    expect(created.status).toBe(201);
    const location = new URL(created.headers.get("location")!, s.url).href;
    const gone = await fetch(location, { method: "DELETE", headers: { authorization: basic(s.users.hamlet), "tus-resumable": "1.0.0" } });
    expect(gone.status).toBe(204);
    expect((await queue.collect()).hamlet).toEqual([]);
  });
});
