import type { StateCore, StateInline, Token } from "markdown-it";
import { escapeHtml, escapeRegExp } from "../lib/text";
import { EMOTICON_CONVERSIONS, emojiCodeFor, emojiCodeOfText, emojiNameFor, ZULIP_EXTRA_EMOJI_PATH } from "./emoji";
import type { Env } from "./render_env";

export function emojiRule(state: StateInline, silent: boolean): boolean {
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
export function unicodeEmojiAndEmoticonRule(state: StateCore): void {
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
