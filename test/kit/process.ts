/** Helpers for tests that run Hearth as a separate process, the way users do. */
import { afterAll } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const MAIN = join(import.meta.dir, "../../src/main.ts");
const dirs: string[] = [];
export const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "hearth-cli-"));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

export async function hearth(args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn([process.execPath, MAIN, ...args], { stdout: "pipe", stderr: "pipe", env: { ...process.env, ...env } });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

/** Starts `serve` and resolves once it prints its address; returns the process and its output so far. */
export async function startServe(args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn([process.execPath, MAIN, "serve", ...args], { stdout: "pipe", stderr: "pipe", env: { ...process.env, ...env } });
  const reader = proc.stdout.getReader();
  let output = "";
  const decoder = new TextDecoder();
  const deadline = Date.now() + 15_000;
  while (!/listening on (http:\/\/\S+)/.test(output)) {
    if (Date.now() > deadline) throw new Error(`serve did not start: ${output}`);
    const { done, value } = await reader.read();
    if (done) throw new Error(`serve exited: ${output}${await new Response(proc.stderr).text()}`);
    output += decoder.decode(value);
  }
  reader.releaseLock();
  const url = /listening on (http:\/\/\S+)/.exec(output)![1];
  return { proc, url, output };
}

export const freePort = () => {
  const s = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
};

export const auth = (email: string, key: string) => ({ authorization: "Basic " + Buffer.from(`${email}:${key}`).toString("base64") });

/** Each thread of a running process with its Linux nice value (from /proc; empty elsewhere). */
export function threadNiceValues(pid: number): { name: string; main: boolean; nice: number }[] {
  if (process.platform !== "linux") return [];
  const threads = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      // Fields after the parenthesised name start at field 3 (state); nice is field 19.
      const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
      threads.push({ name: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")), main: tid === String(pid), nice: Number(fields[16]) });
    } catch {
      // The thread ended meanwhile.
    }
  }
  return threads;
}
