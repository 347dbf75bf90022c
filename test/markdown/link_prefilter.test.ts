import { describe, expect, test } from "bun:test";
import { buildMarkdown, renderMarkdown, type RenderContext } from "../../src/markdown";

/**
 * The link prefilter (src/markdown/index.ts, skipLinklessText) answers "no link" for
 * text without ".", ":", "/" or "@" without asking linkify-it: rendering must be byte
 * for byte what the full linkify-it check gives.
 */
const ctx: RenderContext = {
  userById: (id) => (id === 5 ? { id: 5, full_name: "King Hamlet" } : undefined),
  usersByName: (name) => (name.toLowerCase() === "king hamlet" ? [{ id: 5, full_name: "King Hamlet" }] : []),
  groupByName: (name) => (name === "support" ? { id: 3, name: "support" } : undefined),
  channelByName: (name) => (name.toLowerCase() === "denmark" ? { id: 9, name: "Denmark" } : undefined),
  linkifiers: [{ pattern: "#(?P<id>[0-9]+)", url_template: "https://github.com/zulip/zulip/issues/{id}" }],
  ownUrl: "https://chat.example.com",
};

const fast = buildMarkdown();
const full = buildMarkdown({ linkPrefilter: false });

const CORPUS = [
  "castle ghost king queen poison sword crown denmark player 42",
  "plain words, with punctuation! Questions? (parentheses) [brackets] {braces} \"quotes\" 'single' — dashes – and… ellipses",
  "https://example.com/path?q=1#frag and http://foo.org, ftp://files.example.net/x",
  "HTTPS://EXAMPLE.COM/UPPER and Mailto:someone@example.com",
  "bare domains: example.com www.example.org/page sub.domain.co.uk/path setup.py notes.md run.sh",
  "emails: someone@example.com first.last+tag@sub.example.io not-an-email@ @alone",
  "protocol relative //example.com/x and a:b c/d e.f g@h",
  "localhost localhost:8080 127.0.0.1 192.168.1.1:3000 [::1]",
  "@**King Hamlet** @_**King Hamlet** @*support* @**all** #**Denmark** #**Denmark>topic**",
  "emoji :smile: :+1: 😀 🎉 :) translate me :( ",
  "`inline code with http://example.com` and ```\nfenced code example.com\n```",
  "```python\nprint('x.y')\n```",
  "$$x^2 + y.z$$ and ```math\n\\frac{a}{b}\n```",
  "[a named link](https://example.com) [relative](/#narrow/channel/9) <https://autolink.example.com>",
  "- a list item example.com\n- second item\n  1. nested with https://x.org\n\n1. one\n2. two",
  "> quoted https://quoted.example.com\n> more text",
  "| a | b |\n|--:|:-:|\n| example.com | 1 |",
  "**bold** *em* ~~strike~~ __under__ _single_",
  "issue #123 and #456 linkified",
  "Unicode: Ünïcödé wörds 日本語のテキスト текст на русском עברית عربي",
  "full-width ｅｘａｍｐｌｅ．ｃｏｍ and ideographic full stop example。com",
  "a\nline\nbreaks\n\nparagraphs",
  "https://chat.example.com/#narrow/channel/9-Denmark own link",
  "image https://example.com/pic.png and /user_uploads/1/ab/file.pdf",
  "<time:2024-01-02T03:04:05Z> and <b>html</b> & entities &amp; &copy;",
  "trailing punctuation example.com. (example.org) example.net, \"example.io\"",
  "xn--80ak6aa92e.com and пример.рф and domain.xyz",
  "||| weird ||| <> >< ｜ separators｜example.com｜",
  "",
  "   ",
];

describe("the link prefilter", () => {
  test("is installed", () => {
    expect(fast.linkPrefiltered).toBe(true);
    expect(full.linkPrefiltered).toBe(false);
  });

  test("renders a varied corpus exactly as the full check does", () => {
    for (const text of CORPUS) {
      const a = renderMarkdown(text, ctx, fast);
      const b = renderMarkdown(text, ctx, full);
      expect({ text, html: a.html, links: a.linkUrls }).toEqual({ text, html: b.html, links: b.linkUrls });
    }
    // The corpus does hold links, so the comparison covers the linkified path too.
    expect(CORPUS.filter((text) => renderMarkdown(text, ctx, full).linkUrls.length > 0).length).toBeGreaterThan(10);
  });

  test("linkify-it finds no link in random text without its link characters", () => {
    // Letters, digits, spaces, punctuation and separators of every kind except . : / @
    const alphabet = [..."abcdefghijklmnopqrstuvwxyzABCXYZ0123456789 \n\t-_,;!?'\"()[]{}<>|#$%&*+=~^`\\｜。．：／＠wwwcomorg", "日", "ü", "😀", "\u00a0", "\u2028"];
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let n = 0; n < 3000; n++) {
      const length = 1 + Math.floor(random() * 60);
      let text = "";
      for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)];
      expect({ text, found: full.linkify.test(text) }).toEqual({ text, found: false });
    }
  });
});
