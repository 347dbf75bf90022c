import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { expectError, expectSuccess, recordPublished, startTestServer, type CastName, type TestServer } from "../kit";
import { rawGet } from "../kit/raw-http";
import { doExpireUnclaimedUploads } from "../../src/actions/uploads";
import { temporaryUploadUrl } from "../../src/views/uploads";
import { getAttachmentByPath } from "../../src/store/uploads";
import { doExpireMessages } from "../../src/actions/retention";
import { getRealm, putRealm } from "../../src/store/realm";
import { runRealmDeletionIfDue } from "../../src/actions/realm";

let s: TestServer;
let published: ReturnType<typeof recordPublished>;
let realmId: number;

beforeAll(async () => {
  s = await startTestServer();
  published = recordPublished(s);
  realmId = getRealm(s.server.h.store)!.id;
  await s.createChannel("iago", "Denmark", ["iago", "hamlet", "othello", "polonius"]);
  await s.createChannel("iago", "Verona", ["iago", "hamlet", "othello"]);
  await s.createChannel("iago", "secret", ["iago", "hamlet"], { invite_only: true });
});
afterAll(() => s.stop());

const authOf = (server: TestServer, who: CastName) => ({ authorization: "Basic " + Buffer.from(`${server.users[who].email}:${server.users[who].apiKey}`).toString("base64") });
const auth = (who: CastName) => authOf(s, who);

async function upload(who: CastName, name: string, content: string | Uint8Array, type = "application/octet-stream") {
  const file = new File([content as BlobPart], name, { type });
  return expectSuccess(await s.as(who).post("/user_uploads", { file }, { multipart: true }));
}

const fetchAs = (who: CastName | null, url: string) => fetch(s.url + url, { headers: who ? auth(who) : {} });

async function sendToChannel(who: CastName, channel: string, content: string): Promise<number> {
  return expectSuccess(await s.as(who).post("/messages", { type: "stream", to: channel, topic: "files", content })).id;
}

describe("POST /user_uploads and GET /user_uploads/<path_id>", () => {
  test("upload answers url, uri and filename; the uploader reads the bytes back with headers that keep browsers safe", async () => {
    published.clear();
    const body = await upload("hamlet", "my notes (draft).txt", "to be or not to be");
    expect(body.url).toMatch(new RegExp(`^/user_uploads/\\d+/[A-Za-z0-9_-]+/my-notes-draft\\.txt$`));
    expect(body.uri).toBe(body.url);
    expect(body.filename).toBe("my notes (draft).txt");
    const res = await fetchAs("hamlet", body.url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("to be or not to be");
    expect(res.headers.get("content-type")).toStartWith("text/plain");
    expect(res.headers.get("content-disposition")).toStartWith("attachment;");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    // Only the uploader hears about it.
    const adds = published.ofType("attachment");
    expect(adds.map((e) => [e.event.op, e.userIds])).toEqual([["add", [s.users.hamlet.id]]]);
    expect(adds[0].event.attachment).toMatchObject({ name: "my notes (draft).txt", size: 18, message_ids: [] });
  });

  test("safe images are shown inline, SVG is a download", async () => {
    const png = await upload("hamlet", "pic.png", new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]));
    const res = await fetchAs("hamlet", png.url);
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(res.headers.get("content-disposition")).toStartWith("inline;");
    const svg = await upload("hamlet", "x.svg", "<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>", "image/svg+xml");
    expect((await fetchAs("hamlet", svg.url)).headers.get("content-disposition")).toStartWith("attachment;");
  });

  test("no file, two files, or a file over max_file_upload_size_mib are refused and store nothing", async () => {
    expectError(await s.as("hamlet").post("/user_uploads", {}, { multipart: true }), 400, "BAD_REQUEST", "You must specify a file to upload");
    const two = await s.as("hamlet").post("/user_uploads", { a: new File(["1"], "a.txt"), b: new File(["2"], "b.txt") }, { multipart: true });
    expectError(two, 400, "BAD_REQUEST");
    const before = expectSuccess(await s.as("othello").get("/attachments")).attachments.length;
    const big = await s.as("othello").post("/user_uploads", { file: new File([new Uint8Array(25 * 1024 * 1024 + 1)], "big.bin") }, { multipart: true });
    expectError(big, 400, "BAD_REQUEST", /maximum upload size \(25 MiB\)/);
    expect(expectSuccess(await s.as("othello").get("/attachments")).attachments.length).toBe(before);
  });

  test("HEARTH_MAX_UPLOAD_MIB sets the limit: register, tus discovery, POST /user_uploads and tus creation follow it", async () => {
    const small = await startTestServer({ env: { HEARTH_MAX_UPLOAD_MIB: "1" } });
    try {
      const state = expectSuccess(await small.as("hamlet").post("/register", { fetch_event_types: JSON.stringify(["realm"]) }));
      expect(state.max_file_upload_size_mib).toBe(1);
      const discovery = await fetch(`${small.url}/api/v1/tus`, { method: "OPTIONS" });
      expect(discovery.headers.get("tus-max-size")).toBe(String(1024 * 1024));
      const over = await small.as("hamlet").post("/user_uploads", { file: new File([new Uint8Array(1024 * 1024 + 1)], "big.bin") }, { multipart: true });
      expectError(over, 400, "BAD_REQUEST", /maximum upload size \(1 MiB\)/);
      const creation = await fetch(`${small.url}/api/v1/tus`, {
        method: "POST",
        headers: { ...authOf(small, "hamlet"), "tus-resumable": "1.0.0", "upload-length": String(1024 * 1024 + 1) },
      });
      expect(creation.status).toBe(413);
      expectSuccess(await small.as("hamlet").post("/user_uploads", { file: new File([new Uint8Array(1024 * 1024)], "fits.bin") }, { multipart: true }));
    } finally {
      await small.stop();
    }
  });

  test("a failed commit leaves no file behind", async () => {
    const store = s.server.h.store;
    const realmDir = join(s.dataDir, "uploads", String(realmId));
    const before = readdirSync(realmDir).sort();
    const commit = store.commit;
    store.commit = () => {
      store.commit = commit;
      return Promise.reject(new Error("disk full (simulated)"));
    };
    const errors = console.error;
    console.error = () => {};
    try {
      const res = await s.as("hamlet").post("/user_uploads", { file: new File(["lost"], "lost.txt") }, { multipart: true });
      expect(res.status).toBe(500);
    } finally {
      store.commit = commit;
      console.error = errors;
    }
    expect(readdirSync(realmDir).sort()).toEqual(before);
  });

  test("files and folders on disk are private to the server's user", async () => {
    const { url } = await upload("hamlet", "private.txt", "secret");
    const file = join(s.dataDir, "uploads", decodeURIComponent(url.slice("/user_uploads/".length)));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(file, "..")).mode & 0o777).toBe(0o700);
    expect(statSync(join(s.dataDir, "uploads")).mode & 0o777).toBe(0o700);
  });
});

describe("who may read an upload", () => {
  test("unshared: only the uploader; others and anonymous get nothing", async () => {
    const { url } = await upload("hamlet", "mine.txt", "mine");
    expect((await fetchAs("hamlet", url)).status).toBe(200);
    expect((await fetchAs("othello", url)).status).toBe(404);
    expect((await fetchAs(null, url)).status).toBe(401);
    const wrongKey = await fetch(s.url + url, { headers: { authorization: "Basic " + Buffer.from(`${s.users.hamlet.email}:nope`).toString("base64") } });
    expect(wrongKey.status).toBe(401);
  });

  test("a direct message shares with its recipients only", async () => {
    const { url } = await upload("hamlet", "dm.txt", "for othello");
    expectSuccess(await s.as("hamlet").post("/messages", { type: "private", to: [s.users.othello.id], content: `[dm.txt](${url})` }));
    expect((await fetchAs("othello", url)).status).toBe(200);
    expect((await fetchAs("cordelia", url)).status).toBe(404);
    expect((await fetchAs("polonius", url)).status).toBe(404);
  });

  test("a public channel shares with members who may read it, not with a guest outside it", async () => {
    const { url } = await upload("hamlet", "verona.txt", "for verona");
    await sendToChannel("hamlet", "Verona", `[verona.txt](${url})`);
    expect((await fetchAs("othello", url)).status).toBe(200);
    // Not subscribed, but public history is readable to members.
    expect((await fetchAs("cordelia", url)).status).toBe(200);
    expect((await fetchAs("polonius", url)).status).toBe(404);
  });

  test("a guest subscribed to the channel may read it", async () => {
    const { url } = await upload("hamlet", "denmark.txt", "for denmark");
    await sendToChannel("hamlet", "Denmark", `[denmark.txt](${url})`);
    expect((await fetchAs("polonius", url)).status).toBe(200);
  });

  test("a private channel shares with its subscribers only", async () => {
    const { url } = await upload("hamlet", "secret.txt", "classified");
    await sendToChannel("hamlet", "secret", `[secret.txt](${url})`);
    expect((await fetchAs("iago", url)).status).toBe(200);
    expect((await fetchAs("othello", url)).status).toBe(404);
    expect((await fetchAs("cordelia", url)).status).toBe(404);
  });

  test("linking someone else's file one cannot read grants nothing", async () => {
    const { url } = await upload("hamlet", "not-yours.txt", "hamlet's");
    // Othello guessed the URL: his message links it, but does not share it.
    await sendToChannel("othello", "Verona", `[look](${url})`);
    expect((await fetchAs("othello", url)).status).toBe(404);
    expect((await fetchAs("cordelia", url)).status).toBe(404);
    const mine = expectSuccess(await s.as("hamlet").get("/attachments")).attachments.find((a: any) => url.endsWith(a.path_id));
    expect(mine.message_ids).toEqual([]);
  });

  test("whoever may read a file can share it on (the API docs' resharing rule)", async () => {
    const { url } = await upload("hamlet", "pass-on.txt", "pass it on");
    expectSuccess(await s.as("hamlet").post("/messages", { type: "private", to: [s.users.othello.id], content: `[pass-on.txt](${url})` }));
    expect((await fetchAs("cordelia", url)).status).toBe(404);
    expectSuccess(await s.as("othello").post("/messages", { type: "private", to: [s.users.cordelia.id], content: `[pass-on.txt](${url})` }));
    expect((await fetchAs("cordelia", url)).status).toBe(200);
  });

  test("a non-ASCII file name survives the URL, the Markdown link and the download", async () => {
    const { url, filename } = await upload("hamlet", "Ünïcødé café.txt", "accents");
    expect(filename).toBe("Ünïcødé café.txt");
    expect(url).toEndWith("/" + encodeURIComponent("Ünïcødé-café.txt"));
    expectSuccess(await s.as("hamlet").post("/messages", { type: "private", to: [s.users.othello.id], content: `[café](${url})` }));
    const res = await fetchAs("othello", url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-disposition")).toContain(`filename*=UTF-8''${encodeURIComponent("Ünïcødé café.txt")}`);
  });

  test("has:attachment narrows to messages linking uploads", async () => {
    const { url } = await upload("hamlet", "narrow.txt", "x");
    const id = await sendToChannel("hamlet", "Verona", `[narrow.txt](${url})`);
    const plain = await sendToChannel("hamlet", "Verona", "no file here");
    const res = expectSuccess(
      await s.as("hamlet").get("/messages", { anchor: "newest", num_before: 50, num_after: 0, narrow: [{ operator: "has", operand: "attachment" }] }),
    );
    const ids = res.messages.map((m: any) => m.id);
    expect(ids).toContain(id);
    expect(ids).not.toContain(plain);
  });
});

describe("path traversal", () => {
  test("a file name with `..` and slashes stays one name inside its own folder", async () => {
    for (const name of ["../../../evil.txt", "..", "a/../../b\\..\\c.txt"]) {
      const { url, filename } = await upload("hamlet", name, "evil");
      expect(filename).toBe(name);
      const pathId = decodeURIComponent(url.slice("/user_uploads/".length));
      const segments = pathId.split("/");
      expect(segments.length).toBe(3);
      expect(segments[2]).not.toMatch(/^\.\.?$/);
      expect(existsSync(join(s.dataDir, "uploads", pathId))).toBe(true);
    }
  });

  test("encoded and literal `..` never leave the uploads folder", async () => {
    const { url } = await upload("hamlet", "t.txt", "t");
    const headers = auth("hamlet");
    for (const path of [
      "/user_uploads/../db/data.mdb",
      "/user_uploads/%2e%2e/db/data.mdb",
      "/user_uploads/%2e%2e%2fdb%2fdata.mdb",
      `/user_uploads/${realmId}/..%2f..%2fdb%2fdata.mdb`,
      `${url}/..%2f..%2f..%2fdb%2fdata.mdb`,
      "/user_uploads/..%5c..%5cdb%5cdata.mdb",
      "/user_uploads/%252e%252e/db/data.mdb",
    ]) {
      const res = await rawGet(s.url, path, headers);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
      expect(res.body).not.toContain("MDB");
    }
  });
});

describe("temporary URLs", () => {
  test("GET /api/v1/user_uploads/{realm_id}/{filename} gives a URL that works without auth, for readers only", async () => {
    const { url } = await upload("hamlet", "temp.txt", "temporary");
    const apiPath = url.replace(/^\/user_uploads\//, "/user_uploads/");
    const { url: temp } = expectSuccess(await s.as("hamlet").get(apiPath));
    expect(temp).toMatch(/^\/user_uploads\/temporary\/[^/]+\/temp\.txt$/);
    const res = await fetch(s.url + temp);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("temporary");
    // Someone who may not read it gets no temporary URL either.
    expectError(await s.as("othello").get(apiPath), 404, "NOT_FOUND");
    expectError(await s.anonymous().get(apiPath), 401, "UNAUTHORIZED");
  });

  test("an expired or forged token is refused", async () => {
    const { url } = await upload("hamlet", "expiring.txt", "soon gone");
    const a = getAttachmentByPath(s.server.h.store, decodeURIComponent(url.slice("/user_uploads/".length)))!;
    const expired = temporaryUploadUrl(s.server.h, a, Date.now() / 1000 - 61);
    expect((await fetch(s.url + expired)).status).toBe(404);
    const fresh = temporaryUploadUrl(s.server.h, a);
    expect((await fetch(s.url + fresh)).status).toBe(200);
    const forged = fresh.replace(/\.(\d+)\./, (_m, exp) => `.${Number(exp) + 3600}.`);
    expect((await fetch(s.url + forged)).status).toBe(404);
  });
});

describe("GET /attachments, DELETE /attachments/{id}, events", () => {
  test("lists own uploads with the messages linking them: seconds (FL 443) and message_ids (FL 472)", async () => {
    const { url } = await upload("cordelia", "listed.txt", "12345");
    const id = await sendToChannel("cordelia", "Verona", `[listed.txt](${url})`);
    const body = expectSuccess(await s.as("cordelia").get("/attachments"));
    const a = body.attachments.find((x: any) => url.endsWith(x.path_id));
    expect(a).toMatchObject({ name: "listed.txt", size: 5, message_ids: [id] });
    expect("messages" in a).toBe(false);
    expect(Math.abs(a.create_time - Date.now() / 1000)).toBeLessThan(600);
    expect(Number.isInteger(a.create_time)).toBe(true);
    expect(body.upload_space_used).toBeGreaterThanOrEqual(5);
    // Others' uploads are not listed.
    expect(expectSuccess(await s.as("othello").get("/attachments")).attachments.some((x: any) => x.id === a.id)).toBe(false);
  });

  test("deleting: owner only; the file goes and the owner is told", async () => {
    const { url } = await upload("cordelia", "delete-me.txt", "bye");
    const a = expectSuccess(await s.as("cordelia").get("/attachments")).attachments.find((x: any) => url.endsWith(x.path_id));
    const file = join(s.dataDir, "uploads", a.path_id);
    expectError(await s.as("othello").delete(`/attachments/${a.id}`), 400, "BAD_REQUEST", "Invalid attachment");
    expectError(await s.as("cordelia").delete(`/attachments/999999`), 400, "BAD_REQUEST", "Invalid attachment");
    expect(existsSync(file)).toBe(true);
    published.clear();
    expectSuccess(await s.as("cordelia").delete(`/attachments/${a.id}`));
    expect(existsSync(file)).toBe(false);
    expect(existsSync(join(file, ".."))).toBe(false);
    expect((await fetchAs("cordelia", url)).status).toBe(404);
    const removes = published.ofType("attachment");
    expect(removes.map((e) => [e.event.op, e.event.attachment, e.userIds])).toEqual([["remove", { id: a.id }, [s.users.cordelia.id]]]);
  });

  test("sending claims (update event); editing the link away reports detached_uploads", async () => {
    const { url } = await upload("hamlet", "edit.txt", "e");
    published.clear();
    const id = await sendToChannel("hamlet", "Verona", `[edit.txt](${url})`);
    const updates = published.ofType("attachment");
    expect(updates.map((e) => [e.event.op, e.userIds])).toEqual([["update", [s.users.hamlet.id]]]);
    expect(updates[0].event.attachment.message_ids).toEqual([id]);
    expect(Math.abs(updates[0].event.attachment.create_time - Date.now() / 1000)).toBeLessThan(600);
    const edited = expectSuccess(await s.as("hamlet").patch(`/messages/${id}`, { content: "never mind" }));
    expect(edited.detached_uploads.map((a: any) => [a.name, a.message_ids])).toEqual([["edit.txt", []]]);
    expect(Math.abs(edited.detached_uploads[0].create_time - Date.now() / 1000)).toBeLessThan(600);
    const msg = expectSuccess(await s.as("hamlet").get(`/messages/${id}`)).message;
    expect(msg.has_attachment ?? false).toBe(false);
  });

  test("deleting the last message linking a file deletes the file; one still linked stays", async () => {
    const { url } = await upload("hamlet", "twice.txt", "2");
    const first = await sendToChannel("hamlet", "Verona", `[twice.txt](${url})`);
    const second = await sendToChannel("hamlet", "Verona", `again: [twice.txt](${url})`);
    const file = join(s.dataDir, "uploads", decodeURIComponent(url.slice("/user_uploads/".length)));
    expectSuccess(await s.as("hamlet").delete(`/messages/${first}`));
    expect(existsSync(file)).toBe(true);
    published.clear();
    expectSuccess(await s.as("hamlet").delete(`/messages/${second}`));
    expect(existsSync(file)).toBe(false);
    expect(published.ofType("attachment").map((e) => e.event.op)).toEqual(["remove"]);
  });

  test("message retention removes files no remaining message links", async () => {
    const { url } = await upload("hamlet", "old.txt", "old");
    await s.createChannel("desdemona", "Ephemeral", ["desdemona", "hamlet"], { message_retention_days: 1 });
    await sendToChannel("hamlet", "Ephemeral", `[old.txt](${url})`);
    const file = join(s.dataDir, "uploads", decodeURIComponent(url.slice("/user_uploads/".length)));
    expect(existsSync(file)).toBe(true);
    // Two days on, the channel's one-day retention removes the message, and with it the file.
    await doExpireMessages(s.server.h, Date.now() / 1000 + 2 * 86400);
    expect(existsSync(file)).toBe(false);
    expect(getAttachmentByPath(s.server.h.store, decodeURIComponent(url.slice("/user_uploads/".length)))).toBeUndefined();
  });
});

describe("housekeeping", () => {
  test("uploads never shared go after three weeks; shared ones stay; an organization's deletion removes all files", async () => {
    const t = await startTestServer();
    const h = t.server.h;
    try {
      const unshared = expectSuccess(await t.as("hamlet").post("/user_uploads", { file: new File(["u"], "u.txt") }, { multipart: true })).url;
      const shared = expectSuccess(await t.as("hamlet").post("/user_uploads", { file: new File(["s"], "s.txt") }, { multipart: true })).url;
      expectSuccess(await t.as("hamlet").post("/messages", { type: "private", to: [t.users.othello.id], content: `[s.txt](${shared})` }));
      const onDisk = (url: string) => existsSync(join(t.dataDir, "uploads", decodeURIComponent(url.slice("/user_uploads/".length))));
      expect(await doExpireUnclaimedUploads(h, Date.now() / 1000 + 20 * 86400)).toBe(0);
      expect(await doExpireUnclaimedUploads(h, Date.now() / 1000 + 22 * 86400)).toBe(1);
      expect([onDisk(unshared), onDisk(shared)]).toEqual([false, true]);
      expectSuccess(await t.as("desdemona").post("/realm/deactivate", { deletion_delay_days: 14 }));
      const realm = getRealm(h.store)!;
      await h.store.commit(() => putRealm(h.store, { ...realm, scheduled_deletion_date: Math.floor(Date.now() / 1000) - 1 }));
      expect(await runRealmDeletionIfDue(h.store)).toBe(true);
      expect(existsSync(join(t.dataDir, "uploads"))).toBe(false);
    } finally {
      await t.stop();
    }
  });
});

describe("file names found in review", () => {
  test("a part sent with an empty filename, and a long name of astral characters, both upload and serve", async () => {
    const body = new FormData();
    body.append("f", new Blob(["x"]), "");
    const res = await fetch(`${s.url}/api/v1/user_uploads`, { method: "POST", headers: auth("hamlet"), body });
    const nameless = (await res.json()) as any;
    expect(nameless.result).toBe("success");
    expect(nameless.url).toEndWith("/uploaded-file");
    // The file is the upload, not an unknown parameter.
    expect(nameless.ignored_parameters_unsupported).toBeUndefined();

    const long = await upload("hamlet", "a" + "𠀀".repeat(60) + ".txt", "y");
    expect(decodeURIComponent(long.url.split("/").pop())).toMatch(/^a𠀀+$/u);
    expect((await fetchAs("hamlet", long.url)).status).toBe(200);
  });
});
