/**
 * Headless Chromium for the administration page's tests, driven over the DevTools
 * protocol on its WebSocket (Bun has the client built in, so no driver package).
 * Debian's `chromium` is installed with apt-get when missing and the tests run as
 * root, as the arm64 binary test does with qemu; otherwise the test fails with how
 * to install it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

function chromiumPath(): string {
  const found = Bun.which("chromium") ?? Bun.which("chromium-browser");
  if (found) return found;
  if (!Bun.which("apt-get") || process.getuid?.() !== 0) {
    throw new Error("The administration page tests need Chromium; install it as root: apt-get install chromium");
  }
  console.log("Installing chromium for the administration page tests (apt-get)…");
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  for (const cmd of [["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]]) {
    const res = Bun.spawnSync(cmd, { env, stdout: "pipe", stderr: "pipe" });
    if (res.exitCode !== 0) throw new Error(`'${cmd.join(" ")}' failed: ${res.stderr.toString().trim()}`);
  }
  const installed = Bun.which("chromium");
  if (!installed) throw new Error("chromium is still missing after apt-get install chromium");
  return installed;
}

/** The keys `Page.press` knows: DevTools wants the code and the Windows key code with the key. */
const KEYS: Record<string, { code: string; keyCode: number; text?: string }> = {
  Tab: { code: "Tab", keyCode: 9 },
  Enter: { code: "Enter", keyCode: 13, text: "\r" },
  " ": { code: "Space", keyCode: 32, text: " " },
  Escape: { code: "Escape", keyCode: 27 },
  ArrowDown: { code: "ArrowDown", keyCode: 40 },
  ArrowUp: { code: "ArrowUp", keyCode: 38 },
};

type Message = { id?: number; method?: string; params?: any; result?: any; error?: { message: string }; sessionId?: string };

export interface Page {
  goto(url: string): Promise<void>;
  /** Evaluates an expression in the page (promises awaited); returns its JSON value. */
  evaluate<T = unknown>(expression: string): Promise<T>;
  /** Polls an expression until it is truthy; returns its value. */
  waitFor<T = unknown>(expression: string, timeoutMs?: number): Promise<T>;
  /** Errors the page reported: console.error calls, uncaught exceptions, and the browser's own (CSP, failed loads). */
  errors(): string[];
  /** The window's size in CSS pixels, and the colour scheme the page sees. */
  emulate(options: { width: number; height: number; dark?: boolean }): Promise<void>;
  /** A PNG of what the page shows. */
  screenshot(): Promise<Buffer>;
  /** The page's cookies, HttpOnly ones included, as `name → value`. */
  cookies(): Promise<Record<string, string>>;
  /** Presses a key as the keyboard would (focus moves on Tab, Enter and Space activate buttons): "Tab", "Enter", " ", "Escape", "ArrowDown"… */
  press(key: string, options?: { shift?: boolean }): Promise<void>;
  /** Types text into the focused field as the keyboard would. */
  type(text: string): Promise<void>;
  /** Grants the page's browser context permissions for an origin, as a user answering "Allow" would (e.g. ["notifications"]). */
  grantPermissions(origin: string, permissions: string[]): Promise<void>;
  close(): Promise<void>;
}

export interface Browser {
  /** A new tab; with `ownCookies`, in a context of its own (a second person at another browser). */
  newPage(options?: { ownCookies?: boolean }): Promise<Page>;
  /** Files the pages download are saved into `dir` (as a user's would be), not refused. */
  saveDownloadsIn(dir: string): Promise<void>;
  close(): Promise<void>;
}

/** Chromium's "DevTools listening on ws://…" line from its stderr, within `timeoutMs`. */
async function devToolsEndpoint(stderr: ReadableStream<Uint8Array>, timeoutMs: number): Promise<string> {
  const reader = stderr.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  // The deadline races each read, so a Chromium that stays silent cannot hang the test.
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Chromium did not start within ${timeoutMs} ms: ${text}`)), timeoutMs);
  });
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), deadline]);
      if (done) throw new Error(`Chromium did not start: ${text}`);
      text += decoder.decode(value, { stream: true });
      const match = /DevTools listening on (ws:\/\/\S+)/.exec(text);
      if (match) return match[1];
    }
  } finally {
    clearTimeout(timer);
    try {
      reader.releaseLock();
    } catch {
      // A read still pending after the deadline; the process is killed next.
    }
  }
}

export async function launchChromium(): Promise<Browser> {
  const executable = chromiumPath();
  const profile = mkdtempSync(join(tmpdir(), "hearth-chromium-"));
  const proc = Bun.spawn(
    [executable, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--remote-debugging-port=0", `--user-data-dir=${profile}`, "about:blank"],
    { stdout: "ignore", stderr: "pipe" },
  );
  let socket: WebSocket;
  try {
    const endpoint = await devToolsEndpoint(proc.stderr, 30_000);
    socket = new WebSocket(endpoint);
    await new Promise<void>((resolve, reject) => {
      socket.onopen = () => resolve();
      socket.onerror = () => reject(new Error("Could not connect to Chromium's DevTools endpoint"));
    });
  } catch (error) {
    // Nothing is left behind when the start fails: no process, no profile folder.
    proc.kill();
    await proc.exited;
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
  let nextId = 1;
  const pending = new Map<number, { resolve(result: any): void; reject(error: Error): void }>();
  const listeners = new Set<(message: Message) => void>();
  socket.onmessage = (event) => {
    const message = JSON.parse(String(event.data)) as Message;
    if (message.id !== undefined) {
      const waiter = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) waiter?.reject(new Error(message.error.message));
      else waiter?.resolve(message.result);
    } else for (const listener of listeners) listener(message);
  };
  // A Chromium that dies must fail the calls waiting on it, not leave them hanging.
  socket.onclose = () => {
    for (const waiter of pending.values()) waiter.reject(new Error("Chromium's DevTools connection closed"));
    pending.clear();
  };
  const send = (method: string, params: object = {}, sessionId?: string): Promise<any> => {
    const id = nextId++;
    socket.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  };
  const nextEvent = (method: string, sessionId: string, timeoutMs = 15_000) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        listeners.delete(listener);
        reject(new Error(`Timed out waiting for ${method}`));
      }, timeoutMs);
      const listener = (message: Message) => {
        if (message.method !== method || message.sessionId !== sessionId) return;
        clearTimeout(timer);
        listeners.delete(listener);
        resolve();
      };
      listeners.add(listener);
    });

  return {
    async newPage(options: { ownCookies?: boolean } = {}): Promise<Page> {
      const context = options.ownCookies ? (await send("Target.createBrowserContext", { disposeOnDetach: true })).browserContextId : undefined;
      const { targetId } = await send("Target.createTarget", { url: "about:blank", ...(context ? { browserContextId: context } : {}) });
      const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
      await send("Page.enable", {}, sessionId);
      const errors: string[] = [];
      listeners.add((message) => {
        if (message.sessionId !== sessionId) return;
        const p = message.params;
        if (message.method === "Runtime.consoleAPICalled" && p.type === "error") errors.push(p.args.map((a: any) => a.value ?? a.description).join(" "));
        else if (message.method === "Runtime.exceptionThrown") errors.push(p.exceptionDetails?.exception?.description ?? p.exceptionDetails?.text);
        else if (message.method === "Log.entryAdded" && p.entry.level === "error") errors.push(`${p.entry.text} ${p.entry.url ?? ""}`.trim());
      });
      await send("Runtime.enable", {}, sessionId);
      await send("Log.enable", {}, sessionId);
      const evaluate = async <T>(expression: string): Promise<T> => {
        const { result, exceptionDetails } = await send("Runtime.evaluate", { expression, awaitPromise: true, returnByValue: true }, sessionId);
        if (exceptionDetails) throw new Error(`In the page: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`);
        return result.value as T;
      };
      return {
        async goto(url) {
          const loaded = nextEvent("Page.loadEventFired", sessionId);
          await send("Page.navigate", { url }, sessionId);
          await loaded;
        },
        evaluate,
        errors: () => [...errors],
        async emulate({ width, height, dark = false }) {
          await send("Emulation.setDeviceMetricsOverride", { width, height, deviceScaleFactor: 1, mobile: width < 700 }, sessionId);
          await send("Emulation.setEmulatedMedia", { features: [{ name: "prefers-color-scheme", value: dark ? "dark" : "light" }] }, sessionId);
        },
        async screenshot() {
          const { data } = await send("Page.captureScreenshot", { format: "png" }, sessionId);
          return Buffer.from(data, "base64");
        },
        async cookies() {
          const { cookies } = await send("Network.getCookies", {}, sessionId);
          return Object.fromEntries(cookies.map((c: { name: string; value: string }) => [c.name, c.value]));
        },
        async press(key, { shift = false } = {}) {
          const known = KEYS[key];
          if (!known) throw new Error(`press: unknown key ${key}`);
          const base = { key, code: known.code, windowsVirtualKeyCode: known.keyCode, modifiers: shift ? 8 : 0 };
          await send("Input.dispatchKeyEvent", { ...base, type: known.text ? "keyDown" : "rawKeyDown", ...(known.text ? { text: known.text, unmodifiedText: known.text } : {}) }, sessionId);
          await send("Input.dispatchKeyEvent", { ...base, type: "keyUp" }, sessionId);
        },
        async type(text) {
          await send("Input.insertText", { text }, sessionId);
        },
        async grantPermissions(origin, permissions) {
          await send("Browser.grantPermissions", { origin, permissions, ...(context ? { browserContextId: context } : {}) });
        },
        async close() {
          await send("Target.closeTarget", { targetId });
        },
        async waitFor<T>(expression: string, timeoutMs = 10_000): Promise<T> {
          const deadline = Date.now() + timeoutMs;
          for (;;) {
            const value = await evaluate<T>(expression);
            if (value) return value;
            if (Date.now() > deadline) throw new Error(`Timed out waiting for: ${expression}`);
            await Bun.sleep(25);
          }
        },
      };
    },
    async saveDownloadsIn(dir: string) {
      await send("Browser.setDownloadBehavior", { behavior: "allow", downloadPath: dir });
    },
    async close() {
      await send("Browser.close").catch(() => {});
      socket.close();
      proc.kill();
      await proc.exited;
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * A page expression: the feed's row whose message text includes `text`, or undefined. A row
 * being edited (its text replaced by the edit box) is passed over, not an error.
 */
export const rowOf = (text: string) =>
  `[...document.querySelectorAll("article.msg")].find((row) => row.querySelector(".rendered")?.textContent.includes(${JSON.stringify(text)}))`;

/**
 * Points at a row (a page expression such as rowOf's) as the mouse would: its action
 * buttons are in the page while it is hovered or focused. Waits for the row first: it
 * may still be on its way (an edit another page saw first).
 */
export async function hoverRow(page: Page, row: string): Promise<void> {
  await until(page, row);
  await page.evaluate(`${row}.dispatchEvent(new MouseEvent("mouseenter"))`);
  await until(page, `${row}.querySelector(".msg-actions")`);
}

/** Polls an expression until it is truthy, also across a navigation (where evaluating fails for a moment). */
export async function until<T>(page: Page, expression: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await page.evaluate<T>(expression).catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for: ${expression}`);
    await Bun.sleep(50);
  }
}

/** Clicks the first element matching `selector` (the page throws if there is none). */
export const click = (page: Page, selector: string) => page.evaluate(`document.querySelector(${JSON.stringify(selector)}).click()`);

/** Opens the chat at `baseUrl`, is sent to /login, signs in with its form, and waits for the chat to show. */
export async function signInToChat(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/`);
  await until(page, `location.pathname === "/login" && document.getElementById("username")`);
  await page.evaluate(`(() => {
    document.getElementById("username").value = ${JSON.stringify(email)};
    document.getElementById("password").value = ${JSON.stringify(password)};
    document.querySelector("form").requestSubmit();
  })()`);
  await until(page, `location.pathname === "/" && document.querySelector(".sidebar .channels")`);
}
