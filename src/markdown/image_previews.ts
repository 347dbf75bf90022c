import type { StateCore, Token } from "markdown-it";
import { escapeHtml } from "../lib/text";

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
export function imagePreviewRule(state: StateCore): void {
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
