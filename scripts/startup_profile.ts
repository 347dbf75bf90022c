/**
 * The profile behind the executable's bytecode layout (Bun's `bytecodeOrder`): which
 * functions `hearth serve` loads from start to its first answered request. Bun puts
 * their bytecode together at the front of the embedded payload, so an idle server
 * touches fewer of the executable's pages (docs/benchmarks.md, "Idle memory").
 *
 * Recorded at every build from a first build of the same code, so it never goes stale:
 * `hearth init` makes an organization in a temp folder and `create-user` a member, a
 * first `hearth serve` on it takes some messages from the owner, then a second runs with
 * `BUN_BYTECODE_ORDER_OUT` set, answers the member's GET /api/v1/users/me and is stopped
 * with SIGTERM (Bun writes the profile on exit). Functions are matched by a hash of
 * their syntax, so a profile recorded on the build machine's platform applies to every
 * target.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readLineMatching } from "./bench-lib";

const TIMEOUT_MS = 60_000;
const IDLE_MS = 2_000;

/** Runs a one-off `hearth` command with `--json` and returns the account it prints. */
function runCommand(executable: string, args: string[]): { email: string; api_key: string } {
  const run = Bun.spawnSync([executable, ...args, "--json"], { stdout: "pipe", stderr: "pipe", timeout: TIMEOUT_MS });
  if (run.exitCode !== 0) throw new Error(`hearth ${args[0]} failed: ${run.stderr.toString()}`);
  return JSON.parse(run.stdout.toString());
}

/** Runs `hearth serve` on `dataDir` with `env`, calls `during` with its URL, then stops it with SIGTERM. */
async function serveOnce(executable: string, dataDir: string, env: Record<string, string>, during: (url: string) => Promise<void>): Promise<void> {
  const serve = Bun.spawn([executable, "serve", "--data", dataDir, "--port", "0", "--host", "127.0.0.1"], {
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, ...env },
  });
  // Read as it comes: a server writing more than a pipe holds would otherwise block.
  const errors = new Response(serve.stderr).text();
  const timer = setTimeout(() => serve.kill("SIGKILL"), TIMEOUT_MS);
  try {
    const marker = " is listening on ";
    const line = await readLineMatching(serve.stdout, "hearth serve", (l) => l.includes(marker));
    await during(line.slice(line.indexOf(marker) + marker.length).trim());
    serve.kill("SIGTERM");
    const code = await serve.exited;
    if (code !== 0) throw new Error(`hearth serve exited with ${code}: ${await errors}`);
  } finally {
    clearTimeout(timer);
    serve.kill("SIGKILL");
  }
}

async function call(url: string, auth: string, method: string, path: string, form?: Record<string, string>): Promise<any> {
  const res = await fetch(`${url}/api/v1${path}`, { method, headers: { authorization: auth }, body: form && new URLSearchParams(form) });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(body)}`);
  return body;
}

/**
 * Runs `executable` (built for this machine) as above and returns the profile's text.
 * Throws when any step fails: a build must not silently lose its layout.
 */
export async function recordStartupProfile(executable: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "hearth-startup-profile-"));
  const dataDir = join(dir, "data");
  const profile = join(dir, "serve.order");
  try {
    const owner = runCommand(executable, ["init", "--data", dataDir, "--realm-name", "Profile", "--owner-email", "owner@example.com", "--owner-password", crypto.randomUUID()]);
    const member = runCommand(executable, ["create-user", "--data", dataDir, "--email", "member@example.com", "--full-name", "Member", "--password", crypto.randomUUID()]);
    const auth = "Basic " + btoa(`${owner.email}:${owner.api_key}`);

    // First a server that has been used: messages in a channel, unread for the member. A
    // start on a brand-new folder runs other code than a restart, and a function a
    // restart needs that the profile lacks costs a page of the payload on its own
    // (docs/benchmarks.md, "Idle memory").
    await serveOnce(executable, dataDir, {}, async (url) => {
      const { subscriptions } = await call(url, auth, "GET", "/users/me/subscriptions");
      if (!subscriptions.length) throw new Error("the new organization's owner is in no channel");
      for (let i = 0; i < 20; i++) {
        await call(url, auth, "POST", "/messages", { type: "stream", to: String(subscriptions[0].stream_id), topic: `topic ${i % 3}`, content: `message ${i}` });
      }
    });
    // The recorded restart.
    await serveOnce(executable, dataDir, { BUN_BYTECODE_ORDER_OUT: profile }, async (url) => {
      await call(url, "Basic " + btoa(`${member.email}:${member.api_key}`), "GET", "/users/me");
      // An idle server's timers (the background jobs' first ticks) belong in the profile too.
      await Bun.sleep(IDLE_MS);
    });
    if (statSync(profile, { throwIfNoEntry: false })?.size) return readFileSync(profile, "utf8");
    throw new Error(`hearth serve wrote no profile to ${profile}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** How many entries a profile holds (a line each: a letter for the kind of code, then its hash). */
export function profileEntryCount(profile: string): number {
  return profile.split("\n").filter((line) => /^[A-Z] [0-9a-f]+$/.test(line)).length;
}
