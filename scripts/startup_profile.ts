/**
 * The profile behind the executable's bytecode layout (Bun's `bytecodeOrder`): which
 * functions `hearth serve` loads from start to its first answered request. Bun puts
 * their bytecode together at the front of the embedded payload, so an idle server
 * touches fewer of the executable's pages (docs/benchmarks.md, "Idle memory").
 *
 * Recorded at every build from a first build of the same code, so it never goes stale:
 * `hearth init` makes an organization in a temp folder, then `hearth serve` runs on it
 * with `BUN_BYTECODE_ORDER_OUT` set, answers one GET /api/v1/users/me and is stopped
 * with SIGTERM (Bun writes the profile on exit). Functions are matched by a hash of
 * their syntax, so a profile recorded on the build machine's platform applies to every
 * target.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const TIMEOUT_MS = 60_000;

/** Reads `stream` until a line contains `marker`; returns that line's text after the marker. */
async function lineAfter(stream: ReadableStream<Uint8Array>, marker: string): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  const reader = stream.getReader();
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    text += decoder.decode(chunk.value, { stream: true });
    const at = text.indexOf(marker);
    const end = at < 0 ? -1 : text.indexOf("\n", at);
    if (end >= 0) {
      reader.releaseLock();
      return text.slice(at + marker.length, end).trim();
    }
  }
  throw new Error(`the server exited before printing "${marker}":\n${text}`);
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
    const init = Bun.spawnSync(
      [executable, "init", "--data", dataDir, "--realm-name", "Profile", "--owner-email", "owner@example.com", "--owner-password", crypto.randomUUID(), "--json"],
      { stdout: "pipe", stderr: "pipe", timeout: TIMEOUT_MS },
    );
    if (init.exitCode !== 0) throw new Error(`hearth init failed: ${init.stderr.toString()}`);
    const owner = JSON.parse(init.stdout.toString()) as { email: string; api_key: string };

    const serve = Bun.spawn([executable, "serve", "--data", dataDir, "--port", "0", "--host", "127.0.0.1"], {
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, BUN_BYTECODE_ORDER_OUT: profile },
    });
    const timer = setTimeout(() => serve.kill("SIGKILL"), TIMEOUT_MS);
    try {
      const url = await lineAfter(serve.stdout, " is listening on ");
      const res = await fetch(`${url}/api/v1/users/me`, {
        headers: { authorization: "Basic " + btoa(`${owner.email}:${owner.api_key}`) },
      });
      await res.text();
      if (res.status !== 200) throw new Error(`GET /api/v1/users/me answered ${res.status}`);
      serve.kill("SIGTERM");
      const code = await serve.exited;
      if (code !== 0) throw new Error(`hearth serve exited with ${code}: ${await new Response(serve.stderr).text()}`);
    } finally {
      clearTimeout(timer);
      serve.kill("SIGKILL");
    }
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
