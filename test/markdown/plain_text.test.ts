import { describe, expect, test } from "bun:test";
import { buildMarkdown, plainLineHtml, renderMarkdown, type RenderContext } from "../../src/markdown";

/**
 * A plain line of words skips markdown-it (src/markdown/index.ts, plainLineHtml): what
 * it gives must be byte for byte what markdown-it renders, whatever the sender's
 * emoticon setting and the realm's linkifiers, and everything else must still go to
 * markdown-it.
 */
const base: RenderContext = {
  userById: (id) => (id === 5 ? { id: 5, full_name: "King Hamlet" } : undefined),
  usersByName: (name) => (name.toLowerCase() === "king hamlet" ? [{ id: 5, full_name: "King Hamlet" }] : []),
  groupByName: () => undefined,
  channelByName: (name) => (name.toLowerCase() === "denmark" ? { id: 9, name: "Denmark" } : undefined),
  linkifiers: [],
  ownUrl: "https://chat.example.com",
};
const contexts: RenderContext[] = [
  base,
  { ...base, translateEmoticons: true },
  // Linkifiers that match plain words and numbers: the line must then take markdown-it's path.
  { ...base, linkifiers: [{ pattern: "PR(?P<id>[0-9]+)", url_template: "https://example.com/pr/{id}" }, { pattern: "(?P<w>castle)", url_template: "https://example.com/w/{w}" }] },
];
const full = buildMarkdown();

describe("plain lines without markdown-it", () => {
  test("render as markdown-it renders them, over random lines", () => {
    // Mostly the plain alphabet, with characters that must send a line to markdown-it.
    const plainAlphabet = [..."abcxyzABCXYZ0123456789          ,,''??!!....", ..."PR12 castle "];
    const others = [":", ")", "(", ";", "<", "-", "*", "_", "#", "@", "/", "\n", "`", "$", "~", "&", "\"", "\\", "|", ">", "[", "=", "+", "ü", "\t"];
    let seed = 11;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    let plain = 0;
    for (let n = 0; n < 6000; n++) {
      const length = 1 + Math.floor(random() * 40);
      let text = "";
      // Half the lines plain characters only, the others with an odd character now and then.
      const oddShare = n % 2 === 0 ? 0 : 0.08;
      for (let i = 0; i < length; i++) text += random() < oddShare ? others[Math.floor(random() * others.length)] : plainAlphabet[Math.floor(random() * plainAlphabet.length)];
      for (const ctx of contexts) {
        const viaMarkdownIt = renderMarkdown(text, ctx, full);
        const html = plainLineHtml(text, ctx.linkifiers);
        if (html === undefined) continue;
        plain++;
        expect({ text, html, links: viaMarkdownIt.linkUrls.length }).toEqual({ text, html: viaMarkdownIt.html, links: 0 });
      }
    }
    // The comparison did cover the shortcut (a good share of lines were plain).
    expect(plain).toBeGreaterThan(2000);
  });

  test("chosen lines", () => {
    const plainLines = ["castle ghost king queen poison sword crown denmark player 42", "Hello, world! How's it going? Fine. Thanks.", "a", "42", "version 2. Next", "end."];
    for (const text of plainLines) {
      expect(plainLineHtml(text, base.linkifiers)).toBe(`<p>${text}</p>`);
      expect(renderMarkdown(text, base).html).toBe(renderMarkdown(text, base, full).html);
    }
    // Each of these is something markdown-it (or a Zulip rule) changes.
    const notPlain = ["1. one", "12. twelve", "example.com", "a.b", "1.2.3.4", "trailing ", " leading", "two\nlines", "smile :)", "x :D", "<3", "@**King Hamlet**", "#**Denmark**", "*em*", "a_b_c", "`code`", "$$x$$", "a & b", "say \"hi\"", "", "ünï"];
    for (const text of notPlain) expect({ text, html: plainLineHtml(text, base.linkifiers) }).toEqual({ text, html: undefined });
    expect(plainLineHtml("see PR12 soon", contexts[2].linkifiers)).toBeUndefined();
    expect(plainLineHtml("see PR soon", contexts[2].linkifiers)).toBe("<p>see PR soon</p>");
    expect(renderMarkdown("see PR12 soon", contexts[2]).linkUrls).toEqual(["https://example.com/pr/12"]);
  });
});
