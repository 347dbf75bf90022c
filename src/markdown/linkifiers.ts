import type { StateCore, Token } from "markdown-it";
import { pythonPatternToJs } from "../lib/text";
import { boundedMemo } from "../lib/collections";
import type { Env, Linkifier } from "./render_env";

/** Compiled linkifier patterns, by pattern (null: not valid here): every render and every topic needs them. */
const compiledPattern = boundedMemo(1000, (pattern: string): RegExp | null => {
  try {
    return new RegExp(pythonPatternToJs(pattern), "gu");
  } catch {
    return null;
  }
});

function expandTemplate(template: string, match: RegExpExecArray): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(match.groups?.[name] ?? ""));
}

/** Whether any of the linkifiers matches somewhere in `text`. */
export function anyLinkifierMatches(text: string, linkifiers: readonly Linkifier[]): boolean {
  for (const l of linkifiers) {
    const re = compiledPattern(l.pattern);
    if (!re) continue;
    re.lastIndex = 0;
    const m = re.exec(text);
    if (m && m[0] !== "") return true;
  }
  return false;
}

/** Applies the realm's linkifiers to plain text outside links and code. */
export function linkifierRule(state: StateCore): void {
  const env = state.env as unknown as Env;
  const linkifiers = env.ctx.linkifiers.map((l) => ({ l, re: compiledPattern(l.pattern) })).filter((x) => x.re !== null);
  if (linkifiers.length === 0) return;
  for (const block of state.tokens) {
    if (block.type !== "inline" || !block.children) continue;
    const out: Token[] = [];
    let insideLink = 0;
    for (const token of block.children) {
      if (token.type === "link_open") insideLink++;
      if (token.type === "link_close") insideLink--;
      if (token.type !== "text" || insideLink > 0) {
        out.push(token);
        continue;
      }
      // Every match is linked: repeatedly take the earliest match in what is left (the
      // earlier linkifier wins a tie, as linkifiers are ordered).
      let text = token.content;
      let replaced = false;
      for (;;) {
        let best: { l: Linkifier; m: RegExpExecArray } | null = null;
        for (const { l, re } of linkifiers) {
          re!.lastIndex = 0;
          const m = re!.exec(text);
          if (m && m[0] !== "" && (best === null || m.index < best.m.index)) best = { l, m };
        }
        if (!best) break;
        const { l, m } = best;
        const before = new state.Token("text", "", 0);
        before.content = text.slice(0, m.index);
        const open = new state.Token("link_open", "a", 1);
        open.attrs = [["href", expandTemplate(l.url_template, m)]];
        const label = new state.Token("text", "", 0);
        label.content = m[0];
        const close = new state.Token("link_close", "a", -1);
        out.push(before, open, label, close);
        text = text.slice(m.index + m[0].length);
        replaced = true;
      }
      const rest = new state.Token("text", "", 0);
      rest.content = text;
      out.push(replaced ? rest : token);
    }
    block.children = out;
  }
}

/** Plain-text topic links: linkifier matches and bare URLs in a topic name. */
export function topicLinks(topic: string, linkifiers: Linkifier[]): { text: string; url: string }[] {
  const links: { text: string; url: string }[] = [];
  for (const l of linkifiers) {
    const re = compiledPattern(l.pattern);
    if (!re) continue;
    for (const m of topic.matchAll(re)) links.push({ text: m[0], url: expandTemplate(l.url_template, m as RegExpExecArray) });
  }
  // Most topics hold no URL: no regex iterator for them (every message event shows its topic's links).
  if (topic.includes("http")) for (const m of topic.matchAll(/https?:\/\/[^\s<>"]+/g)) links.push({ text: m[0], url: m[0] });
  return links;
}
