import type { HLJSApi, LanguageFn } from "highlight.js";
import { escapeHtml } from "../lib/text";

/**
 * Syntax highlighting in Pygments' HTML, which Zulip sends and clients colour: each
 * token a `<span>` with Pygments' short class (`k` keyword, `s2` string, `nf`
 * function name, …). highlight.js finds the tokens (Pygments is Python); its scopes
 * are mapped to Pygments' classes here. Names, punctuation and operators, which
 * Pygments also wraps and clients leave in the text colour, stay plain where
 * highlight.js does not mark them.
 */

/**
 * highlight.js grammars by the Pygments lexer name Hearth writes in `data-code-language`.
 * Left out, so written as plain text: C#, Bash sessions, TOML/INI and Markdown, whose
 * grammars took up to a second on some 10,000-character inputs, many times the
 * slowest grammar kept here (docs/benchmarks.md).
 * They are loaded with the first code block (`require`, which Bun's bundler keeps
 * lazy; see highlighter).
 */
const GRAMMARS: Readonly<Record<string, [string, () => LanguageFn | { default: LanguageFn }]>> = {
  Python: ["python", () => require("highlight.js/lib/languages/python")],
  "Python 2.x": ["python", () => require("highlight.js/lib/languages/python")],
  JavaScript: ["javascript", () => require("highlight.js/lib/languages/javascript")],
  TypeScript: ["typescript", () => require("highlight.js/lib/languages/typescript")],
  Java: ["java", () => require("highlight.js/lib/languages/java")],
  C: ["c", () => require("highlight.js/lib/languages/c")],
  "C++": ["cpp", () => require("highlight.js/lib/languages/cpp")],
  Go: ["go", () => require("highlight.js/lib/languages/go")],
  Rust: ["rust", () => require("highlight.js/lib/languages/rust")],
  Ruby: ["ruby", () => require("highlight.js/lib/languages/ruby")],
  Bash: ["bash", () => require("highlight.js/lib/languages/bash")],
  JSON: ["json", () => require("highlight.js/lib/languages/json")],
  YAML: ["yaml", () => require("highlight.js/lib/languages/yaml")],
  HTML: ["xml", () => require("highlight.js/lib/languages/xml")],
  XML: ["xml", () => require("highlight.js/lib/languages/xml")],
  CSS: ["css", () => require("highlight.js/lib/languages/css")],
  SCSS: ["scss", () => require("highlight.js/lib/languages/scss")],
  SQL: ["sql", () => require("highlight.js/lib/languages/sql")],
  Kotlin: ["kotlin", () => require("highlight.js/lib/languages/kotlin")],
  Swift: ["swift", () => require("highlight.js/lib/languages/swift")],
  PHP: ["php", () => require("highlight.js/lib/languages/php")],
  Scala: ["scala", () => require("highlight.js/lib/languages/scala")],
  Haskell: ["haskell", () => require("highlight.js/lib/languages/haskell")],
  Lua: ["lua", () => require("highlight.js/lib/languages/lua")],
  Perl: ["perl", () => require("highlight.js/lib/languages/perl")],
  Elixir: ["elixir", () => require("highlight.js/lib/languages/elixir")],
  Erlang: ["erlang", () => require("highlight.js/lib/languages/erlang")],
  Dart: ["dart", () => require("highlight.js/lib/languages/dart")],
  Diff: ["diff", () => require("highlight.js/lib/languages/diff")],
  Docker: ["dockerfile", () => require("highlight.js/lib/languages/dockerfile")],
  Makefile: ["makefile", () => require("highlight.js/lib/languages/makefile")],
  PowerShell: ["powershell", () => require("highlight.js/lib/languages/powershell")],
  TeX: ["latex", () => require("highlight.js/lib/languages/latex")],
};

/**
 * Pygments' class for a highlight.js scope (its first word, or the whole scope where a
 * second word changes the meaning); null: plain text, whatever encloses it.
 */
const PYGMENTS_CLASSES: Readonly<Record<string, string | null>> = {
  keyword: "k",
  "meta keyword_": "cp",
  built_in: "nb",
  type: "kt",
  literal: "kc",
  number: "m",
  string: "s",
  "meta string_": "cpf",
  "char escape_": "se",
  subst: "si",
  regexp: "sr",
  symbol: "ss",
  comment: "c",
  doctag: "sd",
  meta: "cp",
  "title function_": "nf",
  "title function_ invoke__": null,
  "title class_": "nc",
  "title class_ inherited__": null,
  title: "nf",
  params: null,
  attr: "na",
  attribute: "na",
  property: "py",
  variable: "nv",
  "variable language_": "bp",
  "variable constant_": "no",
  operator: "o",
  punctuation: "p",
  tag: "nt",
  name: "nt",
  "selector-tag": "nt",
  "selector-class": "nc",
  "selector-id": "nn",
  "selector-pseudo": "nd",
  section: "gh",
  emphasis: "ge",
  strong: "gs",
  addition: "gi",
  deletion: "gd",
  code: "sb",
  quote: "c",
  "template-variable": "si",
  "template-tag": "cp",
};

/** Where a language's `meta` is a decorator or annotation (Pygments' Name.Decorator), not a preprocessor line. */
const DECORATOR_META = new Set(["python", "java", "kotlin", "scala", "typescript", "dart", "swift"]);

/** Where Pygments' lexer for a language names a token otherwise: JSON's keys and constants, a diff's headers. */
const LANGUAGE_CLASSES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  json: { k: "kc", na: "nt" },
  diff: { cp: "gu", c: "gh" },
};

/** Pygments' finer classes for literals, by how the token is written. */
function refine(base: string, text: string, language: string): string {
  const cls = LANGUAGE_CLASSES[language]?.[base] ?? base;
  switch (cls) {
    case "s":
      return text.startsWith('"') ? "s2" : text.startsWith("'") ? "s1" : "s";
    case "m":
      if (/^0x/i.test(text)) return "mh";
      return /^[-+]?\d+$/.test(text) ? "mi" : /^[-+]?[\d.]+(e[-+]?\d+)?$/i.test(text) ? "mf" : "m";
    case "c":
      return text.startsWith("/*") || text.startsWith("<!--") ? "cm" : text.includes("\n") ? "c" : "c1";
    case "cp":
      return DECORATOR_META.has(language) ? "nd" : "cp";
    default:
      return cls;
  }
}

let core: HLJSApi | undefined;

/**
 * highlight.js with every grammar, loaded at the first code block: all at once, since a
 * grammar highlights another language embedded in it (a script in HTML) only when that
 * one is registered, and a message must render the same whatever came before it.
 */
function highlighter(): HLJSApi {
  if (!core) {
    const loaded = require("highlight.js/lib/core") as HLJSApi | { default: HLJSApi };
    core = "highlight" in loaded ? loaded : loaded.default;
    for (const [name, load] of Object.values(GRAMMARS)) {
      if (core.getLanguage(name)) continue;
      const grammar = load();
      core.registerLanguage(name, typeof grammar === "function" ? grammar : grammar.default);
    }
  }
  return core;
}

const ENTITIES: Readonly<Record<string, string>> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#x27;": "'" };
const unescape = (html: string) => html.replace(/&(?:amp|lt|gt|quot|#x27);/g, (e) => ENTITIES[e]);

/**
 * `code` as Pygments' token spans for a language Hearth highlights (by the Pygments
 * name of `data-code-language`); undefined for any other (the caller writes the text).
 */
export function highlightCode(code: string, pygmentsName: string): string | undefined {
  const grammar = Object.hasOwn(GRAMMARS, pygmentsName) ? GRAMMARS[pygmentsName][0] : undefined;
  // Several grammars slow down with the length of a run without spaces (C among them,
  // docs/benchmarks.md); real code rarely has one this long.
  if (grammar === undefined || /\S{80}/.test(code)) return undefined;
  const hljs = highlighter();
  let marked: string;
  try {
    marked = hljs.highlight(code, { language: grammar, ignoreIllegals: true }).value;
  } catch {
    return undefined;
  }
  // highlight.js nests its spans (a substitution inside a string); Pygments' are flat.
  const runs: { cls: string | null; text: string }[] = [];
  const scopes: (string | null | undefined)[] = [];
  const current = () => {
    for (let i = scopes.length - 1; i >= 0; i--) if (scopes[i] !== undefined) return scopes[i]!;
    return null;
  };
  let shown = "";
  for (const m of marked.matchAll(/<span class="([^"]*)">|<\/span>|[^<]+/g)) {
    if (m[1] !== undefined && !m[1].startsWith("hljs-")) {
      // Another language embedded (a script in HTML): its own scopes follow.
      scopes.push(undefined);
    } else if (m[1] !== undefined) {
      const scope = m[1].slice("hljs-".length).replace(/ hljs-/g, " ");
      const first = scope.split(" ")[0];
      let cls = Object.hasOwn(PYGMENTS_CLASSES, scope) ? PYGMENTS_CLASSES[scope] : Object.hasOwn(PYGMENTS_CLASSES, first) ? PYGMENTS_CLASSES[first] : undefined;
      // Inside a preprocessor line (`#include <stdio.h>`) Pygments keeps the directive and names the file.
      if (current() === "cp" && (cls === "k" || cls === "s")) cls = cls === "k" ? "cp" : "cpf";
      scopes.push(cls);
    } else if (m[0] === "</span>") {
      scopes.pop();
    } else {
      const text = unescape(m[0]);
      shown += text;
      const cls = current();
      const last = runs[runs.length - 1];
      if (last && last.cls === cls) last.text += text;
      else runs.push({ cls, text });
    }
  }
  // Markup this function does not know would lose characters: then the code as typed.
  if (shown !== code) return undefined;
  let html = "";
  for (const { cls, text } of runs) {
    html += cls === null ? escapeHtml(text) : `<span class="${refine(cls, text, grammar)}">${escapeHtml(text)}</span>`;
  }
  return html;
}
