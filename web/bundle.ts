/**
 * The browser client (web/src/) as one minified script and one stylesheet, each
 * named by a hash of its content so browsers may cache them for good.
 *
 * Running from source (`bun src/main.ts serve`), Bun's bundler builds them in memory
 * the first time the page is asked for: a fresh clone needs no extra build step, and an
 * edit shows on restart. The compiled executable carries the bundle scripts/build.ts
 * made (web/embedded.ts), as the source tree is not inside it.
 */
import { join } from "node:path";
import { embeddedWebBundle, type WebBundle } from "./embedded";

export type { WebBundle };

const ENTRY = join(import.meta.dir, "src", "main.tsx");

const contentHash = (text: string) => Bun.hash(text).toString(36).slice(0, 10);

export async function buildWebBundle(): Promise<WebBundle> {
  const result = await Bun.build({ entrypoints: [ENTRY], target: "browser", minify: true, throw: false });
  if (!result.success) throw new Error(`Building the web client failed:\n${result.logs.map(String).join("\n")}`);
  let js = "";
  let css = "";
  for (const output of result.outputs) {
    if (output.path.endsWith(".css")) css += await output.text();
    else if (output.kind === "entry-point") js = await output.text();
  }
  if (!js) throw new Error("Building the web client produced no script");
  return { jsName: `app.${contentHash(js)}.js`, cssName: `app.${contentHash(css)}.css`, js, css };
}

let building: Promise<WebBundle> | null = null;

/** The bundle: the embedded one, else built once per process (a failed build is retried). */
export function webBundle(): Promise<WebBundle> {
  // Called once: the same object each time (web_client.ts keeps its gzipped files by it).
  if (embeddedWebBundle) return (building ??= Promise.resolve(embeddedWebBundle()));
  building ??= buildWebBundle().catch((e) => {
    building = null;
    throw e;
  });
  return building;
}
