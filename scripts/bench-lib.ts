/**
 * Pieces the benchmarks share: reading a child server's announcement, a raw HTTP/1.1
 * keep-alive client, percentiles, and what /proc says of a process (CPU, resident
 * memory split into anonymous and file-backed pages).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";

/**
 * The benchmarks run each server in a child process, which announces itself with one
 * JSON line on stdout (its URL and what the clients need): this reads that line.
 */
export async function readAnnouncement<T>(stdout: ReadableStream<Uint8Array>, name: string): Promise<T> {
  const line = await readLineMatching(stdout, name, (l) => l.startsWith("{"));
  return JSON.parse(line) as T;
}

/** Reads a child's stdout until a line passes `matches`; returns it (the rest of the stream is left unread). */
export async function readLineMatching(stdout: ReadableStream<Uint8Array>, name: string, matches: (line: string) => boolean): Promise<string> {
  const reader = stdout.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    for (;;) {
      let newline: number;
      while ((newline = text.indexOf("\n")) >= 0) {
        const line = text.slice(0, newline);
        text = text.slice(newline + 1);
        if (matches(line)) return line;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error(`${name} exited before announcing itself`);
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    reader.releaseLock();
  }
}

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** CPU seconds (user + system) the process has used so far. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  // utime and stime are fields 14 and 15 of stat, counted from the state field (3) here.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * Bytes the process has written through the kernel so far: `wchar` counts every
 * write call, `storage` what it caused to be sent to the disk (`/proc/PID/io`). LMDB
 * writes each page its commit dirtied, so storage bytes per commit follow the pages
 * a transaction touches.
 */
export function writtenBytes(pid: number): { wchar: number; storage: number } {
  const io = Object.fromEntries(readFileSync(`/proc/${pid}/io`, "utf8").trim().split("\n").map((l) => l.split(": ")));
  return { wchar: Number(io.wchar), storage: Number(io.write_bytes) };
}

/**
 * CPU seconds (user + system) per thread so far, summed under `key(name, tid)` (the
 * thread's name and id): key by name to pool same-named workers, by id to tell them apart.
 */
export function threadCpuSeconds(pid: number, key: (name: string, tid: string) => string): Map<string, number> {
  const cpu = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
      const k = key(name, tid);
      cpu.set(k, (cpu.get(k) ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // The thread ended between listing and reading.
    }
  }
  return cpu;
}

/** Resident memory in MiB: all of it, the anonymous part and the file-backed part (LMDB's mapped data file, the executable). */
export function rssMiB(pid: number): { total: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { total: kib("VmRSS") / 1024, anon: kib("RssAnon") / 1024, file: kib("RssFile") / 1024 };
}

export function formatRss(rss: { total: number; anon: number; file: number }): string {
  return `${rss.total.toFixed(0)} MiB (anon ${rss.anon.toFixed(0)}, file ${rss.file.toFixed(0)})`;
}

/**
 * One client's HTTP/1.1 keep-alive connection on a raw socket: fetch costs the client
 * process tens of microseconds per request, and with 1,000 clients the clients, not
 * the servers, were what a benchmark measured (docs/benchmarks.md). Parses just the
 * status line, Content-Length and the body.
 */
export class RawHttpClient {
  private socket: import("bun").Socket<undefined> | null = null;
  private buffer: Buffer = Buffer.alloc(0);
  private pending: { resolve(r: { status: number; body: string }): void; reject(e: Error): void } | null = null;

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  static forUrl(url: string): RawHttpClient {
    const u = new URL(url);
    return new RawHttpClient(u.hostname, Number(u.port));
  }

  get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
    return this.request("GET", path, headers);
  }

  async request(method: string, path: string, headers: Record<string, string> = {}, body = ""): Promise<{ status: number; body: string }> {
    if (!this.socket) {
      this.socket = await Bun.connect({
        hostname: this.host,
        port: this.port,
        socket: {
          data: (_socket, chunk) => this.onData(chunk),
          close: () => this.fail(new Error("connection closed")),
          error: (_socket, e) => this.fail(e),
        },
      });
    }
    const head = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("");
    const payload = body ? `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}` : "\r\n";
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.socket!.write(`${method} ${path} HTTP/1.1\r\nHost: ${this.host}\r\n${head}${payload}`);
    });
  }

  close(): void {
    this.socket?.end();
    this.fail(new Error("closed"));
  }

  private fail(e: Error): void {
    this.socket = null;
    const p = this.pending;
    this.pending = null;
    p?.reject(e);
  }

  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const end = this.buffer.indexOf("\r\n\r\n");
    if (end === -1) return;
    const head = this.buffer.subarray(0, end).toString("latin1");
    const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
    if (this.buffer.length < end + 4 + length) return;
    const body = this.buffer.subarray(end + 4, end + 4 + length).toString("utf8");
    this.buffer = this.buffer.subarray(end + 4 + length);
    const p = this.pending;
    this.pending = null;
    p?.resolve({ status: Number(head.slice(9, 12)), body });
  }
}

/** A channel message event's message object, with the fields Zulip (and Hearth) send. */
export function sampleChannelMessage(seq: number) {
  return {
    id: 1000 + seq,
    sender_id: 9,
    content: `message ${seq}`,
    recipient_id: 12,
    timestamp: Math.floor(Date.now() / 1000),
    client: "bench",
    subject: "load",
    topic_links: [] as unknown[],
    is_me_message: false,
    reactions: [] as unknown[],
    submessages: [] as unknown[],
    sender_full_name: "Owner",
    sender_email: "owner@bench.test",
    sender_realm_str: "",
    display_recipient: "bench",
    type: "stream",
    stream_id: 7,
    avatar_url: "http://127.0.0.1:9991/user_avatars/9/0123456789abcdef0123456789abcdef.png",
  };
}

/**
 * Spawns a server on `dataDir` and waits until it listens: `root` is a Hearth source
 * tree (its src/main.ts), a compiled `hearth`, or "bare" (scripts/bench.ts --bare).
 * `bunFlags` go before src/main.ts (a CPU profile); `startMs` is spawn to listening.
 */
export async function spawnServer(root: string, dataDir: string, bunFlags: string[] = []): Promise<{ proc: Subprocess<"ignore", "pipe", "inherit">; url: string; startMs: number }> {
  const serve = ["serve", "--data", dataDir, "--port", "0", "--host", "127.0.0.1"];
  const bare = root === "bare" || root === "bare-durable";
  const isBinary = !bare && !existsSync(join(root, "src", "main.ts"));
  const cmd = bare
    ? [process.execPath, join(import.meta.dir, "bench.ts"), `--${root}`]
    : isBinary
      ? [root, ...serve]
      : [process.execPath, ...bunFlags, join(root, "src", "main.ts"), ...serve];
  const t0 = performance.now();
  const proc = Bun.spawn(cmd, { stdout: "pipe", stderr: "inherit", cwd: bare || isBinary ? tmpdir() : root });
  const url = bare
    ? (JSON.parse(await readLineMatching(proc.stdout, "bare", (l) => l.startsWith("{"))).url as string)
    : (await readLineMatching(proc.stdout, "hearth", (l) => l.includes(" is listening on "))).split(" is listening on ")[1].trim();
  return { proc, url, startMs: performance.now() - t0 };
}
