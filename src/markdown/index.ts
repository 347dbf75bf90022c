import type { MarkdownIt as MarkdownItInstance, StateCore, StateInline } from "markdown-it";
import { escapeHtml } from "../lib/text";
import { codeLanguageName } from "./code_languages";
import { emojiRule, unicodeEmojiAndEmoticonRule } from "./emoji_rules";
import { globalTimeRule } from "./global_time";
import { highlightCode } from "./highlight";
import { imagePreviewRule } from "./image_previews";
import { anyLinkifierMatches, linkifierRule } from "./linkifiers";
import { channelLinkRule, mentionRule } from "./mention_rules";
import type { Env, Linkifier, RenderContext, RenderResult } from "./render_env";
import { inlineTexRule, texBlockHtml } from "./tex";

/**
 * Zulip-flavoured Markdown on top of markdown-it: raw HTML is never passed through
 * (`html: false` escapes it, and markdown-it's link validator refuses `javascript:`
 * and similar schemes), so no markup from a message reaches another user's page.
 * Zulip's additions (mentions, channel links, emoji, spoilers, linkifiers) are
 * markdown-it rules whose output imitates Zulip's HTML, which clients parse.
 */

export type { Linkifier, MentionableUser, RenderContext, RenderResult } from "./render_env";
export { channelNarrowSlug, encodeHashComponent } from "./narrow_urls";
export { linkProperties } from "./image_previews";
export { topicLinks } from "./linkifiers";

/**
 * Code a message may have highlighted, in characters (a message's length at most):
 * past it, blocks are written as plain text. Zulip highlights under a 5-second
 * timeout on the whole render; the budget and highlightCode's limits keep one message
 * from holding this server's only thread longer than one block at the budget takes
 * the slowest grammar kept (docs/benchmarks.md).
 */
const MAX_HIGHLIGHTED_CHARS_PER_MESSAGE = 10_000;

function highlightWithinBudget(code: string, pygmentsName: string, env: Env): string | undefined {
  const spent = (env.highlightedChars ?? 0) + code.length;
  if (spent > MAX_HIGHLIGHTED_CHARS_PER_MESSAGE) return undefined;
  env.highlightedChars = spent;
  return highlightCode(code, pygmentsName);
}


/**
 * Zulip has no `_emphasis_` or `__strong__` (snake_case and `__init__.py` stay as
 * written): underscores are taken as plain text before the emphasis rule sees them,
 * so only `*` and `**` emphasize.
 */
function underscoreRule(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x5f /* _ */) return false;
  let end = state.pos;
  while (state.src.charCodeAt(end) === 0x5f) end++;
  if (!silent) state.pending += state.src.slice(state.pos, end);
  state.pos = end;
  return true;
}

/** Zulip's rewrite_local_links_to_relative, for links into the web app: `https://chat.example.com/#narrow/…` → `#narrow/…`. */
function relativeOwnLinksRule(state: StateCore): void {
  const own = (state.env as unknown as Env).ctx.ownUrl;
  if (!own) return;
  const prefix = `${own.replace(/\/+$/, "")}/#`;
  for (const block of state.tokens) {
    for (const token of block.children ?? []) {
      if (token.type !== "link_open") continue;
      const href = token.attrGet("href");
      if (typeof href === "string" && href.startsWith(prefix)) token.attrSet("href", href.slice(prefix.length - 1));
    }
  }
}

/** Zulip writes a table cell's alignment as `text-align: right;`, the only form the mobile app reads. */
function tableAlignmentRule(state: StateCore): void {
  for (const token of state.tokens) {
    if (token.type !== "th_open" && token.type !== "td_open") continue;
    const style = token.attrGet("style");
    const align = typeof style === "string" ? /^text-align:(left|right|center)$/.exec(style) : null;
    if (align) token.attrSet("style", `text-align: ${align[1]};`);
  }
}

/**
 * Top-level domains a bare `example.com` or `www.example.com/x` is linked for, as Zulip
 * links bare domains (with http://). Zulip takes every IANA domain but a few common
 * file extensions (py, md, java, mov, zip); this list keeps to the common generic ones
 * and the country codes that are not also file extensions (setup.py, notes.md, run.sh
 * stay text).
 */
const LINKABLE_TLDS = [
  "com", "org", "net", "edu", "gov", "mil", "int", "info", "biz", "name", "pro", "io", "co", "ai", "app", "dev", "me", "tv",
  "xyz", "online", "site", "tech", "cloud", "page", "blog", "news", "shop", "store", "wiki", "chat", "social", "zone", "team",
  "us", "uk", "ca", "au", "nz", "ie", "de", "fr", "it", "es", "nl", "be", "ch", "at", "se", "no", "dk", "fi", "is", "cz",
  "sk", "hu", "ro", "bg", "gr", "pt", "ee", "lv", "lt", "si", "hr", "ua", "ru", "by", "kz", "tr", "il", "ae", "sa", "eg",
  "za", "ng", "ke", "jp", "cn", "kr", "in", "id", "my", "th", "vn", "ph", "sg", "hk", "tw", "br", "ar", "cl", "mx", "pe",
  "uy", "eu", "asia",
];

/** markdown-it, loaded with the first message rendered rather than at start (its CommonJS build, run from source, has no `default`). */
export function loadMarkdownIt(): typeof import("markdown-it").default {
  const loaded = require("markdown-it");
  return loaded.default ?? loaded;
}

/** A character every link linkify-it can find contains (see skipLinklessText). */
const LINK_CHARACTER = /[.:/@]/;

/**
 * markdown-it asks linkify-it whether each paragraph, then each text run, holds a
 * link, and linkify-it answers by running its fuzzy-link regex (every Unicode letter
 * class, every TLD) from every position: most of a chat message's rendering time
 * (docs/benchmarks.md). Every link it can find contains one of LINK_CHARACTER: a
 * schema ("http:", "https:", "ftp:", "mailto:", "//"), a bare domain's dot, an
 * email's "@". So text without any of them is answered "no" at once and the answer is
 * the same. Only installed while every schema linkify-it knows holds ":" or "/"; if a
 * new version keeps them elsewhere, rendering stays correct, only slower.
 * test/markdown/link_prefilter.test.ts renders a varied corpus both ways.
 */
function skipLinklessText(md: MarkdownItInstance): boolean {
  const schemas = (md.linkify as unknown as { __schemas__?: Record<string, unknown> }).__schemas__;
  if (!schemas || !Object.keys(schemas).every((name) => name.includes(":") || name.includes("/"))) return false;
  const fullTest = md.linkify.test.bind(md.linkify);
  md.linkify.test = (text: string) => LINK_CHARACTER.test(text) && fullTest(text);
  return true;
}

/** markdown-it as Zulip's Markdown; `linkPrefilter: false` only for tests comparing with the prefilter (skipLinklessText). */
export function buildMarkdown(options: { linkPrefilter: boolean } = { linkPrefilter: true }): MarkdownItInstance & { linkPrefiltered: boolean } {
  const md = new (loadMarkdownIt())({ html: false, linkify: true, breaks: true, typographer: false });
  md.linkify.set({ fuzzyLink: true });
  md.linkify.tlds(LINKABLE_TLDS, false);
  const linkPrefiltered = options.linkPrefilter && skipLinklessText(md);
  md.disable("image"); // Zulip has no image syntax; uploads are previewed from links
  md.inline.ruler.before("emphasis", "zulip_mention", mentionRule);
  md.inline.ruler.before("emphasis", "zulip_channel_link", channelLinkRule);
  md.inline.ruler.before("emphasis", "zulip_emoji", emojiRule);
  md.inline.ruler.before("emphasis", "zulip_no_underscore_emphasis", underscoreRule);
  md.inline.ruler.before("autolink", "zulip_global_time", globalTimeRule);
  md.inline.ruler.before("emphasis", "zulip_inline_tex", inlineTexRule);
  md.core.ruler.push("zulip_linkifiers", linkifierRule);
  md.core.ruler.push("zulip_unicode_emoji_and_emoticons", unicodeEmojiAndEmoticonRule);
  md.core.ruler.push("zulip_table_alignment", tableAlignmentRule);
  md.core.ruler.push("zulip_image_previews", imagePreviewRule);
  md.core.ruler.push("zulip_relative_own_links", relativeOwnLinksRule);
  // Zulip's strikethrough is <del> (the mobile app knows no <s>).
  md.renderer.rules.s_open = () => "<del>";
  md.renderer.rules.s_close = () => "</del>";

  md.renderer.rules.fence = (tokens, idx, _options, env) => {
    const token = tokens[idx];
    const shared = env as unknown as Env;
    const info = token.info.trim();
    // Zulip's fence allows a dot before the language (~~~~.python), and reads the language in lower case.
    const named = (info.split(/\s+/)[0] ?? "").replace(/^\./, "").toLowerCase();
    const lang = named || (shared.inSpoiler ? "" : (shared.ctx.defaultCodeBlockLanguage ?? "").toLowerCase());
    if (lang === "spoiler") {
      const header = info.replace(/^\S*\s*/, "");
      // The same env, marked for the spoiler's extent: the message's TeX budget is shared.
      const outer = shared.inSpoiler;
      shared.inSpoiler = true;
      try {
        return (
          `<div class="spoiler-block"><div class="spoiler-header">${header ? md.render(header, env).trim() : ""}</div>` +
          `<div class="spoiler-content" aria-hidden="true">${md.render(token.content, env).trim()}</div></div>\n`
        );
      } finally {
        shared.inSpoiler = outer;
      }
    }
    if (lang === "quote" || lang === "quoted") return `<blockquote>\n${md.render(token.content, env)}</blockquote>\n`;
    if (lang === "math") return texBlockHtml(token.content, shared);
    const name = lang ? codeLanguageName(lang) : "";
    const langAttr = lang ? ` data-code-language="${escapeHtml(name)}"` : "";
    const code = (lang && highlightWithinBudget(token.content, name, shared)) || escapeHtml(token.content);
    return `<div class="codehilite"${langAttr}><pre><span></span><code>${code}</code></pre></div>\n`;
  };
  md.renderer.rules.code_block = (tokens, idx) =>
    `<div class="codehilite"><pre><span></span><code>${escapeHtml(tokens[idx].content)}</code></pre></div>\n`;

  const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
  md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    const href = tokens[idx].attrGet("href");
    if (href) ((env as unknown as Env).result as RenderResult).linkUrls.push(String(href));
    return defaultLinkOpen(tokens, idx, options, env, self);
  };
  return Object.assign(md, { linkPrefiltered });
}

let markdown: MarkdownItInstance | null = null;

/**
 * One line of words that no Markdown or Zulip rule changes: ASCII letters and digits,
 * spaces between them, `,` `'` `?` `!`, and `.` only before a space or at the end (so
 * no domain, no IP address: linkify-it finds nothing), not starting like an ordered
 * list item (`1.`), no trailing space. Mentions, emoji, emoticons, links, code, TeX,
 * emphasis, escapes, entities, lists, quotes, headings and line breaks all need a
 * character outside this set; the realm's linkifiers are checked apart.
 */
const PLAIN_LINE = /^(?![0-9]+\.)[A-Za-z0-9](?:[A-Za-z0-9 ,'?!]|\.(?= |$))*$/;

/** The HTML of a plain line of words (see PLAIN_LINE), or undefined when the content needs markdown-it. */
export function plainLineHtml(content: string, linkifiers: readonly Linkifier[]): string | undefined {
  if (!PLAIN_LINE.test(content) || content.charCodeAt(content.length - 1) === 0x20 || anyLinkifierMatches(content, linkifiers)) return undefined;
  return `<p>${content}</p>`;
}

function emptyResult(): RenderResult {
  return { html: "", mentionedUserIds: new Set(), mentionedGroupIds: new Set(), channelWildcard: false, topicWildcard: false, linkUrls: [] };
}

/**
 * Renders message Markdown to Zulip-style HTML and reports mentions and links. A
 * plain line of words (PLAIN_LINE, no linkifier matching it) is one paragraph of the
 * text as it is, without markdown-it: parsing builds a token tree per render, most of
 * a chat message's rendering time (docs/benchmarks.md). Passing `md` always uses it
 * (test/markdown/plain_text.test.ts compares both ways).
 */
export function renderMarkdown(content: string, ctx: RenderContext, md?: MarkdownItInstance): RenderResult {
  return (md === undefined ? renderPlainLine(content, ctx.linkifiers) : undefined) ?? renderWithMarkdownIt(content, ctx, md);
}

/** A plain line's render (see PLAIN_LINE), or undefined when the content needs markdown-it. */
export function renderPlainLine(content: string, linkifiers: readonly Linkifier[]): RenderResult | undefined {
  const html = plainLineHtml(content, linkifiers);
  if (html === undefined) return undefined;
  const result = emptyResult();
  result.html = html;
  return result;
}

/** The render by markdown-it, for content already known not to be a plain line (renderPlainLine). */
export function renderWithMarkdownIt(content: string, ctx: RenderContext, md?: MarkdownItInstance): RenderResult {
  const result = emptyResult();
  result.html = (md ?? (markdown ??= buildMarkdown())).render(content, { ctx, result } satisfies Env).trimEnd();
  return result;
}
