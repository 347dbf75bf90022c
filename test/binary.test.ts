/**
 * The compiled executables, driven as a user would: build them (scripts/build.ts),
 * then run `dist/hearth` and, under qemu, `dist/hearth-linux-arm64` as subprocesses.
 * Prints the binary sizes, build times and cold-start times.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { buildBinary, type BuiltBinary } from "../scripts/build";
import { buildWebBundle } from "../web/bundle";
import { ApiClient, expectSuccess } from "./kit";
import { rawGet } from "./kit/raw-http";
import { threadNiceValues } from "./kit/process";
import { KEYSPACES } from "../src/store/keyspaces";
import { KEYSPACE_OPTIONS, type Store } from "../src/store/db";
import { UNREAD_WATERMARK, writtenUnreadLocation } from "../src/store/unread";

const ROOT = resolve(import.meta.dir, "..");
const ICON = readFileSync(join(ROOT, "admin-ui", "hearth-icon.svg"), "utf8");
const ARM64_SYSROOT = "/usr/aarch64-linux-gnu";
const ARM64_PACKAGES = ["qemu-user-static", "libc6-arm64-cross", "libstdc++6-arm64-cross", "libgcc-s1-arm64-cross"];

/** The command prefix that runs one of the executables on this machine. */
type Launcher = string[];

const measurements: string[] = [];
const running = new Set<Subprocess>();
const tempDirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "hearth-binary-"));
  tempDirs.push(dir);
  return dir;
}

/** A port nobody listens on right now (the OS picks it; we free it for the binary). */
function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolvePort(port));
    });
  });
}

interface Finished {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

function runToEnd(launcher: Launcher, args: string[], env: Record<string, string> = {}): Finished {
  const started = performance.now();
  const proc = Bun.spawnSync([...launcher, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  return { code: proc.exitCode ?? -1, stdout: proc.stdout.toString(), stderr: proc.stderr.toString(), ms: performance.now() - started };
}

interface Server {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  url: string;
  /** Milliseconds from spawn to the "listening" line. */
  startupMs: number;
  output(): string;
}

/** Starts `serve` and waits for its "listening on URL" line (or for it to exit). */
async function startServe(launcher: Launcher, args: string[], timeoutMs = 30_000, env: Record<string, string> = {}): Promise<Server> {
  const started = performance.now();
  const proc = Bun.spawn([...launcher, "serve", ...args], { cwd: ROOT, stdout: "pipe", stderr: "pipe", env: { ...process.env, ...env } });
  running.add(proc);
  void proc.exited.then(() => running.delete(proc));
  let text = "";
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    const reader = stream.getReader();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value, { stream: true });
  };
  void drain(proc.stdout);
  void drain(proc.stderr);
  const deadline = started + timeoutMs;
  while (performance.now() < deadline) {
    const match = /listening on (http:\/\/\S+)/.exec(text);
    if (match) return { proc, url: match[1], startupMs: performance.now() - started, output: () => text };
    if (proc.exitCode !== null) throw new Error(`serve exited with ${proc.exitCode} before listening:\n${text}`);
    await Bun.sleep(10);
  }
  proc.kill("SIGKILL");
  throw new Error(`serve did not print its listening line within ${timeoutMs} ms:\n${text}`);
}

/** Sends SIGTERM and returns the exit code. */
async function terminate(server: Server): Promise<number> {
  server.proc.kill("SIGTERM");
  return await server.proc.exited;
}

/** Runs a failing `serve` to its end, killing it if it unexpectedly starts serving. */
async function serveExpectingFailure(launcher: Launcher, args: string[]): Promise<Finished> {
  const started = performance.now();
  const proc = Bun.spawn([...launcher, "serve", ...args], { cwd: ROOT, stdout: "pipe", stderr: "pipe", env: process.env });
  running.add(proc);
  const timer = setTimeout(() => proc.kill("SIGKILL"), 20_000);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  running.delete(proc);
  return { code, stdout, stderr, ms: performance.now() - started };
}

/**
 * What the unread-rows job wrote, read from the data folder by this process while the
 * server runs (LMDB readers in other processes are fine): the watermark, and the
 * reader's "unread" row for the message (its channel ID and topic).
 */
async function readUnreadState(dataDir: string, userId: number, messageId: number) {
  const { open } = await import("lmdb");
  const root = open({ path: join(dataDir, "db"), maxDbs: 64, readOnly: true });
  try {
    const meta = root.openDB(KEYSPACES.meta, KEYSPACE_OPTIONS);
    const index = root.openDB(KEYSPACES.userMessageIndex, KEYSPACE_OPTIONS);
    // A read-only handle on the one key space the lookup reads, in place of a Store (which opens the folder for writing).
    const store = { dbs: { userMessageIndex: index } } as unknown as Store;
    return { watermark: (meta.get(UNREAD_WATERMARK) as number | undefined) ?? 0, row: writtenUnreadLocation(store, userId, messageId) ?? null };
  } finally {
    await root.close();
  }
}

function initRealm(launcher: Launcher, dataDir: string) {
  const res = runToEnd(launcher, [
    "init", "--data", dataDir, "--realm-name", "X",
    "--owner-email", "a@example.com", "--owner-password", "secret123", "--json",
  ]);
  if (res.code !== 0) throw new Error(`init failed (${res.code}): ${res.stderr}`);
  return JSON.parse(res.stdout) as { email: string; api_key: string; user_id: number; realm_url: string };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const ms = (value: number) => `${Math.round(value)} ms`;

/** qemu and the arm64 C libraries; installed here when missing, else the test fails. */
function ensureArm64Emulation(): void {
  const present = () =>
    Bun.which("qemu-aarch64-static") !== null &&
    ["ld-linux-aarch64.so.1", "libstdc++.so.6", "libgcc_s.so.1"].every((lib) => existsSync(join(ARM64_SYSROOT, "lib", lib)));
  if (present()) return;
  const howTo = `apt-get install ${ARM64_PACKAGES.join(" ")}`;
  if (!Bun.which("apt-get") || process.getuid?.() !== 0) {
    throw new Error(`The arm64 test needs qemu and the arm64 C libraries; install them as root: ${howTo}`);
  }
  console.log(`Installing ${ARM64_PACKAGES.join(", ")} for the arm64 test (apt-get)…`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  for (const cmd of [["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", ...ARM64_PACKAGES]]) {
    const res = Bun.spawnSync(cmd, { env, stdout: "pipe", stderr: "pipe" });
    if (res.exitCode !== 0) throw new Error(`'${cmd.join(" ")}' failed: ${res.stderr.toString().trim()}\nRun as root: ${howTo}`);
  }
  if (!present()) throw new Error(`qemu-aarch64-static or the arm64 libraries are still missing after: ${howTo}`);
}

const built: Partial<Record<"x64" | "arm64", BuiltBinary>> = {};

beforeAll(async () => {
  for (const target of ["x64", "arm64"] as const) {
    built[target] = await buildBinary(target);
    measurements.push(`${target}: ${built[target]!.path.replace(ROOT + "/", "")} ${mib(built[target]!.bytes)}, built in ${built[target]!.seconds.toFixed(1)} s`);
  }
}, 300_000);

afterAll(() => {
  for (const proc of running) proc.kill("SIGKILL");
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  console.log(`\nSingle executables:\n  ${measurements.join("\n  ")}\n`);
});

describe("dist/hearth (linux x64)", () => {
  const x64: Launcher = [join(ROOT, "dist", "hearth")];

  test("its bytecode is laid out by a startup profile recorded from `serve` (scripts/startup_profile.ts)", () => {
    // The recording ran init, serve, an authenticated request and a SIGTERM on a first
    // build; a profile of a few entries would mean the run never got past start-up.
    expect(built.x64!.startupProfileEntries).toBeGreaterThan(1000);
    expect(built.arm64!.startupProfileEntries).toBe(built.x64!.startupProfileEntries);
  });

  test("--version answers quickly; a bad option exits 2 with a message", () => {
    const runs = Array.from({ length: 5 }, () => runToEnd(x64, ["--version"]));
    for (const res of runs) {
      expect(res.code).toBe(0);
      expect(res.stdout).toStartWith("hearth 0.1.0");
    }
    measurements.push(`x64: cold start of --version ${ms(median(runs.map((r) => r.ms)))} (median of 5)`);

    const bad = runToEnd(x64, ["serve", "--bogus"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown option '--bogus'");
    const unknown = runToEnd(x64, ["frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
    }, 60_000);

  test("init, serve, the API and the embedded icon, refusals, graceful stop and restart", async () => {
    const dataDir = join(tempDir(), "data");
    const owner = initRealm(x64, dataDir);
    expect(owner.email).toBe("a@example.com");
    expect(owner.api_key).toMatch(/^[A-Za-z0-9]{32}$/);

    const port = await freePort();
    const server = await startServe(x64, ["--data", dataDir, "--port", String(port)]);
    measurements.push(`x64: serve ready (listening line) after ${ms(server.startupMs)}`);
    expect(server.url).toBe(`http://127.0.0.1:${port}`);

    const settings = expectSuccess(await new ApiClient(server.url, null, null).get("/server_settings"));
    expect(settings.realm_name).toBe("X");
    expect(settings.realm_icon).toBe(`${server.url}/static/hearth-icon.svg`);
    const me = expectSuccess(await new ApiClient(server.url, owner.email, owner.api_key).get("/users/me"));
    expect({ email: me.email, user_id: me.user_id }).toEqual({ email: owner.email, user_id: owner.user_id });

    // Served from the copy the binary unpacked into the data folder: proves the embedding.
    const icon = await fetch(settings.realm_icon);
    expect(icon.status).toBe(200);
    expect(icon.headers.get("content-type")).toStartWith("image/svg+xml");
    expect(await icon.text()).toBe(ICON);
    expect(readFileSync(join(dataDir, "assets", "0.1.0", "hearth-icon.svg"), "utf8")).toBe(ICON);
    // The administration page and its script are embedded too (test/admin-ui.test.ts drives them).
    const admin = await fetch(`${server.url}/admin`);
    expect(admin.url).toBe(`${server.url}/static/admin.html`);
    expect(await admin.text()).toBe(readFileSync(join(ROOT, "admin-ui", "admin.html"), "utf8"));
    expect(await (await fetch(`${server.url}/static/admin.js`)).text()).toBe(readFileSync(join(ROOT, "admin-ui", "admin.js"), "utf8"));
    // The web client's bundle is inside the executable (no web/ sources beside it, no bundler run).
    const webClient = await buildWebBundle();
    const script = await fetch(`${server.url}/web/${webClient.jsName}`);
    expect(script.status).toBe(200);
    expect(await script.text()).toBe(webClient.js);
    expect(await (await fetch(`${server.url}/web/${webClient.cssName}`)).text()).toBe(webClient.css);
    const chat = await fetch(`${server.url}/`, { redirect: "manual" });
    expect({ status: chat.status, location: chat.headers.get("location") }).toEqual({ status: 302, location: "/login?next=/" });
    for (const path of ["/static/../db/data.mdb", "/static/../../db/data.mdb", "/static/..%2f..%2fdb%2fdata.mdb", "/static/%2e%2e/%2e%2e/hearth.pid"]) {
      expect({ path, status: (await rawGet(server.url, path)).status }).toEqual({ path, status: 404 });
    }

    const second = await serveExpectingFailure(x64, ["--data", dataDir, "--port", String(await freePort())]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`The data folder ${dataDir} is in use by another Hearth process (pid ${server.proc.pid}).`);

    const portTaken = await serveExpectingFailure(x64, ["--data", join(tempDir(), "data"), "--port", String(port)]);
    expect(portTaken.code).toBe(1);
    expect(portTaken.stderr).toContain(`Port ${port} on 127.0.0.1 is already in use.`);

    expect(await terminate(server)).toBe(0);
    expect(server.output()).toContain("Received SIGTERM; shutting down.");
    expect(existsSync(join(dataDir, "hearth.pid"))).toBe(false);

    // The unread-rows job runs on a worker thread, a second entry point of the executable
    // (here for every backlog: by default a quiet server's few messages are written on
    // the main thread, test/store/main_thread_backlog.test.ts).
    const restarted = await startServe(x64, ["--data", dataDir, "--port", String(await freePort())], 30_000, {
      HEARTH_UNREAD_ROWS_INTERVAL_MS: "50",
      HEARTH_UNREAD_ROWS_WORKER_RETIRE_MS: "2000",
      HEARTH_UNREAD_ROWS_ALWAYS_ON_WORKER: "1",
    });
    const api = new ApiClient(restarted.url, owner.email, owner.api_key);
    const again = expectSuccess(await api.get("/users/me"));
    expect(again.user_id).toBe(owner.user_id);
    expect(restarted.output()).not.toContain("Created a new organization");
    const reader = expectSuccess(await api.post("/users", { email: "reader@example.com", password: "secret123", full_name: "Reader" })).user_id;
    expectSuccess(await api.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "jobs" }]), principals: JSON.stringify([owner.user_id, reader]) }));
    const sent = expectSuccess(await api.post("/messages", { type: "stream", to: "jobs", topic: "t", content: "for the worker" })).id as number;
    let watermark = 0;
    for (let i = 0; i < 200 && watermark < sent; i++) {
      await Bun.sleep(25);
      watermark = (await readUnreadState(dataDir, reader, sent)).watermark;
    }
    const channelId = expectSuccess(await api.get("/get_stream_id", { stream: "jobs" })).stream_id;
    expect(await readUnreadState(dataDir, reader, sent)).toEqual({ watermark: sent, row: [channelId, "t"] });
    expect(restarted.output()).not.toContain("worker failed");
    // The compiled worker lowered its own thread's priority (bun:ffi works in the executable).
    const threads = threadNiceValues(restarted.proc.pid);
    // Threads the worker starts afterwards (its collector's helpers) inherit the value.
    expect(threads.some((t) => t.nice === 19 && t.name === "Worker")).toBe(true);
    expect(threads.find((t) => t.main)?.nice).toBeLessThan(19);
    // Idle, the worker retires (its thread ends); the next message's rows are written by a new one.
    const workerThreads = () => threadNiceValues(restarted.proc.pid).filter((t) => t.name === "Worker").length;
    for (let i = 0; i < 400 && workerThreads() > 0; i++) await Bun.sleep(25);
    expect(workerThreads()).toBe(0);
    const later = expectSuccess(await api.post("/messages", { type: "stream", to: "jobs", topic: "t", content: "for a new worker" })).id as number;
    for (let i = 0; i < 200 && (await readUnreadState(dataDir, reader, later)).watermark < later; i++) await Bun.sleep(25);
    expect(await readUnreadState(dataDir, reader, later)).toEqual({ watermark: later, row: [channelId, "t"] });
    expect(restarted.output()).not.toContain("worker failed");
    // A channel message to a crowd: the send path's per-list work (recipient flags, the
    // shared subscriber list, its stored bytes) as the bundled lmdb build runs it.
    const crowd = [owner.user_id, reader];
    for (let i = 0; i < 18; i++) crowd.push(expectSuccess(await api.post("/users", { email: `crowd${i}@example.com`, password: "secret123", full_name: `Crowd ${i}` })).user_id);
    expectSuccess(await api.post("/users/me/subscriptions", { subscriptions: JSON.stringify([{ name: "crowd" }]), principals: JSON.stringify(crowd) }));
    const toCrowd = expectSuccess(await api.post("/messages", { type: "stream", to: "crowd", topic: "t", content: "to all twenty" })).id as number;
    expect(expectSuccess(await api.get(`/messages/${toCrowd}`, { apply_markdown: false })).message.content).toBe("to all twenty");
    // A backup of the running server's folder, checked and restored by the executable (tar, gzip and LMDB's copy inside it).
    const archive = join(tempDir(), "backup.tar.gz");
    const backup = runToEnd(x64, ["backup", "--data", dataDir, "--out", archive]);
    expect({ code: backup.code, stderr: backup.stderr }).toEqual({ code: 0, stderr: "" });
    expect(runToEnd(x64, ["verify-backup", archive]).code).toBe(0);
    const restoredDir = join(tempDir(), "restored");
    expect(runToEnd(x64, ["restore", "--from", archive, "--data", restoredDir]).code).toBe(0);
    expect(await terminate(restarted)).toBe(0);
    const fromBackup = await startServe(x64, ["--data", restoredDir, "--port", String(await freePort())]);
    const restoredApi = new ApiClient(fromBackup.url, owner.email, owner.api_key);
    expect(expectSuccess(await restoredApi.get(`/messages/${sent}`, { apply_markdown: false })).message.content).toBe("for the worker");
    expect(await terminate(fromBackup)).toBe(0);
    }, 60_000);

  test("serve on an empty folder creates the organization and prints working owner credentials", async () => {
    const dataDir = join(tempDir(), "fresh");
    const server = await startServe(x64, ["--data", dataDir, "--port", String(await freePort())]);
    // The credentials block follows the listening line; give it a moment to arrive.
    let text = server.output();
    for (let i = 0; i < 100 && !/API key:\s+\S+/.test(text); i++, text = server.output()) await Bun.sleep(10);
    const email = /email:\s+(\S+)/.exec(text)?.[1];
    const password = /password:\s+(\S+)/.exec(text)?.[1];
    const apiKey = /API key:\s+(\S+)/.exec(text)?.[1];
    expect({ email, password: !!password, apiKey: !!apiKey }).toEqual({ email: "owner@hearth.local", password: true, apiKey: true });

    const owner = new ApiClient(server.url, email!, apiKey!);
    expect(expectSuccess(await owner.get("/users/me")).email).toBe(email!);
    // The organization's starting channels and Welcome Bot's messages (test/cli.test.ts checks them in full).
    expect(expectSuccess(await owner.get("/users/me/subscriptions")).subscriptions.map((sub: any) => sub.name).sort()).toEqual(["Zulip", "general", "sandbox"]);
    expect(expectSuccess(await owner.get("/messages", { anchor: "newest", num_before: 5, num_after: 0 })).messages.map((m: any) => m.sender_full_name)).toEqual(["Welcome Bot", "Welcome Bot", "Welcome Bot"]);
    const login = await fetch(`${server.url}/api/v1/fetch_api_key`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ username: email!, password: password! }).toString(),
    });
    expect(await login.json()).toMatchObject({ result: "success", api_key: apiKey, email });
    expect(await terminate(server)).toBe(0);
    }, 60_000);
});

describe("dist/hearth-linux-arm64 under qemu (Cortex-A53)", () => {
  // qemu's default CPU has every arm64 extension; the Cortex-A53 (Raspberry Pi 3 and
  // Zero 2 W, the oldest 64-bit Pis) has the fewest, so an instruction those boards
  // lack fails here rather than on someone's Pi.
  const arm64: Launcher = ["qemu-aarch64-static", "-cpu", "cortex-a53", "-L", ARM64_SYSROOT, join(ROOT, "dist", "hearth-linux-arm64")];

  beforeAll(() => ensureArm64Emulation(), 300_000);

  test("is an arm64 executable", () => {
    const header = readFileSync(built.arm64!.path).subarray(0, 20);
    expect(header.subarray(0, 4).toString("latin1")).toBe("\x7fELF");
    expect(header.readUInt16LE(18)).toBe(183); // e_machine EM_AARCH64
  });

  test("init, serve, an authenticated request, the icon, graceful stop", async () => {
    const version = runToEnd(arm64, ["--version"]);
    expect(version.code).toBe(0);
    expect(version.stdout).toStartWith("hearth 0.1.0");
    measurements.push(`arm64 under qemu: cold start of --version ${ms(version.ms)}`);

    const dataDir = join(tempDir(), "data");
    const started = performance.now();
    const owner = initRealm(arm64, dataDir);
    measurements.push(`arm64 under qemu: init (includes password hashing) ${ms(performance.now() - started)}`);

    const server = await startServe(arm64, ["--data", dataDir, "--port", String(await freePort())], 60_000);
    measurements.push(`arm64 under qemu: serve ready (listening line) after ${ms(server.startupMs)}`);
    const me = expectSuccess(await new ApiClient(server.url, owner.email, owner.api_key).get("/users/me"));
    expect(me.email).toBe("a@example.com");
    const icon = await fetch(`${server.url}/static/hearth-icon.svg`);
    expect(await icon.text()).toBe(ICON);
    expect(await terminate(server)).toBe(0);
    // The unread-rows worker (the executable's second entry point) started too.
    expect(server.output()).not.toContain("worker failed");
  }, 120_000);
});
