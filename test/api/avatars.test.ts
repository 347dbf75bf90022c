import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectSuccess, recordPublished, startTestServer, type TestServer } from "../kit";
import { identiconPng } from "../../src/avatars/identicon";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47];
const auth = (name: keyof TestServer["users"]) => ({
  authorization: "Basic " + Buffer.from(`${s.users[name].email}:${s.users[name].apiKey}`).toString("base64"),
});
const pngSize = (bytes: Uint8Array) => {
  const v = new DataView(bytes.buffer, bytes.byteOffset);
  return [v.getUint32(16), v.getUint32(20)];
};

describe("avatars", () => {
  test("generated default avatars: 100px and 500px PNGs at the URL the user object names", async () => {
    const me = expectSuccess(await s.as("hamlet").get("/users/me"));
    const small = await fetch(me.avatar_url);
    expect(small.status).toBe(200);
    expect(small.headers.get("content-type")).toBe("image/png");
    const bytes = new Uint8Array(await small.arrayBuffer());
    expect([...bytes.slice(0, 4)]).toEqual(PNG_MAGIC);
    expect(pngSize(bytes)).toEqual([100, 100]);
    // The mobile app's rule for larger avatars: swap ".png" for "-medium.png".
    const medium = new Uint8Array(await (await fetch(me.avatar_url.replace(/\.png$/, "-medium.png"))).arrayBuffer());
    expect(pngSize(medium)).toEqual([500, 500]);
  });

  test("/avatar/{id} and /avatar/{id}/medium redirect there (with Basic auth, as the mobile app sends)", async () => {
    const me = expectSuccess(await s.as("hamlet").get("/users/me"));
    const res = await fetch(`${s.url}/avatar/${s.users.hamlet.id}`, { headers: auth("othello"), redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe(me.avatar_url);
    const medium = await fetch(`${s.url}/avatar/${s.users.hamlet.id}/medium`, { headers: auth("othello") });
    expect(medium.status).toBe(200);
    expect(pngSize(new Uint8Array(await medium.arrayBuffer()))).toEqual([500, 500]);
    expect((await fetch(`${s.url}/avatar/${s.users.hamlet.id}`)).status).toBe(401);
    expect((await fetch(`${s.url}/avatar/99999`, { headers: auth("othello") })).status).toBe(404);
  });

  test("a wrong or stale file name is not served", async () => {
    const res = await fetch(`${s.url}/user_avatars/${s.users.hamlet.id}/${"0".repeat(32)}.png`);
    expect(res.status).toBe(404);
    expect((await fetch(`${s.url}/user_avatars/${s.users.hamlet.id}/..%2F..%2Fdb%2Fdata.mdb`)).status).toBe(404);
  });

  test("upload, event to everyone, new URL serves the upload; reset goes back to generated", async () => {
    const published = recordPublished(s);
    const before = expectSuccess(await s.as("cordelia").get("/users/me"));
    const image = identiconPng("some picture", 64);
    const body = expectSuccess(
      await s.as("cordelia").post("/users/me/avatar", { file: new File([image as BlobPart], "me.png", { type: "image/png" }) }, { multipart: true }),
    );
    expect(body.avatar_url).not.toBe(before.avatar_url);
    const served = new Uint8Array(await (await fetch(body.avatar_url)).arrayBuffer());
    expect([...served]).toEqual([...image]);
    expect((await fetch(before.avatar_url)).status).toBe(404);
    const [event] = published.ofType("realm_user");
    expect(event.event).toEqual({
      type: "realm_user",
      op: "update",
      person: {
        user_id: s.users.cordelia.id,
        avatar_url: body.avatar_url,
        avatar_source: "U",
        avatar_url_medium: body.avatar_url.replace(/\.png$/, "-medium.png"),
        avatar_version: before.avatar_version + 1,
      },
    });
    expect(event.userIds).toContain(s.users.hamlet.id);
    expectSuccess(await s.as("cordelia").delete("/users/me/avatar"));
    const after = expectSuccess(await s.as("cordelia").get("/users/me"));
    expect(after.avatar_version).toBe(before.avatar_version + 2);
    expect(pngSize(new Uint8Array(await (await fetch(after.avatar_url)).arrayBuffer()))).toEqual([100, 100]);
  });

  test("a bot's new avatar: realm_user to everyone, no realm_bot update since FL 474 (bot objects carry no avatar)", async () => {
    const bot = await s.createBot("cordelia", { full_name: "Portrait bot", short_name: "portraitbot" });
    const client = s.as(bot);
    const published = recordPublished(s);
    const image = identiconPng("bot picture", 64);
    const body = expectSuccess(await client.post("/users/me/avatar", { file: new File([image as BlobPart], "bot.png", { type: "image/png" }) }, { multipart: true }));
    expect(published.ofType("realm_bot")).toEqual([]);
    const update = published.ofType("realm_user").find((e) => "avatar_url" in e.event.person);
    expect(update?.event.person).toMatchObject({ user_id: bot.id, avatar_url: body.avatar_url });
    for (const who of ["cordelia", "iago", "hamlet"] as const) expect(update?.userIds).toContain(s.users[who].id);
  });

  test("bad uploads are rejected and nothing changes", async () => {
    const before = expectSuccess(await s.as("othello").get("/users/me"));
    expectError(await s.as("othello").post("/users/me/avatar", {}, { multipart: true }), 400, "BAD_REQUEST", "You must upload exactly one avatar.");
    expectError(
      await s.as("othello").post("/users/me/avatar", { file: new File(["<svg onload=alert(1)>"], "x.svg") }, { multipart: true }),
      400,
      "BAD_REQUEST",
      "Invalid image format",
    );
    expect(expectSuccess(await s.as("othello").get("/users/me")).avatar_version).toBe(before.avatar_version);
  });
});

describe("bot avatars (POST /bots, PATCH /bots/{bot_id} with one file)", () => {
  const picture = (seed: string) => identiconPng(seed, 64);
  const file = (bytes: Uint8Array, name = "avatar.png") => new File([bytes as BlobPart], name, { type: "image/png" });
  const bytesAt = async (url: string) => new Uint8Array(await (await fetch(url)).arrayBuffer());

  test("a bot created with a file shows it, in the answer and in the realm_user add event", async () => {
    const image = picture("created with a face");
    const published = recordPublished(s);
    const body = expectSuccess(await s.as("cordelia").post("/bots", { full_name: "Face bot", short_name: "facebot", avatar: file(image) }, { multipart: true }));
    expect(await bytesAt(body.avatar_url)).toEqual(new Uint8Array(image));
    const [added] = published.ofType("realm_user");
    expect(added.event.person.avatar_url).toBe(body.avatar_url);
    const listed = expectSuccess(await s.as("cordelia").get("/bots")).bots.find((b: any) => b.user_id === body.user_id);
    expect(listed.avatar_url).toBe(body.avatar_url);
  });

  test("the owner changes a bot's avatar and name in one request; everyone's realm_user follows, no realm_bot update (FL 474)", async () => {
    const bot = await s.createBot("cordelia", { full_name: "Plain bot", short_name: "plainbot" });
    const image = picture("new face");
    const published = recordPublished(s);
    const body = expectSuccess(await s.as("cordelia").patch(`/bots/${bot.id}`, { full_name: "Pictured bot", avatar: file(image) }, { multipart: true }));
    expect(body.full_name).toBe("Pictured bot");
    expect(await bytesAt(body.avatar_url)).toEqual(new Uint8Array(image));
    const avatarUpdate = published.ofType("realm_user").find((e) => "avatar_url" in e.event.person);
    expect(avatarUpdate?.event.person).toMatchObject({ user_id: bot.id, avatar_url: body.avatar_url, avatar_source: "U" });
    expect(avatarUpdate?.userIds).toContain(s.users.hamlet.id);
    expect(published.ofType("realm_bot")).toEqual([]);
    const seen = expectSuccess(await s.as("hamlet").get(`/users/${bot.id}`)).user;
    expect(seen.avatar_url).toBe(body.avatar_url);
    expect(seen.full_name).toBe("Pictured bot");
  });

  test("refused uploads change nothing: another user's bot, two files, a file that is no image", async () => {
    const bot = await s.createBot("cordelia", { full_name: "Guarded bot", short_name: "guardedbot" });
    const before = expectSuccess(await s.as("cordelia").get(`/users/${bot.id}`)).user;
    // The same refusal as without a file: the file is read only once the caller may change the bot.
    expectError(await s.as("hamlet").patch(`/bots/${bot.id}`, { avatar: file(picture("intruder")) }, { multipart: true }), 400, "UNAUTHORIZED_PRINCIPAL", "Insufficient permission");
    expectError(await s.as("hamlet").patch(`/bots/${bot.id}`, { full_name: "Intruded" }), 400, "UNAUTHORIZED_PRINCIPAL", "Insufficient permission");
    // Two files too: how many there are is looked at only once the caller may change the bot.
    expectError(
      await s.as("hamlet").patch(`/bots/${bot.id}`, { a: file(picture("one")), b: file(picture("two")) }, { multipart: true }),
      400,
      "UNAUTHORIZED_PRINCIPAL",
      "Insufficient permission",
    );
    expectError(
      await s.as("cordelia").patch(`/bots/${bot.id}`, { full_name: "Renamed", a: file(picture("one")), b: file(picture("two")) }, { multipart: true }),
      400,
      "BAD_REQUEST",
      "You may only upload one file at a time",
    );
    expectError(
      await s.as("cordelia").patch(`/bots/${bot.id}`, { full_name: "Renamed", avatar: new File(["<svg/>"], "x.svg") }, { multipart: true }),
      400,
      "BAD_REQUEST",
      "Invalid image format",
    );
    const after = expectSuccess(await s.as("cordelia").get(`/users/${bot.id}`)).user;
    expect(after.full_name).toBe(before.full_name);
    expect(after.avatar_url).toBe(before.avatar_url);
    expectError(
      await s.as("cordelia").post("/bots", { full_name: "Broken face", short_name: "brokenface", avatar: new File(["not an image"], "x.gif") }, { multipart: true }),
      400,
      "BAD_REQUEST",
      "Invalid image format",
    );
    // Who may create bots is checked before the file is looked at.
    expectError(
      await s.as("polonius").post("/bots", { full_name: "Guest face", short_name: "guestface", avatar: new File(["not an image"], "x.gif") }, { multipart: true }),
      400,
      "UNAUTHORIZED_PRINCIPAL",
      "Insufficient permission",
    );
    expectError(
      await s.as("polonius").post("/bots", { full_name: "Guest faces", short_name: "guestfaces", a: file(picture("one")), b: file(picture("two")) }, { multipart: true }),
      400,
      "UNAUTHORIZED_PRINCIPAL",
      "Insufficient permission",
    );
    const names = expectSuccess(await s.as("iago").get("/users")).members.map((u: any) => u.full_name);
    expect(names).not.toContain("Broken face");
  });
});
