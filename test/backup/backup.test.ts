/**
 * `hearth backup`, `restore` and `verify-backup`, run as a user would (CLI
 * subprocesses) against a running server's data folder: round trips that give the
 * same state to every user, a backup under a full-speed writer, damaged and hostile
 * archives, a backup killed halfway, and a store from a newer Hearth.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import * as tar from "tar";
import { ApiClient, expectError, expectSuccess, startTestServer, type TestServer, type CastName } from "../kit";
import { hearth, MAIN, tempDir } from "../kit/process";
import { identiconPng } from "../../src/avatars/identicon";
import { Store } from "../../src/store/db";
import { STORE_FORMAT_VERSION } from "../../src/store/format";

let s: TestServer;
let channelId: number;
let uploadUrl: string;
const uploadBytes = new Uint8Array(300_000).map((_, i) => (i * 7919) % 251);

beforeAll(async () => {
  s = await startTestServer();
  channelId = await s.createChannel("iago", "backups", ["hamlet", "othello", "polonius"]);
  uploadUrl = expectSuccess(await s.as("hamlet").post("/user_uploads", { file: new File([uploadBytes], "notes.bin") }, { multipart: true })).url;
  const first = expectSuccess(await s.as("hamlet").post("/messages", { type: "stream", to: channelId, topic: "plans", content: `See [notes](${uploadUrl}) :smile:` })).id;
  expectSuccess(await s.as("othello").post(`/messages/${first}/reactions`, { emoji_name: "tada" }));
  expectSuccess(await s.as("othello").post("/messages", { type: "private", to: JSON.stringify([s.users.hamlet.id]), content: "a direct message" }));
  expectSuccess(await s.as("iago").post("/realm/emoji/backup_parrot", { file: new File([identiconPng("parrot", 32) as BlobPart], "e.png", { type: "image/png" }) }, { multipart: true }));
  expectSuccess(await s.as("hamlet").post("/drafts", { drafts: JSON.stringify([{ type: "stream", to: [channelId], topic: "plans", content: "half a thought" }]) }));
  expectSuccess(await s.as("othello").post("/users/me/status", { status_text: "on a boat" }));
  expectSuccess(await s.as("othello").post("/messages/flags", { messages: JSON.stringify([first]), op: "add", flag: "starred" }));
});
afterAll(() => s.stop());

const CAST: CastName[] = ["desdemona", "iago", "shiva", "hamlet", "othello", "cordelia", "polonius"];

/** A user's whole register state, with what differs between two servers by design taken out. */
async function stateOf(client: ApiClient, url: string): Promise<unknown> {
  const state = expectSuccess(await client.post("/register", { apply_markdown: true, client_gravatar: false }));
  for (const key of ["queue_id", "last_event_id", "server_generation", "server_timestamp", "result", "msg"]) delete state[key];
  return JSON.parse(JSON.stringify(state).replaceAll(url, "<server>"));
}

describe("backup and restore", () => {
  test("a backup of a running server restores to the same state for every user, with the same files", async () => {
    const dir = tempDir();
    const archive = join(dir, "team.tar.gz");
    const backup = await hearth(["backup", "--data", s.dataDir, "--out", archive]);
    expect(backup.stderr).toBe("");
    expect(backup.code).toBe(0);
    expect(backup.stdout).toMatch(/Backed up \d+ users, \d+ channels, \d+ messages and 1 uploaded file to /);
    expect(readdirSync(dir)).toEqual(["team.tar.gz"]);

    const verified = await hearth(["verify-backup", archive]);
    expect(verified.code).toBe(0);
    expect(verified.stdout).toContain("every checksum matches and the store opens");

    const restoredDir = join(dir, "restored");
    const restore = await hearth(["restore", "--from", archive, "--data", restoredDir]);
    expect(restore.stderr).toBe("");
    expect(restore.code).toBe(0);
    expect(readFileSync(join(restoredDir, "uploads", uploadUrl.slice("/user_uploads/".length)))).toEqual(Buffer.from(uploadBytes));

    const restored = await startTestServer({ dataDir: restoredDir });
    try {
      for (const name of CAST) {
        const user = s.users[name];
        const before = await stateOf(s.as(name), s.url);
        const after = await stateOf(new ApiClient(restored.url, user.email, user.apiKey), restored.url);
        expect(after).toEqual(before);
      }
      const fetchUpload = (base: string, who: CastName) =>
        fetch(base + uploadUrl, { headers: { authorization: "Basic " + Buffer.from(`${s.users[who].email}:${s.users[who].apiKey}`).toString("base64") } });
      const served = await fetchUpload(restored.url, "othello");
      expect(served.status).toBe(200);
      expect(new Uint8Array(await served.arrayBuffer())).toEqual(uploadBytes);
      // Who may read it is restored too: Cordelia is not in the channel.
      expect((await fetchUpload(restored.url, "cordelia")).status).toBe((await fetchUpload(s.url, "cordelia")).status);
    } finally {
      await restored.stop();
    }
  });

  test("a backup taken while a writer sends at full speed restores every message it holds whole", async () => {
    const dir = tempDir();
    const archive = join(dir, "busy.tar.gz");
    const busy = await s.createChannel("iago", "busy", ["hamlet"]);
    let writing = true;
    let sent = 0;
    const writers = Array.from({ length: 8 }, async (_, w) => {
      while (writing) {
        expectSuccess(await s.as("hamlet").post("/messages", { type: "stream", to: busy, topic: `t${w % 3}`, content: `lighthouse keeper ${w} ${sent++}` }));
      }
    });
    await Bun.sleep(150);
    const backup = await hearth(["backup", "--data", s.dataDir, "--out", archive]);
    writing = false;
    await Promise.all(writers);
    expect(backup.code).toBe(0);

    const restoredDir = join(dir, "restored");
    expect((await hearth(["restore", "--from", archive, "--data", restoredDir])).code).toBe(0);
    const restored = await startTestServer({ dataDir: restoredDir });
    try {
      const hamlet = s.users.hamlet;
      const client = new ApiClient(restored.url, hamlet.email, hamlet.apiKey);
      const ids = async (c: ApiClient, narrow: unknown[]) =>
        expectSuccess(await c.get("/messages", { anchor: "oldest", num_before: 0, num_after: 5000, narrow: JSON.stringify(narrow), apply_markdown: false })).messages.map(
          (m: any) => [m.id, m.content, m.subject, m.flags],
        );
      const inChannel = await ids(client, [{ operator: "channel", operand: busy }]);
      expect(inChannel.length).toBeGreaterThan(0);
      const original = await ids(s.as("hamlet"), [{ operator: "channel", operand: busy }]);
      // The snapshot is the store as of one commit: exactly the first messages sent.
      expect(inChannel).toEqual(original.slice(0, inChannel.length).map((m: any[]) => [m[0], m[1], m[2], m[3]]));
      // Each message is whole: its topic, sender and search rows came with it.
      const byTopic = (await Promise.all(["t0", "t1", "t2"].map((t) => ids(client, [{ operator: "channel", operand: busy }, { operator: "topic", operand: t }])))).flat();
      expect(byTopic.map((m: any[]) => m[0]).sort((a: number, b: number) => a - b)).toEqual(inChannel.map((m: any[]) => m[0]));
      const bySearch = await ids(client, [{ operator: "channel", operand: busy }, { operator: "search", operand: "lighthouse" }]);
      expect(bySearch.map((m: any[]) => m[0])).toEqual(inChannel.map((m: any[]) => m[0]));
      const unreadIn = async (c: ApiClient) =>
        expectSuccess(await c.post("/register", { fetch_event_types: JSON.stringify(["message", "update_message_flags"]) }))
          .unread_msgs.streams.filter((c: any) => c.stream_id === busy)
          .flatMap((c: any) => c.unread_message_ids);
      // Unread rows came with their messages: the same unread messages, up to the snapshot.
      const last = inChannel[inChannel.length - 1][0];
      expect(await unreadIn(client)).toEqual((await unreadIn(s.as("hamlet"))).filter((id: number) => id <= last));
    } finally {
      await restored.stop();
    }
  });

  test("restore refuses a folder that holds anything, and leaves it untouched", async () => {
    const dir = tempDir();
    const archive = join(dir, "b.tar.gz");
    expect((await hearth(["backup", "--data", s.dataDir, "--out", archive])).code).toBe(0);
    const target = join(dir, "occupied");
    mkdirSync(target);
    writeFileSync(join(target, "keep.txt"), "mine");
    const r = await hearth(["restore", "--from", archive, "--data", target]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("not an empty folder");
    expect(readdirSync(target)).toEqual(["keep.txt"]);
    expect(readFileSync(join(target, "keep.txt"), "utf8")).toBe("mine");
  });

  test("damaged, foreign and hostile archives get a clear error and leave no data folder", async () => {
    const dir = tempDir();
    const archive = join(dir, "good.tar.gz");
    expect((await hearth(["backup", "--data", s.dataDir, "--out", archive])).code).toBe(0);
    const good = readFileSync(archive);

    const cases: [string, () => Promise<void> | void, RegExp][] = [
      ["truncated.tar.gz", () => writeFileSync(join(dir, "truncated.tar.gz"), good.subarray(0, Math.floor(good.length / 2))), /damaged/],
      ["text.tar.gz", () => writeFileSync(join(dir, "text.tar.gz"), "just some text"), /damaged|not a backup/],
      [
        "foreign.tar.gz",
        async () => {
          const src = join(dir, "foreign-src");
          mkdirSync(src);
          writeFileSync(join(src, "readme.txt"), "hello");
          await tar.c({ gzip: true, file: join(dir, "foreign.tar.gz"), cwd: src }, ["readme.txt"]);
        },
        /never has|not a Hearth backup/,
      ],
      [
        "link.tar.gz",
        async () => {
          const src = join(dir, "link-src");
          mkdirSync(join(src, "uploads"), { recursive: true });
          symlinkSync("/etc/passwd", join(src, "uploads", "passwd"));
          await tar.c({ gzip: true, file: join(dir, "link.tar.gz"), cwd: src }, ["uploads"]);
        },
        /never has/,
      ],
      [
        "flipped.tar.gz",
        async () => {
          // A valid archive whose store file differs from its checksum.
          const src = join(dir, "flipped-src");
          mkdirSync(src);
          await tar.x({ file: archive, cwd: src });
          const store = join(src, "db", "data.mdb");
          const bytes = readFileSync(store);
          bytes[bytes.length - 1] ^= 0xff;
          writeFileSync(store, bytes);
          await tar.c({ gzip: true, file: join(dir, "flipped.tar.gz"), cwd: src }, ["manifest.json", "db"]);
        },
        /checksum/,
      ],
    ];
    for (const [name, make, message] of cases) {
      await make();
      const target = join(dir, `restored-${name}`);
      const r = await hearth(["restore", "--from", join(dir, name), "--data", target]);
      expect([name, r.code]).toEqual([name, 1]);
      expect(r.stderr).toMatch(message);
      expect(existsSync(target)).toBe(false);
      const v = await hearth(["verify-backup", join(dir, name)]);
      expect([name, v.code]).toEqual([name, 1]);
      // Nothing was left beside the target either.
      expect(readdirSync(dir).filter((f) => f.includes("restoring"))).toEqual([]);
    }
  });

  test("a backup killed halfway leaves no archive under its name, and the next one succeeds", async () => {
    const dir = tempDir();
    const archive = join(dir, "killed.tar.gz");
    for (const delay of [5, 40, 120]) {
      const proc = Bun.spawn([process.execPath, MAIN, "backup", "--data", s.dataDir, "--out", archive], { stdout: "pipe", stderr: "pipe" });
      await Bun.sleep(delay);
      proc.kill(9);
      await proc.exited;
      // Either the backup finished before the kill, and is whole, or there is none.
      if (existsSync(archive)) expect((await hearth(["verify-backup", archive])).code).toBe(0);
    }
    const again = await hearth(["backup", "--data", s.dataDir, "--out", archive]);
    expect(again.code).toBe(0);
    expect(readdirSync(dir)).toEqual(["killed.tar.gz"]);
    // The server whose folder was read goes on.
    expectSuccess(await s.as("hamlet").get("/users/me"));
  });
});

describe("the store's format version", () => {
  test("a Hearth refuses a store written by a newer one, with a clear message, and backs it up no more", async () => {
    const dir = tempDir();
    const dataDir = join(dir, "data");
    expect((await hearth(["init", "--data", dataDir, "--realm-name", "Future", "--owner-email", "o@future.test", "--owner-password", "a long password"])).code).toBe(0);
    const store = new Store(dataDir);
    expect(store.dbs.meta.get("store_format_version")).toBe(STORE_FORMAT_VERSION);
    await store.commit(() => store.dbs.meta.put("store_format_version", 99));
    await store.close();
    const serve = await hearth(["serve", "--data", dataDir, "--port", "0"]);
    expect(serve.code).toBe(1);
    expect(serve.stderr).toContain("written by a newer Hearth (store format 99)");
    const backup = await hearth(["backup", "--data", dataDir, "--out", join(dir, "b.tar.gz")]);
    expect(backup.code).toBe(1);
    expect(backup.stderr).toContain("newer Hearth");
    expect(existsSync(join(dir, "b.tar.gz"))).toBe(false);
  });
});

describe("scheduled backups", () => {
  test("serve --backup-every writes backups on schedule and keeps the newest --backup-keep, each whole", async () => {
    const { startServe } = await import("../kit/process");
    const dir = tempDir();
    const dataDir = join(dir, "data");
    const backupDir = join(dir, "backups");
    const names = () => (existsSync(backupDir) ? readdirSync(backupDir).filter((f) => f.endsWith(".tar.gz")) : []);
    const { proc, output, url } = await startServe(["--data", dataDir, "--port", "0", "--backup-every", "1s", "--backup-dir", backupDir, "--backup-keep", "2"]);
    try {
      expect(output).toContain(`Backups: every 1s into ${backupDir}, keeping 2`);
      const deadline = Date.now() + 20_000;
      let seen = new Set<string>();
      while (Date.now() < deadline && seen.size < 3) {
        for (const name of names()) seen.add(name);
        await Bun.sleep(100);
      }
      expect(seen.size).toBeGreaterThanOrEqual(3);
      // The administration page's view of them.
      const key = /API key:\s+(\S+)/.exec(output + (await Bun.sleep(200), ""))?.[1] ?? /API key:\s+(\S+)/.exec(await readMore(proc))?.[1];
      const owner = new ApiClient(url, "owner@hearth.local", key!);
      const status = expectSuccess(await owner.get("/hearth/backups"));
      expect(status.schedule).toEqual({ every_seconds: 1, dir: backupDir, keep: 2 });
      expect(status.last).toMatchObject({ ok: true, error: null });
      expect(status.backups.length).toBeGreaterThanOrEqual(1);
      expect(status.backups[0].name).toMatch(/^hearth-backup-/);
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
    const kept = names();
    expect(kept.length).toBe(2);
    for (const name of kept) expect(name).toMatch(/^hearth-backup-\d{8}-\d{6}\.tar\.gz$/);
    for (const name of kept) expect((await hearth(["verify-backup", join(backupDir, name)])).code).toBe(0);
    const bad = await hearth(["serve", "--data", dataDir, "--backup-every", "soon"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("invalid backup interval 'soon'");
  });
});

/** What a running `serve` printed after its listening line (the first run's credentials). */
async function readMore(proc: { stdout: ReadableStream<Uint8Array> }): Promise<string> {
  const reader = proc.stdout.getReader();
  const { value } = await reader.read();
  reader.releaseLock();
  return new TextDecoder().decode(value);
}

describe("backups on the administration API", () => {
  test("owners download a fresh backup that restores; others may not", async () => {
    expectError(await s.as("iago").get("/hearth/backups"), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
    expectError(await s.as("iago").get("/hearth/backup"), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
    expect(expectSuccess(await s.as("desdemona").get("/hearth/backups"))).toMatchObject({ schedule: null, last: null, backups: [] });
    const owner = s.users.desdemona;
    const res = await fetch(`${s.url}/api/v1/hearth/backup`, { headers: { authorization: "Basic " + Buffer.from(`${owner.email}:${owner.apiKey}`).toString("base64") } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/gzip");
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="hearth-backup-\d{8}-\d{6}\.tar\.gz"$/);
    const bytes = new Uint8Array(await res.arrayBuffer());
    const dir = tempDir();
    writeFileSync(join(dir, "download.tar.gz"), bytes);
    expect((await hearth(["verify-backup", join(dir, "download.tar.gz")])).code).toBe(0);
    // Nothing of it stays on the server's disk.
    expect(readdirSync(tmpdir()).filter((f) => f.startsWith("hearth-download-"))).toEqual([]);
  });
});

describe("a backup folder that cannot be made", () => {
  test("fails the start before the port is bound, and leaves the data folder unlocked", async () => {
    const { startServer } = await import("../../src/server");
    const dir = tempDir();
    const dataDir = join(dir, "data");
    const blocker = join(dir, "not-a-folder");
    writeFileSync(blocker, "x");
    mkdirSync(dataDir);
    const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
    const port = probe.port!;
    probe.stop(true);
    const config = { dataDir, host: "127.0.0.1", port, externalUrl: null };
    await expect(startServer({ ...config, backup: { everyMs: 3_600_000, dir: join(blocker, "backups"), keep: 1 } })).rejects.toThrow(/ENOTDIR|not a directory/);
    // Everything the failed start began was undone: the folder and the port open again.
    const server = await startServer(config);
    await server.stop();
  });
});
