import { join } from "node:path";

export interface ZulipJsCall {
  fn: string;
  args?: unknown[];
}

/** Runs zulip-js calls in a Node subprocess (see zulip-js-driver.cjs) and returns their results. */
export async function runZulipJs(config: Record<string, unknown>, calls: ZulipJsCall[]): Promise<{ apiKey: string; results: any[] }> {
  const proc = Bun.spawn(["node", join(import.meta.dir, "zulip-js-driver.cjs"), JSON.stringify({ config, calls })], {
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, NODE_PATH: join(import.meta.dir, "../../node_modules") },
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`zulip-js driver failed (${code}): ${err}`);
  return JSON.parse(out);
}
