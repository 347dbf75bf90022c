/** Text escaping shared by the renderer, search highlighting and pattern builders. */

export const escapeHtml = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");

export const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** A Zulip (Python-syntax) pattern as JavaScript reads it: `(?P<name>…)` becomes `(?<name>…)`. */
export const pythonPatternToJs = (pattern: string) => pattern.replace(/\(\?P</g, "(?<");

/** The text before the first `separator` and the rest after it (undefined: no separator). */
export function splitOnce(text: string, separator: string): [string, string | undefined] {
  const at = text.indexOf(separator);
  return at === -1 ? [text, undefined] : [text.slice(0, at), text.slice(at + separator.length)];
}
