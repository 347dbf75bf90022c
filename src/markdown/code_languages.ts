/**
 * Pygments' display names for the languages people most often name on a code block,
 * by the aliases Pygments accepts (lower-case). Zulip writes the lexer's name in
 * `data-code-language` (```py → "Python"), and clients match code playgrounds
 * (`realm_playgrounds[].pygments_language`) against it. A name not listed here is kept
 * as written.
 */
const PYGMENTS_NAMES: Readonly<Record<string, string>> = {
  python: "Python", py: "Python", python3: "Python", py3: "Python", sage: "Python", bazel: "Python", starlark: "Python",
  python2: "Python 2.x", py2: "Python 2.x",
  javascript: "JavaScript", js: "JavaScript", mjs: "JavaScript", cjs: "JavaScript",
  typescript: "TypeScript", ts: "TypeScript",
  java: "Java",
  c: "C",
  "c++": "C++", cpp: "C++",
  csharp: "C#", "c#": "C#", cs: "C#",
  go: "Go", golang: "Go",
  rust: "Rust", rs: "Rust",
  ruby: "Ruby", rb: "Ruby",
  bash: "Bash", sh: "Bash", ksh: "Bash", zsh: "Bash", shell: "Bash",
  console: "Bash Session", "shell-session": "Bash Session",
  json: "JSON",
  yaml: "YAML", yml: "YAML",
  toml: "TOML",
  ini: "INI", cfg: "INI",
  html: "HTML",
  xml: "XML",
  css: "CSS",
  scss: "SCSS",
  sql: "SQL",
  kotlin: "Kotlin",
  swift: "Swift",
  php: "PHP",
  scala: "Scala",
  haskell: "Haskell", hs: "Haskell",
  lua: "Lua",
  perl: "Perl", pl: "Perl",
  elixir: "Elixir", ex: "Elixir", exs: "Elixir",
  erlang: "Erlang",
  dart: "Dart",
  diff: "Diff", udiff: "Diff",
  docker: "Docker", dockerfile: "Docker",
  make: "Makefile", makefile: "Makefile", mf: "Makefile", bsdmake: "Makefile",
  powershell: "PowerShell", pwsh: "PowerShell", posh: "PowerShell", ps1: "PowerShell",
  markdown: "Markdown", md: "Markdown",
  tex: "TeX", latex: "TeX",
  text: "Text only",
};

/** The name Zulip writes for a code block's language (its Pygments lexer's), or the language in lower case, as Zulip reads it. */
export function codeLanguageName(lang: string): string {
  const key = lang.toLowerCase();
  // Own keys only: `constructor` is no language (and an inherited one is no string).
  return Object.hasOwn(PYGMENTS_NAMES, key) ? PYGMENTS_NAMES[key] : key;
}
