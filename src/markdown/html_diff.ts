/**
 * The `content_html_diff` of a message-history snapshot, as Zulip's
 * highlight_html_differences writes it (lxml's htmldiff, its <ins>/<del> turned into
 * spans): the new rendering with each run of added words in
 * `<span class="highlight_text_inserted">` and each run of removed words in
 * `<span class="highlight_text_deleted">` where they stood, the whole in a <div>. Words
 * are compared, tags kept from the new rendering.
 */
type Token = { kind: "tag" | "word" | "space"; text: string };

function tokenize(html: string): Token[] {
  const tokens: Token[] = [];
  for (const m of html.matchAll(/(<[^>]*>)|(\s+)|([^\s<]+)/g)) {
    tokens.push({ kind: m[1] !== undefined ? "tag" : m[2] !== undefined ? "space" : "word", text: m[0] });
  }
  return tokens;
}

/**
 * Word pairs one request may compare (the comparison is quadratic): a message's whole
 * history shares this budget, and a diff past what is left marks everything changed.
 * Sized to a small fraction of a second of CPU (docs/benchmarks.md).
 */
export const DIFF_CELLS_PER_REQUEST = 4_000_000;

/** What is left of a request's comparisons (see DIFF_CELLS_PER_REQUEST). */
export interface DiffBudget {
  cells: number;
}

/** For each new word, the index of the old word it keeps (longest common subsequence), or -1. */
function matchWords(before: string[], after: string[], budget: DiffBudget): number[] {
  const n = before.length;
  const m = after.length;
  const matched = new Array<number>(m).fill(-1);
  if (n === 0 || m === 0 || n * m > budget.cells) return matched;
  budget.cells -= n * m;
  const width = m + 1;
  const lengths = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lengths[i * width + j] =
        before[i] === after[j] ? lengths[(i + 1) * width + j + 1] + 1 : Math.max(lengths[(i + 1) * width + j], lengths[i * width + j + 1]);
    }
  }
  for (let i = 0, j = 0; i < n && j < m; ) {
    if (before[i] === after[j]) {
      matched[j] = i;
      i++;
      j++;
    } else if (lengths[(i + 1) * width + j] >= lengths[i * width + j + 1]) i++;
    else j++;
  }
  return matched;
}

const inserted = (words: string) => `<span class="highlight_text_inserted">${words}</span>`;
const deleted = (words: string) => `<span class="highlight_text_deleted">${words}</span>`;

export function htmlDiff(beforeHtml: string, afterHtml: string, budget: DiffBudget = { cells: DIFF_CELLS_PER_REQUEST }): string {
  const oldWords = tokenize(beforeHtml).filter((t) => t.kind === "word").map((t) => t.text);
  const afterTokens = tokenize(afterHtml);
  const newWords = afterTokens.filter((t) => t.kind === "word").map((t) => t.text);
  const matched = matchWords(oldWords, newWords, budget);
  let out = "";
  let nextOld = 0; // the first old word not yet written or matched
  let wordIndex = 0;
  let insertRun: string[] = [];
  const flushInserted = () => {
    if (insertRun.length > 0) out += inserted(insertRun.join(" "));
    insertRun = [];
  };
  const removedBefore = (oldIndex: number) => {
    const removed = oldWords.slice(nextOld, oldIndex);
    nextOld = oldIndex + 1;
    return removed.length > 0 ? deleted(removed.join(" ")) + " " : "";
  };
  for (const token of afterTokens) {
    if (token.kind !== "word") {
      // Spaces inside a run of added words stay in it (as one span); tags end the run.
      if (token.kind === "space" && insertRun.length > 0) continue;
      flushInserted();
      out += token.text;
      continue;
    }
    const oldIndex = matched[wordIndex++];
    if (oldIndex === -1) {
      insertRun.push(token.text);
      continue;
    }
    if (insertRun.length > 0) {
      flushInserted();
      out += " ";
    }
    out += removedBefore(oldIndex) + token.text;
  }
  flushInserted();
  // Removed words after the last kept one go before the closing tags at the end.
  const trailing = oldWords.slice(nextOld);
  if (trailing.length > 0) {
    const closing = out.slice(closingSuffixStart(out));
    out = `${out.slice(0, out.length - closing.length)} ${deleted(trailing.join(" "))}${closing}`;
  }
  return `<div>${out}</div>`;
}

/**
 * Where the closing tags (and the whitespace around them) at the end of `html` begin.
 * Scanned backwards by hand: the regex `/\s*(<\/[^>]+>\s*)*$/` backtracks from every
 * space of a long run (docs/benchmarks.md).
 */
function closingSuffixStart(html: string): number {
  let end = html.length;
  for (;;) {
    while (end > 0 && /\s/.test(html[end - 1])) end--;
    if (html[end - 1] !== ">") return end;
    // The tag's text holds no ">": it starts at the first "</" after the previous one.
    const open = html.indexOf("</", html.lastIndexOf(">", end - 2) + 1);
    if (open === -1 || open > end - 4) return end;
    end = open;
  }
}
