/**
 * The house rules of docs/architecture.md, read from the code: layers import only
 * downward, no module cycle, the store's key spaces are touched only inside
 * `src/store/`, and events are published only through the commit path
 * (src/events/commit.ts). Each rule is checked against the real source tree, and
 * against a small made-up tree that breaks it, so that a rule that could never fail
 * is noticed.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const SRC = join(ROOT, "src");

/** Rank of each layer: a module may import its own rank or lower ones. */
const LAYERS: [prefix: string, rank: number][] = [
  ["src/main.ts", 90],
  ["src/cli.ts", 90],
  ["src/cli/", 90],
  ["src/server.ts", 80],
  ["src/transfer/", 75],
  ["src/api/", 70],
  ["src/http/", 70],
  ["src/auth/", 70],
  ["src/actions/", 60],
  ["src/views/", 51],
  ["src/access/", 50],
  ["src/events/", 40],
  ["src/backup/", 35],
  ["src/store/", 30],
  // Beside every layer: they import only each other.
  ["src/markdown/", 10],
  ["src/lib/", 10],
  ["src/avatars/", 10],
  ["src/schemas/", 10],
  ["src/errors.ts", 10],
  ["src/version.ts", 10],
  ["src/lockfile.ts", 10],
];

/** The server's context: a declaration every layer may import for its type alone. */
const CONTEXT = "src/context.ts";

export function rankOf(file: string): number | undefined {
  for (const [prefix, rank] of LAYERS) if (file === prefix || (prefix.endsWith("/") && file.startsWith(prefix))) return rank;
  return undefined;
}

export interface Import {
  from: string;
  to: string;
  typeOnly: boolean;
  line: number;
}

const IMPORT = /^\s*(import|export)\s+(type\s+)?(?:[^'"]*?\s+from\s+)?["']([^"']+)["']/gm;
const DYNAMIC_IMPORT = /\bimport\(\s*["']([^"']+)["']\s*\)/g;

/** Resolves a relative specifier to a repository path of a .ts file, or null for a package. */
function resolveSpecifier(fromFile: string, spec: string, exists: (path: string) => boolean): string | null {
  if (!spec.startsWith(".")) return null;
  const base = join(dirname(fromFile), spec);
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts")]) if (exists(candidate)) return candidate;
  return base;
}

export function importsOf(file: string, text: string, exists: (path: string) => boolean): Import[] {
  const found: Import[] = [];
  const lineAt = (index: number) => text.slice(0, index).split("\n").length;
  for (const match of text.matchAll(IMPORT)) {
    const to = resolveSpecifier(file, match[3], exists);
    if (to) found.push({ from: file, to, typeOnly: Boolean(match[2]), line: lineAt(match.index!) });
  }
  for (const match of text.matchAll(DYNAMIC_IMPORT)) {
    const to = resolveSpecifier(file, match[1], exists);
    if (to) found.push({ from: file, to, typeOnly: false, line: lineAt(match.index!) });
  }
  return found;
}

/** Imports that go up a layer, or from a file no layer holds. */
export function layerViolations(imports: Import[]): string[] {
  const problems: string[] = [];
  for (const imp of imports) {
    if (!imp.to.startsWith("src/")) continue;
    if (imp.to === CONTEXT && imp.typeOnly) continue;
    if (imp.from === CONTEXT) {
      if (!imp.typeOnly) problems.push(`${imp.from}:${imp.line} imports ${imp.to} for more than its types`);
      continue;
    }
    const fromRank = rankOf(imp.from);
    const toRank = rankOf(imp.to);
    if (fromRank === undefined) problems.push(`${imp.from} belongs to no layer`);
    else if (toRank === undefined) problems.push(`${imp.from}:${imp.line} imports ${imp.to}, which belongs to no layer`);
    else if (toRank > fromRank || (fromRank === 10 && toRank !== 10)) problems.push(`${imp.from}:${imp.line} imports ${imp.to} (up a layer)`);
    // Routes call actions or reads; a record's type is all they may take from the store.
    else if (imp.from.startsWith("src/api/") && imp.to.startsWith("src/store/") && !imp.typeOnly) problems.push(`${imp.from}:${imp.line} imports ${imp.to} (a route reading the store)`);
  }
  return [...new Set(problems)];
}

/** Every cycle's files (one strongly connected component of two or more, or a self-import). */
export function cycles(imports: Import[]): string[][] {
  const edges = new Map<string, Set<string>>();
  for (const imp of imports) {
    if (imp.from === CONTEXT || imp.to === CONTEXT) continue;
    if (!edges.has(imp.from)) edges.set(imp.from, new Set());
    edges.get(imp.from)!.add(imp.to);
  }
  // Tarjan's algorithm.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || edges.get(node)?.has(node)) found.push(component.sort());
    }
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** Lines outside src/store that reach a key space (`dbs.`) or publish an event. */
export function ruleViolations(file: string, text: string): string[] {
  const problems: string[] = [];
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    const code = line.replace(/\/\/.*$/, "");
    if (/^\s*(\*|\/\*)/.test(line)) return;
    if (!file.startsWith("src/store/") && /\.dbs\b|\bdbs\s*\./.test(code)) problems.push(`${file}:${i + 1} reaches a key space outside src/store`);
    if (file !== "src/events/commit.ts" && file !== "src/events/hub.ts" && /\.publish\s*\(/.test(code)) problems.push(`${file}:${i + 1} publishes outside the commit path`);
  });
  return problems;
}

/**
 * Where a file names a path outside the repository: the workspace's absolute folders
 * or a climb out to a sibling `shared` folder. The repository must stand alone (its
 * reference material is named by title, never by where a copy lies). The patterns are
 * built from pieces so this file does not match itself.
 */
const OUTSIDE_PATHS = [new RegExp("(^|[\\s\"'`(=:])/" + "work/"), new RegExp("\\.\\./" + "shared\\b")];
export function outsidePathMentions(file: string, text: string): string[] {
  const found: string[] = [];
  text.split("\n").forEach((line, i) => {
    if (OUTSIDE_PATHS.some((re) => re.test(line))) found.push(`${file}:${i + 1} names a path outside the repository`);
  });
  return found;
}

/** Every text file of the repository (dependencies and git's own folder aside). */
function repositoryTextFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name === ".git") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...repositoryTextFiles(path));
    else if (/\.(ts|tsx|js|mjs|cjs|json|md|html|css|svg|toml|ya?ml|sh)$/.test(entry.name)) out.push(relative(ROOT, path));
  }
  return out.sort();
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts")) out.push(relative(ROOT, path));
  }
  return out.sort();
}

function readTree() {
  const files = sourceFiles(SRC);
  const known = new Set(files);
  const texts = new Map(files.map((f) => [f, readFileSync(join(ROOT, f), "utf8")]));
  const imports = files.flatMap((f) => importsOf(f, texts.get(f)!, (p) => known.has(p)));
  return { files, texts, imports };
}

describe("the source tree", () => {
  const tree = readTree();

  test("every import goes down a layer or stays in it", () => {
    expect(layerViolations(tree.imports)).toEqual([]);
  });

  test("no module cycle", () => {
    expect(cycles(tree.imports)).toEqual([]);
  });

  test("key spaces only in src/store, events only through the commit path", () => {
    expect(tree.files.flatMap((f) => ruleViolations(f, tree.texts.get(f)!))).toEqual([]);
  });

  test("no file names a path outside the repository", () => {
    expect(repositoryTextFiles(ROOT).flatMap((f) => outsidePathMentions(f, readFileSync(join(ROOT, f), "utf8")))).toEqual([]);
  });
});

describe("the rules fail on a tree that breaks them", () => {
  const exists = (p: string) => ["src/store/a.ts", "src/actions/b.ts", "src/actions/c.ts", "src/lib/d.ts", CONTEXT].includes(p);

  test("an import going up", () => {
    const imports = importsOf("src/store/a.ts", 'import { x } from "../actions/b";\n', exists);
    expect(layerViolations(imports)).toEqual(["src/store/a.ts:1 imports src/actions/b.ts (up a layer)"]);
    expect(layerViolations(importsOf("src/lib/d.ts", 'import type { S } from "../store/a";\n', exists))).toHaveLength(1);
    expect(layerViolations(importsOf("src/store/a.ts", 'import type { Hearth } from "../context";\n', exists))).toEqual([]);
    expect(layerViolations(importsOf("src/store/a.ts", 'import { x } from "../lib/d";\nimport "lmdb";\n', exists))).toEqual([]);
    const route = (text: string) => layerViolations(importsOf("src/api/e.ts", text, (p) => p === "src/store/a.ts"));
    expect(route('import { getUser } from "../store/a";\n')).toEqual(["src/api/e.ts:1 imports src/store/a.ts (a route reading the store)"]);
    expect(route('import type { UserRecord } from "../store/a";\n')).toEqual([]);
  });

  test("a cycle, through type imports too", () => {
    const imports = [
      ...importsOf("src/actions/b.ts", 'import { c } from "./c";\n', exists),
      ...importsOf("src/actions/c.ts", 'import type { B } from "./b";\n', exists),
    ];
    expect(cycles(imports)).toEqual([["src/actions/b.ts", "src/actions/c.ts"]]);
  });

  test("a path outside the repository", () => {
    const outside = "/" + "work/shared/reference/x.md";
    expect(outsidePathMentions("test/a.ts", ` * Every requirement in ${outside}, checked`)).toEqual(["test/a.ts:1 names a path outside the repository"]);
    expect(outsidePathMentions("src/a.ts", `readFileSync("../" + "shared/x")\nreadFileSync("${".." + "/shared/x"}")`)).toEqual(["src/a.ts:2 names a path outside the repository"]);
    expect(outsidePathMentions("docs/a.md", "see https://example.com/work/items and docs/shared-state.md")).toEqual([]);
  });

  test("a key space or a publish outside their place", () => {
    expect(ruleViolations("src/actions/b.ts", "h.store.dbs.drafts.put(k, v);\nh.events.publish(e, ids);\n")).toHaveLength(2);
    expect(ruleViolations("src/store/a.ts", "store.dbs.drafts.put(k, v);\n")).toEqual([]);
    expect(ruleViolations("src/actions/b.ts", "for (const db of Object.values(store.dbs)) db.clearSync();\n")).toHaveLength(1);
    expect(ruleViolations("src/actions/b.ts", "// dbs.drafts is read by ...\n * h.events.publish(e)\n")).toEqual([]);
  });
});
