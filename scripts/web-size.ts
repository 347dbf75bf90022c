/**
 * The web client's size as a browser downloads it: the minified script and
 * stylesheet, gzipped (as Hearth serves them). The budget is 150 KB together.
 *
 * Usage: bun scripts/web-size.ts
 */
import { buildWebBundle } from "../web/bundle";

export const WEB_BUDGET_BYTES = 150 * 1024;

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

if (import.meta.main) {
  const bundle = await buildWebBundle();
  const js = Bun.gzipSync(bundle.js).length;
  const css = Bun.gzipSync(bundle.css).length;
  console.log(`script      ${bundle.jsName}: ${kb(bundle.js.length)} minified, ${kb(js)} gzipped`);
  console.log(`stylesheet  ${bundle.cssName}: ${kb(bundle.css.length)} minified, ${kb(css)} gzipped`);
  console.log(`total gzipped: ${kb(js + css)} of a ${kb(WEB_BUDGET_BYTES)} budget`);
  if (js + css > WEB_BUDGET_BYTES) {
    console.error("Over budget.");
    process.exit(1);
  }
}
