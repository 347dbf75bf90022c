import type Katex from "katex";

/**
 * KaTeX is loaded with the first formula (`require`, which Bun's bundler keeps in the
 * binary), not at start: it is several megabytes of the server's idle memory
 * (docs/benchmarks.md), and most messages have no TeX.
 */
let loadedKatex: typeof Katex | undefined;
const katex = () => (loadedKatex ??= require("katex") as typeof Katex);
import type { StateInline } from "markdown-it";
import { escapeHtml } from "../lib/text";

/**
 * Zulip's math: `$$…$$` inline and ```math blocks, rendered with KaTeX on the server
 * under a per-message budget (the render environment carries what it has spent).
 */
export interface TexBudget {
  /** KaTeX output written so far for this message. */
  texBytes?: number;
}

/**
 * Macro definitions: the one way a short formula expands into an output of any size
 * (a short message of nested \\defs rendered megabytes for seconds, on the thread
 * every request waits for; docs/benchmarks.md). Zulip renders them, in a separate process with a timeout;
 * here they are refused as TeX errors.
 */
const TEX_MACRO_DEFINITION = /\\(?:[gex]?def|let|futurelet|(?:re)?newcommand|providecommand|(?:re)?newenvironment|DeclareMathOperator)(?![a-zA-Z])/;
/** KaTeX output one message may hold; formulas past it show as TeX errors. */
const MAX_TEX_BYTES_PER_MESSAGE = 1_000_000;

/**
 * TeX as Zulip renders it, with KaTeX (display mode for math blocks); null when KaTeX
 * refuses it, it defines macros, or the message's TeX budget is spent. `trust` stays
 * off (no \\href or \\url), sizes are capped at 20 em.
 */
function renderTex(tex: string, displayMode: boolean, env: TexBudget): string | null {
  if (TEX_MACRO_DEFINITION.test(tex) || (env.texBytes ?? 0) >= MAX_TEX_BYTES_PER_MESSAGE) return null;
  let html: string;
  // KaTeX warns on the console for every character it has no metrics for (an emoji in
  // a formula), whatever `strict` says: one message could write thousands of log lines.
  const warn = console.warn;
  console.warn = () => {};
  try {
    html = katex().renderToString(tex, { displayMode, throwOnError: true, trust: false, strict: "ignore", maxExpand: 500, maxSize: 20 });
  } catch {
    return null;
  } finally {
    console.warn = warn;
  }
  env.texBytes = (env.texBytes ?? 0) + html.length;
  return env.texBytes > MAX_TEX_BYTES_PER_MESSAGE ? null : html;
}

/**
 * Zulip's inline math, `$$…$$` (its TEX_RE): not touching a word on either side, the body
 * on one line, not starting with `_` or `$`, and `\\$` allowed inside. What KaTeX refuses
 * stays as written in a `tex-error` span.
 */
export function inlineTexRule(state: StateInline, silent: boolean): boolean {
  const src = state.src;
  const pos = state.pos;
  if (src.charCodeAt(pos) !== 0x24 || src.charCodeAt(pos + 1) !== 0x24) return false;
  if (pos > 0 && /[\p{L}\p{N}_$]/u.test(src[pos - 1])) return false;
  const m = /^\$\$([^\n_$](?:\\\$|[^$\n])*)\$\$(?!\$)/.exec(src.slice(pos));
  if (!m) return false;
  const after = src[pos + m[0].length];
  if (after !== undefined && /[\p{L}\p{N}_]/u.test(after)) return false;
  if (!silent) {
    const html = renderTex(m[1], false, state.env as unknown as TexBudget);
    state.push("html_inline", "", 0).content = html ?? `<span class="tex-error">${escapeHtml(m[0])}</span>`;
  }
  state.pos += m[0].length;
  return true;
}

/** A ```math (or tex, latex) block: each paragraph of it a display formula in its own <p>, as Zulip's format_tex makes them. */
export function texBlockHtml(content: string, env: TexBudget): string {
  // Trailing newlines dropped by hand: `/\n+$/` backtracks from every newline of a long run.
  let end = content.length;
  while (end > 0 && content.charCodeAt(end - 1) === 10) end--;
  return content
    .slice(0, end)
    .split("\n\n")
    .map((paragraph) => `<p>${renderTex(paragraph, true, env) ?? `<span class="tex-error">${escapeHtml(paragraph)}</span>`}</p>\n`)
    .join("");
}
