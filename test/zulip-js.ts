/**
 * Loads zulip-js (a real client) without letting it break other test files: its
 * `isomorphic-form-data` dependency replaces `globalThis.FormData` with the npm
 * `form-data` package for the whole process, and `bun test` runs every file in one
 * process. zulip-js keeps its own reference; the global is restored.
 */
export async function loadZulipJs(): Promise<(config: Record<string, unknown>) => Promise<any>> {
  const nativeFormData = globalThis.FormData;
  const nativeFetch = globalThis.fetch;
  try {
    const mod: any = await import("zulip-js");
    return mod.default ?? mod;
  } finally {
    globalThis.FormData = nativeFormData;
    globalThis.fetch = nativeFetch;
  }
}
