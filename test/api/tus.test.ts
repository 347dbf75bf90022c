import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Upload } from "tus-js-client";
import { doExpireTusUploads } from "../../src/actions/tus";
import { expectSuccess, startTestServer, type TestServer, type TestUser } from "../kit";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.stop();
  rmSync(s.dataDir, { recursive: true, force: true });
});

const basic = (u: TestUser) => "Basic " + Buffer.from(`${u.email}:${u.apiKey}`).toString("base64");

function bytes(n: number): Buffer {
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i++) out[i] = (i * 31 + (i >> 8)) & 0xff;
  return out;
}

/** Runs a tus-js-client upload to completion; resolves with the final response's JSON body. */
function tusUpload(baseUrl: string, user: TestUser, data: Buffer, options: { filename: string; filetype?: string; uploadUrl?: string; chunkSize?: number }): Promise<any> {
  return new Promise((resolve, reject) => {
    const upload = new Upload(data, {
      endpoint: `${baseUrl}/api/v1/tus/`,
      uploadUrl: options.uploadUrl ?? null,
      headers: { authorization: basic(user) },
      chunkSize: options.chunkSize ?? Infinity,
      retryDelays: null,
      metadata: { filename: options.filename, filetype: options.filetype ?? "application/octet-stream" },
      onSuccess: ({ lastResponse }) => {
        try {
          resolve(JSON.parse(lastResponse.getBody()));
        } catch (e) {
          reject(e);
        }
      },
      onError: reject,
    });
    upload.start();
  });
}

const tusHeaders = (user: TestUser | null, extra: Record<string, string> = {}) => ({
  "tus-resumable": "1.0.0",
  ...(user ? { authorization: basic(user) } : {}),
  ...extra,
});

describe("tus resumable uploads", () => {
  test("OPTIONS advertises tus 1.0.0 with creation and termination and the size limit", async () => {
    const res = await fetch(`${s.url}/api/v1/tus`, { method: "OPTIONS" });
    expect(res.status).toBe(204);
    expect(res.headers.get("tus-version")).toBe("1.0.0");
    expect(res.headers.get("tus-extension")).toBe("creation,termination");
    expect(res.headers.get("tus-max-size")).toBe(String(25 * 1024 * 1024));
  });

  test("tus-js-client uploads in chunks; the final response names the file like POST /user_uploads", async () => {
    const data = bytes(300_000);
    const body = await tusUpload(s.url, s.users.hamlet, data, { filename: "big photo.png", filetype: "image/png", chunkSize: 64 * 1024 });
    expect(body.url).toMatch(/^\/user_uploads\/\d+\/[A-Za-z0-9_-]+\/big-photo\.png$/);
    expect(body.filename).toBe("big photo.png");
    const res = await fetch(s.url + body.url, { headers: { authorization: basic(s.users.hamlet) } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(Buffer.from(await res.arrayBuffer()).equals(data)).toBe(true);
    const listed = expectSuccess(await s.as("hamlet").get("/attachments")).attachments;
    expect(listed.find((a: any) => body.url.endsWith(a.path_id))).toMatchObject({ name: "big photo.png", size: 300_000 });
    // The finished upload left nothing in the partial folder.
    expect(readdirSync(join(s.dataDir, "uploads", "partial"))).toEqual([]);
  });

  test("a nameless upload is stored as uploaded-file", async () => {
    const body = await tusUpload(s.url, s.users.hamlet, bytes(10), { filename: "" });
    expect(body.filename).toBe("uploaded-file");
  });

  test("a partial or stored file replaced by a link is not followed: HEAD, PATCH and downloads refuse it, and its target is untouched", async () => {
    const outside = join(s.dataDir, "..", `hearth-outside-${Date.now()}.txt`);
    writeFileSync(outside, "not Hearth's file, 41 bytes long, really.");
    try {
      const created = await fetch(`${s.url}/api/v1/tus`, {
        method: "POST",
        headers: tusHeaders(s.users.hamlet, { "upload-length": "100", "upload-metadata": `filename ${Buffer.from("b.txt").toString("base64")}` }),
      });
      const location = new URL(created.headers.get("location")!, s.url).toString();
      const partial = join(s.dataDir, "uploads", "partial", location.split("/").pop()!);
      rmSync(partial);
      symlinkSync(outside, partial);
      const head = await fetch(location, { method: "HEAD", headers: tusHeaders(s.users.hamlet) });
      expect(head.status).toBe(410);
      expect(head.headers.get("upload-offset")).toBeNull();
      const patch = await fetch(location, { method: "PATCH", headers: tusHeaders(s.users.hamlet, { "upload-offset": "41", "content-type": "application/offset+octet-stream" }), body: "appended" });
      expect(patch.status).toBe(410);
      expect(readFileSync(outside, "utf8")).toBe("not Hearth's file, 41 bytes long, really.");
      // Terminating it removes the link, not what it points to.
      expect((await fetch(location, { method: "DELETE", headers: tusHeaders(s.users.hamlet) })).status).toBe(204);
      expect(existsSync(partial)).toBe(false);
      expect(readFileSync(outside, "utf8")).toBe("not Hearth's file, 41 bytes long, really.");

      // A finished upload's file swapped for a link afterwards is not served either.
      const done = await tusUpload(s.url, s.users.hamlet, bytes(64), { filename: "c.bin" });
      const stored = join(s.dataDir, "uploads", decodeURIComponent(done.url.slice("/user_uploads/".length)));
      expect((await fetch(s.url + done.url, { headers: { authorization: basic(s.users.hamlet) } })).status).toBe(200);
      rmSync(stored);
      symlinkSync(outside, stored);
      const served = await fetch(s.url + done.url, { headers: { authorization: basic(s.users.hamlet) } });
      expect(served.status).toBe(404);
      expect(await served.text()).not.toContain("not Hearth's file");
    } finally {
      rmSync(outside, { force: true });
    }
  });

  test("refusals: no credentials 401, too large 413, no length 411, wrong version 412, others' uploads 404, wrong offset 409", async () => {
    const post = (headers: Record<string, string>) => fetch(`${s.url}/api/v1/tus`, { method: "POST", headers });
    expect((await post(tusHeaders(null, { "upload-length": "10" }))).status).toBe(401);
    const tooLarge = await post(tusHeaders(s.users.hamlet, { "upload-length": String(25 * 1024 * 1024 + 1) }));
    expect(tooLarge.status).toBe(413);
    expect(typeof (await tooLarge.json()).message).toBe("string");
    expect((await post(tusHeaders(s.users.hamlet))).status).toBe(411);
    expect((await post(tusHeaders(s.users.hamlet, { "upload-defer-length": "1" }))).status).toBe(411);
    expect((await post({ authorization: basic(s.users.hamlet), "tus-resumable": "0.2.2", "upload-length": "10" })).status).toBe(412);

    const created = await post(tusHeaders(s.users.hamlet, { "upload-length": "10", "upload-metadata": `filename ${Buffer.from("a.txt").toString("base64")}` }));
    expect(created.status).toBe(201);
    const location = new URL(created.headers.get("location")!, s.url).toString();
    const partial = join(s.dataDir, "uploads", "partial", location.split("/").pop()!);
    expect(statSync(partial).mode & 0o777).toBe(0o600);
    expect((await fetch(location, { method: "HEAD", headers: tusHeaders(s.users.othello) })).status).toBe(404);
    const patch = (user: TestUser, offset: number, body: string, type = "application/offset+octet-stream") =>
      fetch(location, { method: "PATCH", headers: tusHeaders(user, { "upload-offset": String(offset), "content-type": type }), body });
    expect((await patch(s.users.othello, 0, "0123456789")).status).toBe(404);
    expect((await patch(s.users.hamlet, 3, "3456789")).status).toBe(409);
    expect((await patch(s.users.hamlet, 0, "0123456789", "text/plain")).status).toBe(415);
    expect((await patch(s.users.hamlet, 0, "0123456789-and-more")).status).toBe(413);
    const head = await fetch(location, { method: "HEAD", headers: tusHeaders(s.users.hamlet) });
    expect([head.status, head.headers.get("upload-offset"), head.headers.get("upload-length")]).toEqual([200, "0", "10"]);
    // Termination removes the partial file.
    expect((await fetch(location, { method: "DELETE", headers: tusHeaders(s.users.hamlet) })).status).toBe(204);
    expect(existsSync(partial)).toBe(false);
    expect((await fetch(location, { method: "HEAD", headers: tusHeaders(s.users.hamlet) })).status).toBe(404);
  });

  test("uploads abandoned for a day are removed", async () => {
    const created = await fetch(`${s.url}/api/v1/tus`, { method: "POST", headers: tusHeaders(s.users.othello, { "upload-length": "100" }) });
    const id = created.headers.get("location")!.split("/").pop()!;
    const partial = join(s.dataDir, "uploads", "partial", id);
    expect(await doExpireTusUploads(s.server.h, Date.now() / 1000 + 3600)).toBe(0);
    expect(existsSync(partial)).toBe(true);
    expect(await doExpireTusUploads(s.server.h, Date.now() / 1000 + 86400 + 60)).toBe(1);
    expect(existsSync(partial)).toBe(false);
    const head = await fetch(new URL(created.headers.get("location")!, s.url), { method: "HEAD", headers: tusHeaders(s.users.othello) });
    expect(head.status).toBe(404);
  });

  test("an upload cut off mid-request resumes, even after a server restart", async () => {
    const data = bytes(200_000);
    const hamlet = s.users.hamlet;
    const created = await fetch(`${s.url}/api/v1/tus`, {
      method: "POST",
      headers: tusHeaders(hamlet, { "upload-length": String(data.length), "upload-metadata": `filename ${Buffer.from("resumed.bin").toString("base64")}` }),
    });
    expect(created.status).toBe(201);
    const path = created.headers.get("location")!;

    // Send the first 80 000 bytes, then drop the connection without finishing the body.
    const abort = new AbortController();
    let sent!: () => void;
    const firstPartSent = new Promise<void>((r) => (sent = r));
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(data.subarray(0, 80_000));
        sent();
      },
    });
    const cut = fetch(s.url + path, {
      method: "PATCH",
      headers: tusHeaders(hamlet, { "upload-offset": "0", "content-type": "application/offset+octet-stream" }),
      body,
      signal: abort.signal,
    }).catch(() => null);
    await firstPartSent;
    // Wait until the server has the bytes on disk, then cut.
    const partial = join(s.dataDir, "uploads", "partial", path.split("/").pop()!);
    for (let i = 0; i < 100 && statSync(partial).size < 80_000; i++) await Bun.sleep(20);
    abort.abort();
    await cut;
    let offset = 0;
    for (let i = 0; i < 100; i++) {
      const head = await fetch(s.url + path, { method: "HEAD", headers: tusHeaders(hamlet) });
      offset = Number(head.headers.get("upload-offset"));
      if (offset === 80_000) break;
      await Bun.sleep(20);
    }
    expect(offset).toBe(80_000);

    // Restart on the same data folder: the upload and its bytes are still there.
    const dataDir = s.dataDir;
    await s.server.stop();
    s = await startTestServer({ dataDir });
    s.users.hamlet = hamlet;
    const body2 = await tusUpload(s.url, hamlet, data, { filename: "resumed.bin", uploadUrl: s.url + path, chunkSize: 50_000 });
    const res = await fetch(s.url + body2.url, { headers: { authorization: basic(hamlet) } });
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(data)).toBe(true);
  });
});
