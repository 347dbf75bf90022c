import type { MarkdownIt } from "markdown-it";
import { loadMarkdownIt } from "./index";

/**
 * Channel descriptions are short Markdown; the full Zulip renderer (mentions,
 * channel links, emoji) is the messages layer's. Raw HTML is escaped (`html: false`)
 * and markdown-it's link validation drops `javascript:`, `vbscript:`, `file:` and
 * non-image `data:` URLs, so a description cannot inject markup or script into the
 * pages of the users who see the channel.
 */
let md: MarkdownIt | null = null;

/** Built with the first description rendered, not at start (markdown-it is loaded then too). */
function descriptionMarkdown(): MarkdownIt {
  const md = new (loadMarkdownIt())({ html: false, linkify: true, breaks: false });
  // Zulip opens rendered links in a new tab without handing the opener over.
  const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
  md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    tokens[idx].attrSet("target", "_blank");
    tokens[idx].attrSet("rel", "noopener noreferrer");
    return defaultLinkOpen(tokens, idx, options, env, self);
  };
  return md;
}

/** The HTML of a channel description (`rendered_description`); "" for an empty one. */
export function renderDescription(markdown: string): string {
  if (markdown.trim() === "") return "";
  return (md ??= descriptionMarkdown()).render(markdown).trim();
}
