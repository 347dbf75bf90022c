import type { MarkdownIt as MarkdownItInstance, StateCore, StateInline, Token } from "markdown-it";
import { escapeHtml, escapeRegExp, pythonPatternToJs } from "../lib/text";
import { EMOTICON_CONVERSIONS, emojiCodeFor, emojiCodeOfText, emojiNameFor, ZULIP_EXTRA_EMOJI_PATH } from "./emoji";
import { codeLanguageName } from "./code_languages";
import { highlightCode } from "./highlight";
import { inlineTexRule, texBlockHtml } from "./tex";

/**
 * Zulip-flavoured Markdown on top of markdown-it: raw HTML is never passed through
 * (`html: false` escapes it, and markdown-it's link validator refuses `javascript:`
 * and similar schemes), so no markup from a message reaches another user's page.
 * Zulip's additions (mentions, channel links, emoji, spoilers, linkifiers) are
 * markdown-it rules whose output imitates Zulip's HTML, which clients parse.
 */

export interface MentionableUser {
  id: number;
  full_name: string;
  /** A deactivated user's mention renders silent and notifies nobody, as Zulip renders it. */
  is_active?: boolean;
}

export interface Linkifier {
  pattern: string;
  url_template: string;
}

/** What the renderer may look up; the caller decides visibility (e.g. private channels). */
export interface RenderContext {
  userById(id: number): MentionableUser | undefined;
  /** Users whose full name matches, case-insensitively (deactivated ones too, marked). */
  usersByName(name: string): MentionableUser[];
  /** A deactivated group's mention renders silent, as Zulip renders it. */
  groupByName(name: string): { id: number; name: string; deactivated?: boolean } | undefined;
  channelByName(name: string): { id: number; name: string } | undefined;
  linkifiers: Linkifier[];
  /** The organization's active custom emoji; they win over Unicode emoji of the same name, as in Zulip. */
  realmEmojiByName?(name: string): { id: number; url: string } | undefined;
  /**
   * The message a topic link's `with` operator names (FL 347; the newest readable since FL 400), so the link follows the
   * topic when it moves: undefined when the topic has no message the writer can read.
   */
  topicLinkMessageId?(channelId: number, topic: string): number | undefined;
  /** `realm_empty_topic_display_name`, shown (in <em>) for links to the empty topic. */
  emptyTopicDisplayName?: string;
  /** This server's address: links into its web app (`…/#narrow/…`) become relative, as Zulip writes them. */
  ownUrl?: string;
  /** The sender's `translate_emoticons` setting: `:)` and the like become emoji, as Zulip renders them. */
  translateEmoticons?: boolean;
  /** `realm_default_code_block_language`: the language of a code block that names none. */
  defaultCodeBlockLanguage?: string;
}

export interface RenderResult {
  html: string;
  /** Users mentioned by name (not silently). */
  mentionedUserIds: Set<number>;
  mentionedGroupIds: Set<number>;
  /** `@**all**`, `@**everyone**`, `@**channel**`, `@**stream**`. */
  channelWildcard: boolean;
  topicWildcard: boolean;
  linkUrls: string[];
}

interface Env {
  ctx: RenderContext;
  result: RenderResult;
  /** KaTeX output written so far for this message (src/markdown/tex.ts). */
  texBytes?: number;
  /** Inside a spoiler: Zulip gives code blocks there (and in quotes within) no default language. */
  inSpoiler?: boolean;
  /** Code highlighted so far for this message (see highlightWithinBudget). */
  highlightedChars?: number;
}

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


/** Zulip's URL-hash encoding of a narrow component (`%` becomes `.`). */
export function encodeHashComponent(s: string): string {
  return encodeURIComponent(s).replace(/\./g, "%2E").replace(/%/g, ".");
}

export function channelNarrowSlug(id: number, name: string): string {
  return `${id}-${encodeHashComponent(name.replace(/ /g, "-"))}`;
}

const CHANNEL_WILDCARDS = new Set(["all", "everyone", "channel", "stream"]);

function precededByBoundary(state: StateInline): boolean {
  if (state.pos === 0) return true;
  return !/[\p{L}\p{N}_]/u.test(state.src[state.pos - 1]);
}

function mentionRule(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x40 /* @ */ || !precededByBoundary(state)) return false;
  const rest = state.src.slice(state.pos);
  const env = state.env as unknown as Env;
  const user = /^@(_?)\*\*([^*\n]+?)\*\*/.exec(rest);
  if (user) {
    const isSilent = user[1] === "_";
    const text = user[2];
    const pipe = /^(.*)\|(\d+)$/.exec(text);
    let html: string | null = null;
    if (!pipe && CHANNEL_WILDCARDS.has(text)) {
      if (!isSilent) env.result.channelWildcard = true;
      html = `<span class="user-mention channel-wildcard-mention${isSilent ? " silent" : ""}" data-user-id="*">${isSilent ? "" : "@"}${escapeHtml(text)}</span>`;
    } else if (!pipe && text === "topic") {
      if (!isSilent) env.result.topicWildcard = true;
      html = `<span class="topic-mention${isSilent ? " silent" : ""}">${isSilent ? "" : "@"}topic</span>`;
    } else {
      let target: MentionableUser | undefined;
      if (pipe) {
        target = env.ctx.userById(Number(pipe[2]));
        // `@**name|id**` must name that user (Zulip: another's name is no mention).
        if (target && pipe[1] !== "" && pipe[1] !== target.full_name) target = undefined;
      } else {
        const matches = env.ctx.usersByName(text);
        // An ambiguous name mentions nobody; clients insert `Name|id` for those.
        if (matches.length === 1) target = matches[0];
      }
      if (target) {
        const quiet = isSilent || target.is_active === false;
        if (!quiet) env.result.mentionedUserIds.add(target.id);
        html = `<span class="user-mention${quiet ? " silent" : ""}" data-user-id="${target.id}">${quiet ? "" : "@"}${escapeHtml(target.full_name)}</span>`;
      }
    }
    if (html === null) return false;
    if (!silent) state.push("html_inline", "", 0).content = html;
    state.pos += user[0].length;
    return true;
  }
  const group = /^@(_?)\*([^*\n]+?)\*/.exec(rest);
  if (group) {
    const found = env.ctx.groupByName(group[2]);
    if (!found) return false;
    const isSilent = group[1] === "_" || found.deactivated === true;
    if (!isSilent) env.result.mentionedGroupIds.add(found.id);
    if (!silent) {
      state.push("html_inline", "", 0).content =
        `<span class="user-group-mention${isSilent ? " silent" : ""}" data-user-group-id="${found.id}">${isSilent ? "" : "@"}${escapeHtml(found.name)}</span>`;
    }
    state.pos += group[0].length;
    return true;
  }
  return false;
}

function channelLinkRule(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x23 /* # */ || !precededByBoundary(state)) return false;
  const m = /^#\*\*([^*\n]+?)\*\*/.exec(state.src.slice(state.pos));
  if (!m) return false;
  const env = state.env as unknown as Env;
  // The first ">" separates the topic (Zulip's STREAM_TOPIC_LINK_REGEX); when no channel
  // has the name before it, the whole text may still name a channel (names may hold ">").
  const gt = m[1].indexOf(">");
  let channel = env.ctx.channelByName(gt === -1 ? m[1] : m[1].slice(0, gt));
  let topic = gt === -1 ? null : m[1].slice(gt + 1);
  if (!channel && gt !== -1) {
    channel = env.ctx.channelByName(m[1]);
    topic = null;
  }
  if (!channel) return false;
  if (!silent) {
    const base = `/#narrow/channel/${channelNarrowSlug(channel.id, channel.name)}`;
    // The empty topic shows as the organization's name for it, in <em> (FL 346).
    const shownTopic = (name: string) => (name === "" ? `<em>${escapeHtml(env.ctx.emptyTopicDisplayName ?? "general chat")}</em>` : escapeHtml(name));
    // `#**channel>topic@123**` links one message (FL 319).
    const message = topic === null ? null : /^([^]*)@(\d+)$/.exec(topic);
    let html: string;
    if (topic === null) {
      html = `<a class="stream" data-stream-id="${channel.id}" href="${escapeHtml(base)}">#${escapeHtml(channel.name)}</a>`;
    } else if (message) {
      html = `<a class="message-link" href="${escapeHtml(`${base}/topic/${encodeHashComponent(message[1])}/near/${message[2]}`)}">#${escapeHtml(channel.name)} &gt; ${shownTopic(message[1])} @ 💬</a>`;
    } else {
      // With the topic's newest readable message (FL 400; the oldest from FL 347), the
      // link follows the topic when it is moved (the empty topic's: /topic//with/214).
      const withId = env.ctx.topicLinkMessageId?.(channel.id, topic);
      const topicPath = `/topic/${encodeHashComponent(topic)}`;
      const withPath = withId === undefined ? "" : `/with/${withId}`;
      html = `<a class="stream-topic" data-stream-id="${channel.id}" href="${escapeHtml(base + topicPath + withPath)}">#${escapeHtml(channel.name)} &gt; ${shownTopic(topic)}</a>`;
    }
    state.push("html_inline", "", 0).content = html;
  }
  state.pos += m[0].length;
  return true;
}

function emojiRule(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x3a /* : */) return false;
  const m = /^:([a-z0-9_+ -]+):/.exec(state.src.slice(state.pos));
  if (!m) return false;
  // The organization's own emoji first, then Zulip's own `:zulip:`, as Zulip orders them.
  const custom = (state.env as unknown as Env).ctx.realmEmojiByName?.(m[1]);
  const imageUrl = custom ? custom.url : m[1] === "zulip" ? ZULIP_EXTRA_EMOJI_PATH : null;
  if (imageUrl !== null) {
    if (!silent) {
      const name = escapeHtml(m[1]);
      state.push("html_inline", "", 0).content = `<img alt=":${name}:" class="emoji" src="${escapeHtml(imageUrl)}" title="${escapeHtml(m[1].replace(/_/g, " "))}">`;
    }
    state.pos += m[0].length;
    return true;
  }
  const code = emojiCodeFor(m[1]);
  if (!code) return false;
  if (!silent) state.push("html_inline", "", 0).content = unicodeEmojiHtml(code, m[1]);
  state.pos += m[0].length;
  return true;
}

/** Zulip's markup of a Unicode emoji, shown as `:name:` under the name it was given by. */
function unicodeEmojiHtml(code: string, name: string): string {
  const label = escapeHtml(name.replace(/_/g, " "));
  return `<span aria-label="${label}" class="emoji emoji-${code}" role="img" title="${label}">:${escapeHtml(name)}:</span>`;
}

// Zulip's POSSIBLE_EMOJI_RE: a flag (two regional indicators) or an emoji with its
// modifier, variation selector and keycap, or tag sequence; joined by zero-width joiners.
const ONE_EMOJI = String.raw`\p{RI}\p{RI}|\p{Emoji}(?:\p{Emoji_Modifier}|\uFE0F\u20E3?|[\u{E0020}-\u{E007E}]+\u{E007F})?`;
const POSSIBLE_EMOJI = new RegExp(`(?:${ONE_EMOJI})(?:\u200D(?:${ONE_EMOJI}))*`, "gu");
/** A character shown as text unless followed by the emoji variation selector (a digit, ©, a bare ❤): left as typed. */
const TEXT_PRESENTATION = /^\P{Emoji_Presentation}\u20E3?$/u;
// Zulip's emoticons stand alone: between these characters (its composebox's
// terminal symbols) or the ends of the text, so `a:)b` and `http://` stay text.
const EMOTICON_BOUNDARY = String.raw`[,.;?!()\[\] "'\n\t]`;
const EMOTICONS = new RegExp(
  `(?<=^|${EMOTICON_BOUNDARY})(?:${Object.keys(EMOTICON_CONVERSIONS).map(escapeRegExp).join("|")})(?=$|${EMOTICON_BOUNDARY})`,
  "g",
);

const isLineEnd = (t: Token | undefined) => t === undefined || t.type === "softbreak" || t.type === "hardbreak";

/**
 * Emoji typed as characters become Zulip's emoji markup under their name (those in the
 * name table; others stay as typed), and for senders who asked for it, emoticons
 * become emoji. In text only: code spans and blocks keep what was typed.
 */
function unicodeEmojiAndEmoticonRule(state: StateCore): void {
  const translateEmoticons = (state.env as unknown as Env).ctx.translateEmoticons === true;
  if (!translateEmoticons && !/[^\x00-\x7f]/.test(state.src)) return;
  for (const block of state.tokens) {
    if (block.type !== "inline" || !block.children) continue;
    const children = block.children;
    const out: Token[] = [];
    for (let i = 0; i < children.length; i++) {
      const token = children[i];
      const text = token.content;
      // Emoji are never ASCII (digits, # and * count as emoji only with a keycap).
      const maybeEmoji = token.type === "text" && /[^\x00-\x7f]/.test(text);
      const maybeEmoticon = token.type === "text" && translateEmoticons;
      if (!maybeEmoji && !maybeEmoticon) {
        out.push(token);
        continue;
      }
      const found: { at: number; length: number; html: string }[] = [];
      if (maybeEmoji) {
        for (const m of text.matchAll(POSSIBLE_EMOJI)) {
          if (TEXT_PRESENTATION.test(m[0])) continue;
          const code = emojiCodeOfText(m[0]);
          const name = emojiNameFor(code);
          if (name) found.push({ at: m.index, length: m[0].length, html: unicodeEmojiHtml(code, name) });
        }
      }
      if (maybeEmoticon) {
        // Text right after bold text or a mention is not alone (Zulip sees a placeholder
        // there); the start and end of a line, a link's text or an emphasis are ends.
        const startIsBoundary = isLineEnd(children[i - 1]) || children[i - 1].nesting === 1;
        const endIsBoundary = isLineEnd(children[i + 1]) || children[i + 1].nesting === -1;
        for (const m of text.matchAll(EMOTICONS)) {
          if ((m.index === 0 && !startIsBoundary) || (m.index + m[0].length === text.length && !endIsBoundary)) continue;
          const name = EMOTICON_CONVERSIONS[m[0]];
          found.push({ at: m.index, length: m[0].length, html: unicodeEmojiHtml(emojiCodeFor(name)!, name) });
        }
        found.sort((a, b) => a.at - b.at);
      }
      if (found.length === 0) {
        out.push(token);
        continue;
      }
      let from = 0;
      const pushText = (content: string) => {
        if (content === "") return;
        const t = new state.Token("text", "", 0);
        t.content = content;
        out.push(t);
      };
      for (const { at, length, html } of found) {
        pushText(text.slice(from, at));
        const t = new state.Token("html_inline", "", 0);
        t.content = html;
        out.push(t);
        from = at + length;
      }
      pushText(text.slice(from));
    }
    block.children = out;
  }
}

/** Compiled linkifier patterns, by pattern: every render and every topic needs them. */
const compiledLinkifiers = new Map<string, RegExp | null>();

function compileLinkifier(l: Linkifier): RegExp | null {
  let re = compiledLinkifiers.get(l.pattern);
  if (re === undefined) {
    try {
      re = new RegExp(pythonPatternToJs(l.pattern), "gu");
    } catch {
      re = null;
    }
    if (compiledLinkifiers.size >= 1000) compiledLinkifiers.clear();
    compiledLinkifiers.set(l.pattern, re);
  }
  return re;
}

function expandTemplate(template: string, match: RegExpExecArray): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(match.groups?.[name] ?? ""));
}

/** Applies the realm's linkifiers to plain text outside links and code. */
function linkifierRule(state: StateCore): void {
  const env = state.env as unknown as Env;
  const linkifiers = env.ctx.linkifiers.map((l) => ({ l, re: compileLinkifier(l) })).filter((x) => x.re !== null);
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

/**
 * A time as Python's isoformat writes a UTC datetime, with Zulip's "Z": seconds always,
 * microseconds only when there are any.
 */
function isoUtc(ms: number): string {
  const totalMicros = Math.round(ms * 1000);
  const seconds = Math.floor(totalMicros / 1_000_000);
  const micros = totalMicros - seconds * 1_000_000;
  const iso = new Date(seconds * 1000).toISOString().slice(0, 19);
  return `${iso}${micros > 0 ? `.${String(micros).padStart(6, "0")}` : ""}Z`;
}

/** Python's datetime reaches years 1 to 9999 (in milliseconds since the epoch): a time outside them is an error in Zulip. */
const TIME_RANGE = { min: -62_135_596_800_000, max: 253_402_300_799_999 };

/**
 * An ISO 8601 date and time as Zulip reads `<time:…>` since FL 451/503 (Python's
 * `datetime.fromisoformat`): a date (`YYYY-MM-DD` or `YYYYMMDD`), optionally a time
 * after `T` or a space (`HH`, `HH:MM`, `HH:MM:SS`, fractions of a second, or the
 * basic `HHMMSS`) and a zone (`Z`, `±HH`, `±HH:MM`, `±HHMM`). No zone means UTC.
 */
const ISO_8601 =
  /^(\d{4})-?(\d{2})-?(\d{2})(?:[T ](\d{2})(?::?(\d{2})(?::?(\d{2})(?:[.,](\d{1,9}))?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/;

/** When `input` (a Zulip global time) happens, in milliseconds since the epoch; null when it is no ISO 8601 time. */
function parseGlobalTime(input: string): number | null {
  const m = ISO_8601.exec(input);
  if (!m) return null;
  // The basic and extended forms are not mixed within the date (2024-0605 is neither).
  if ((input.slice(4, 5) === "-") !== (input.slice(7, 8) === "-")) return null;
  const [year, month, day, hour = 0, minute = 0, second = 0] = m.slice(1, 7).map((part) => (part === undefined ? undefined : Number(part))) as number[];
  const micros = m[7] === undefined ? 0 : Number(m[7].slice(0, 6).padEnd(6, "0"));
  if (year! < 1 || month! < 1 || month! > 12 || day! < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const date = new Date(0);
  date.setUTCFullYear(year!, month! - 1, day!);
  date.setUTCHours(hour, minute, second, 0);
  // Day 31 of a 30-day month rolls over: not a date.
  if (date.getUTCDate() !== day) return null;
  let offsetMinutes = 0;
  const zone = m[8];
  if (zone !== undefined && zone !== "Z") {
    const hours = Number(zone.slice(1, 3));
    const minutes = zone.length > 3 ? Number(zone.slice(-2)) : 0;
    if (hours > 23 || minutes > 59) return null;
    offsetMinutes = (zone[0] === "-" ? -1 : 1) * (hours * 60 + minutes);
  }
  const ms = date.getTime() - offsetMinutes * 60_000 + micros / 1000;
  return ms >= TIME_RANGE.min && ms <= TIME_RANGE.max ? ms : null;
}

/**
 * `<time:…>`, Zulip's global times: a `<time datetime="…">` element clients show in
 * each reader's own time zone, the input kept as its text; since FL 451 a time that
 * cannot be read stays as the escaped text it was (no error span). (Without this rule markdown-it read it as a `time:` autolink.)
 */
function globalTimeRule(state: StateInline, silent: boolean): boolean {
  if (state.src.charCodeAt(state.pos) !== 0x3c /* < */) return false;
  const m = /^<time:([^>]*?)>/.exec(state.src.slice(state.pos));
  if (!m) return false;
  if (!silent) {
    const ms = parseGlobalTime(m[1]);
    state.push("html_inline", "", 0).content =
      ms === null
        ? escapeHtml(m[0])
        : `<time datetime="${isoUtc(ms)}">${escapeHtml(m[1])}</time>`;
  }
  state.pos += m[0].length;
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

/** Renders message Markdown to Zulip-style HTML and reports mentions and links. */
export function renderMarkdown(content: string, ctx: RenderContext, md?: MarkdownItInstance): RenderResult {
  const result: RenderResult = {
    html: "",
    mentionedUserIds: new Set(),
    mentionedGroupIds: new Set(),
    channelWildcard: false,
    topicWildcard: false,
    linkUrls: [],
  };
  result.html = (md ?? (markdown ??= buildMarkdown())).render(content, { ctx, result } satisfies Env).trimEnd();
  return result;
}

const IMAGE_URL = /\.(png|jpe?g|gif|webp|bmp|svg)(\?.*)?$/i;

/** Whether a link shows an image preview: an upload or an http(s) URL ending in an image extension. */
function previewsImage(url: string): boolean {
  return IMAGE_URL.test(url) && /^(https?:\/\/|\/user_uploads\/)/i.test(url);
}

/**
 * Zulip's inline image previews (`message_inline_image`), placed as Zulip places them:
 * right after the paragraph holding the link (inside its list item, in a list), none
 * for links in a quote; a paragraph that is nothing but a bare image URL gives way to
 * its preview. A named link's text becomes the preview link's title. Each image is
 * previewed once.
 */
function imagePreviewRule(state: StateCore): void {
  const seen = new Set<string>();
  const out: Token[] = [];
  let quoteDepth = 0;
  const tokens = state.tokens;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (token.type === "blockquote_open") quoteDepth++;
    if (token.type === "blockquote_close") quoteDepth--;
    if (token.type !== "paragraph_open" || quoteDepth > 0 || tokens[i + 1]?.type !== "inline" || tokens[i + 2]?.type !== "paragraph_close") {
      out.push(token);
      continue;
    }
    const children = tokens[i + 1].children ?? [];
    const previews: { url: string; title: string | null }[] = [];
    for (let c = 0; c < children.length; c++) {
      if (children[c].type !== "link_open") continue;
      const url = String(children[c].attrGet("href") ?? "");
      if (!previewsImage(url) || seen.has(url)) continue;
      seen.add(url);
      // The link's text as text: a mention or emoji inside it is markup, not a title.
      let text = "";
      for (let d = c + 1; d < children.length && children[d].type !== "link_close"; d++) {
        if (children[d].type === "text" || children[d].type === "code_inline") text += children[d].content;
      }
      previews.push({ url, title: text === url ? null : text });
    }
    const meaningful = children.filter((child) => !(child.type === "text" && child.content.trim() === "") && child.type !== "softbreak");
    const onlyBareImage =
      previews.length === 1 &&
      previews[0].title === null &&
      meaningful.length === 3 &&
      meaningful[0].type === "link_open" &&
      meaningful[2].type === "link_close";
    if (!onlyBareImage) out.push(token, tokens[i + 1], tokens[i + 2]);
    for (const { url, title } of previews) {
      const preview = new state.Token("html_block", "", 0);
      const href = escapeHtml(url);
      preview.content = `<div class="message_inline_image"><a href="${href}"${title === null ? "" : ` title="${escapeHtml(title)}"`}><img src="${href}"></a></div>\n`;
      out.push(preview);
    }
    i += 2;
  }
  state.tokens = out;
}

/** Zulip's `has:` properties, derived from the links a message contains. */
export function linkProperties(urls: string[]): { has_link: boolean; has_image: boolean; has_attachment: boolean } {
  return {
    has_link: urls.length > 0,
    has_image: urls.some((u) => IMAGE_URL.test(u)),
    has_attachment: urls.some((u) => /(^|\/)user_uploads\//.test(u)),
  };
}

/** Plain-text topic links: linkifier matches and bare URLs in a topic name. */
export function topicLinks(topic: string, linkifiers: Linkifier[]): { text: string; url: string }[] {
  const links: { text: string; url: string }[] = [];
  for (const l of linkifiers) {
    const re = compileLinkifier(l);
    if (!re) continue;
    for (const m of topic.matchAll(re)) links.push({ text: m[0], url: expandTemplate(l.url_template, m as RegExpExecArray) });
  }
  for (const m of topic.matchAll(/https?:\/\/[^\s<>"]+/g)) links.push({ text: m[0], url: m[0] });
  return links;
}
