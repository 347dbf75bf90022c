/**
 * `npm run build`: compiles Hearth into single executables.
 *
 *   dist/hearth              Linux x64 (glibc)
 *   dist/hearth-linux-arm64  Linux arm64 (glibc), e.g. 64-bit Raspberry Pi OS
 *
 * Usage: bun scripts/build.ts [--target x64|arm64|all]   (default: all)
 *
 * Two things `bun build --compile` does not do by itself:
 *
 * - Embed native addons. lmdb and msgpackr-extract find their `.node` file at run
 *   time through `node-gyp-build-optional-packages`, which searches the disk; inside
 *   a compiled binary there is nothing to search, so it fails with "No native build
 *   was found". A build plugin swaps that loader for a static `require()` of the
 *   addon file of the target platform, which the bundler then embeds.
 * - Cross-compile offline-safely. Bun would download the other platform's runtime
 *   from GitHub; instead the runtime and the addons come from npm (the packages
 *   `@oven/bun-linux-aarch64`, `@lmdb/lmdb-linux-arm64`,
 *   `@msgpackr-extract/msgpackr-extract-linux-arm64`), at exactly the versions the
 *   x64 side uses, checked against package-lock.json, cached under .tmp/.
 *
 * And two things for an idle server's memory and its start (docs/benchmarks.md, "Idle
 * memory"): the bytecode is laid out by a startup profile recorded from a first build
 * of the same tree (scripts/startup_profile.ts), and the executable starts with a
 * reluctant JIT until its start is over (START_JIT_POLICY, src/lib/jit_policy.ts).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { BunPlugin } from "bun";
import { buildWebBundle, type WebBundle } from "../web/bundle";
import { profileEntryCount, recordStartupProfile } from "./startup_profile";

export type BuildTarget = "x64" | "arm64";
export const ALL_TARGETS: readonly BuildTarget[] = ["x64", "arm64"];

const ROOT = resolve(import.meta.dir, "..");
const DIST = join(ROOT, "dist");
/** Other platforms' npm packages, outside node_modules so npm never sees them. */
const PLATFORM_PACKAGE_CACHE = join(ROOT, ".tmp", "platform-packages");

const OUTFILE: Record<BuildTarget, string> = {
  x64: join(DIST, "hearth"),
  arm64: join(DIST, "hearth-linux-arm64"),
};

/** npm's and Bun's names for each CPU; Bun's runtime packages say "aarch64". */
const ARCH: Record<BuildTarget, { node: string; bunPackage: string; bunTarget: Bun.Build.CompileTarget }> = {
  x64: { node: "x64", bunPackage: "@oven/bun-linux-x64", bunTarget: "bun-linux-x64" },
  arm64: { node: "arm64", bunPackage: "@oven/bun-linux-aarch64", bunTarget: "bun-linux-arm64" },
};

/** The packages whose native addon is loaded through node-gyp-build-optional-packages. */
const ADDON_OWNERS = {
  lmdb: (arch: string) => `@lmdb/lmdb-linux-${arch}`,
  "msgpackr-extract": (arch: string) => `@msgpackr-extract/msgpackr-extract-linux-${arch}`,
} as const;
type AddonOwner = keyof typeof ADDON_OWNERS;

export interface BuiltBinary {
  target: BuildTarget;
  path: string;
  bytes: number;
  seconds: number;
  /** Entries of the startup profile its bytecode is laid out by; 0 without one. */
  startupProfileEntries: number;
}

function readJson(path: string): any {
  return JSON.parse(readFileSync(path, "utf8"));
}

function installedPackageJson(packageName: string): any {
  const path = join(ROOT, "node_modules", packageName, "package.json");
  if (!existsSync(path)) throw new Error(`${packageName} is not installed (run npm install).`);
  return readJson(path);
}

function run(cmd: string[], cwd: string): string {
  const proc = Bun.spawnSync(cmd, { cwd, stdout: "pipe", stderr: "pipe" });
  if (proc.exitCode !== 0) {
    throw new Error(`'${cmd.join(" ")}' failed (exit ${proc.exitCode}):\n${proc.stderr.toString().trim()}`);
  }
  return proc.stdout.toString();
}

/**
 * The folder of an npm package at an exact version: the installed copy when it is
 * the one (the build machine's own platform), else a copy fetched with `npm pack`.
 * npm pack ignores `os`/`cpu`, so it fetches another platform's package without
 * touching node_modules or package.json. The tarball must match the integrity
 * recorded in package-lock.json when the lock lists that version.
 */
export function platformPackageDir(name: string, version: string): string {
  const installed = join(ROOT, "node_modules", name);
  if (existsSync(join(installed, "package.json")) && readJson(join(installed, "package.json")).version === version) {
    return installed;
  }
  const cached = join(PLATFORM_PACKAGE_CACHE, `${name.replace("/", "+")}@${version}`);
  if (existsSync(join(cached, "package.json"))) return cached;

  mkdirSync(PLATFORM_PACKAGE_CACHE, { recursive: true });
  // A private staging folder, renamed into place at the end, so a build running
  // beside this one never sees a half-extracted package.
  const staging = join(PLATFORM_PACKAGE_CACHE, `.staging-${process.pid}-${Date.now()}`);
  mkdirSync(staging, { recursive: true });
  try {
    console.error(`Fetching ${name}@${version} from npm…`);
    const packed = JSON.parse(run(["npm", "pack", `${name}@${version}`, "--json", "--silent", "--pack-destination", staging], staging));
    const { filename, integrity } = packed[0] as { filename: string; integrity: string };
    const locked = readJson(join(ROOT, "package-lock.json")).packages?.[`node_modules/${name}`];
    if (locked?.version === version && locked.integrity && locked.integrity !== integrity) {
      throw new Error(`${name}@${version} from npm has integrity ${integrity}, but package-lock.json records ${locked.integrity}.`);
    }
    run(["tar", "-xzf", filename], staging);
    try {
      renameSync(join(staging, "package"), cached);
    } catch (e) {
      // A build running beside this one got there first; its copy is as good.
      if (!existsSync(join(cached, "package.json"))) throw e;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return cached;
}

/**
 * The addon file node-gyp-build-optional-packages would pick under Bun: Bun reports
 * no Node ABI, so only N-API builds qualify, and Linux distributions for Raspberry
 * Pi and servers use glibc.
 */
export function napiAddonFile(packageDir: string): string {
  const files = readdirSync(packageDir).filter((f) => f.endsWith(".node"));
  const pick = ["node.napi.glibc.node", "node.napi.node"].find((f) => files.includes(f));
  if (!pick) throw new Error(`No N-API glibc addon in ${packageDir} (it has: ${files.join(", ") || "no .node files"}).`);
  return join(packageDir, pick);
}

/** The addon file per owning package, and the Bun runtime to embed, for one target. */
export function nativeFilesFor(target: BuildTarget): { addons: Record<AddonOwner, string>; bunExecutable: string | undefined } {
  const arch = ARCH[target].node;
  const addons = {} as Record<AddonOwner, string>;
  for (const owner of Object.keys(ADDON_OWNERS) as AddonOwner[]) {
    const addonPackage = ADDON_OWNERS[owner](arch);
    // The installed lmdb / msgpackr-extract pin each platform's addon package exactly.
    const version = installedPackageJson(owner).optionalDependencies?.[addonPackage];
    if (typeof version !== "string") throw new Error(`The installed ${owner} does not list ${addonPackage} among its optional dependencies.`);
    addons[owner] = napiAddonFile(platformPackageDir(addonPackage, version));
  }
  // The embedded runtime must be the very release of the bundler writing the module
  // graph into it. Building for our own platform, Bun uses itself.
  const native = process.platform === "linux" && process.arch === arch;
  const bunExecutable = native ? undefined : join(platformPackageDir(ARCH[target].bunPackage, Bun.version), "bin", "bun");
  if (bunExecutable && !existsSync(bunExecutable)) throw new Error(`The Bun runtime package has no ${bunExecutable}.`);
  return { addons, bunExecutable };
}

/** The package a module file belongs to, from its path (`…/node_modules/<name>/…`). */
function owningPackage(modulePath: string): string | null {
  const match = /.*node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(modulePath);
  return match ? match[1].replace("\\", "/") : null;
}

const ADDON_NAMESPACE = "hearth-native-addon";

/**
 * Replaces `node-gyp-build-optional-packages` with, per importing package, a loader
 * that `require()`s that package's addon by literal path, so the bundler embeds the
 * `.node` file and the compiled binary loads it from memory. lmdb and
 * msgpackr-extract call the loader with their own folder; the importer tells us
 * which of them is asking, which is more robust than the folder argument, which in
 * a bundle no longer points at the package.
 */
export function nativeAddonPlugin(addons: Record<AddonOwner, string>): BunPlugin {
  return {
    name: "hearth-native-addons",
    setup(build) {
      build.onResolve({ filter: /^node-gyp-build-optional-packages$/ }, (args) => {
        const owner = owningPackage(args.importer);
        if (!owner || !(owner in addons)) {
          throw new Error(`${args.importer} loads a native addon Hearth does not know how to embed; add its package to ADDON_OWNERS in scripts/build.ts.`);
        }
        return { path: owner, namespace: ADDON_NAMESPACE };
      });
      build.onLoad({ filter: /.*/, namespace: ADDON_NAMESPACE }, (args) => {
        const addonFile = addons[args.path as AddonOwner];
        return {
          loader: "js",
          contents: `module.exports = function loadEmbeddedAddon() { return require(${JSON.stringify(addonFile)}); };\n`,
        };
      });
    },
  };
}

/**
 * Puts the web client's bundle (built beforehand) into the executable: web/embedded.ts,
 * null in the source tree, becomes a module whose function returns the bundle's files,
 * so the binary serves `/` without the web/ sources or a bundler run.
 */
export function embeddedWebClientPlugin(bundle: WebBundle): BunPlugin {
  return {
    name: "hearth-embedded-web-client",
    setup(build) {
      build.onLoad({ filter: /[\\/]web[\\/]embedded\.ts$/ }, () => ({
        loader: "ts",
        contents: `export const embeddedWebBundle = () => (${JSON.stringify(bundle)});\n`,
      }));
    },
  };
}

/** Fails the build when an addon's bytes are not inside the executable. */
function assertEmbedded(executable: string, addonFiles: string[]): void {
  const binary = readFileSync(executable);
  for (const addon of addonFiles) {
    const bytes = readFileSync(addon);
    // A slice from the middle: ELF headers are alike across files, code is not.
    const probe = bytes.subarray(Math.floor(bytes.length / 2), Math.floor(bytes.length / 2) + 4096);
    if (binary.indexOf(probe) === -1) throw new Error(`${executable} does not contain the native addon ${addon}.`);
  }
}

/**
 * JavaScriptCore's tier-up thresholds are multiplied by this from the executable's start
 * until src/lib/jit_policy.ts sets the normal policy (once `serve` listens and has written
 * its folder's pending rows, at once for other commands): run-once start-up code, module
 * evaluation and the TypeBox schemas built at import, stays in the interpreter instead
 * of costing JIT compilations, and the JIT compilers' own pages and code stay out of an
 * idle server's memory.
 */
const START_JIT_POLICY = 64;

async function compile(target: BuildTarget, outfile: string, webClient: WebBundle, bytecodeOrder: string | null) {
  const { addons, bunExecutable } = nativeFilesFor(target);
  mkdirSync(dirname(outfile), { recursive: true });
  const result = await Bun.build({
    // The unread-rows job's worker thread is a second entry point: Bun embeds it, and
    // src/server.ts's `new URL("./store/unread_rows_worker.ts", import.meta.url)` finds it inside.
    entrypoints: [join(ROOT, "src", "main.ts"), join(ROOT, "src", "store", "unread_rows_worker.ts")],
    target: "bun",
    // With --compile the source map is embedded, so stack traces name src/ files.
    sourcemap: "linked",
    // Precompiled JavaScriptCore bytecode, for a few MiB: it roughly halves the time to
    // `serve` being ready (docs/benchmarks.md). Start time matters most on a Raspberry Pi.
    // (Bytecode needs the ESM output format here because main.ts awaits at top level.)
    bytecode: true,
    format: "esm",
    plugins: [nativeAddonPlugin(addons), embeddedWebClientPlugin(webClient)],
    compile: {
      target: ARCH[target].bunTarget,
      outfile,
      ...(bunExecutable ? { executablePath: bunExecutable } : {}),
      // A server's behaviour must not change with whatever .env or bunfig.toml
      // happens to sit in the folder it is started from.
      autoloadDotenv: false,
      autoloadBunfig: false,
      // The bytecode `serve` loads up to its first request first (scripts/startup_profile.ts).
      bytecodeOrder,
      jitPolicy: START_JIT_POLICY,
    },
    throw: false,
  });
  if (!result.success) {
    throw new Error(`Building ${outfile} failed:\n${result.logs.map((l) => String(l)).join("\n")}`);
  }
  // The executable already holds the maps (its own and the worker's); the copies written beside it are clutter.
  rmSync(`${outfile}.map`, { force: true });
  for (const output of result.outputs) if (output.path.endsWith(".map")) rmSync(output.path, { force: true });
  assertEmbedded(outfile, Object.values(addons));
}

/** This machine's target, when it can run what it builds. */
function nativeTarget(): BuildTarget | null {
  if (process.platform !== "linux") return null;
  return (ALL_TARGETS as readonly string[]).includes(process.arch) ? (process.arch as BuildTarget) : null;
}

let startupProfileOnce: Promise<{ text: string; entries: number } | null> | undefined;

/**
 * The startup profile (scripts/startup_profile.ts), recorded once per build run from a
 * build of this tree for this machine and shared by every target. Null where this
 * machine cannot run a Linux build (the executables are then laid out without it).
 */
function startupProfile(webClient: WebBundle): Promise<{ text: string; entries: number } | null> {
  startupProfileOnce ??= (async () => {
    const native = nativeTarget();
    if (!native) {
      console.error("build: this machine cannot run a Linux executable; the bytecode is laid out without a startup profile.");
      return null;
    }
    return withTempDir(async (dir) => {
      const unprofiled = join(dir, "hearth");
      await compile(native, unprofiled, webClient, null);
      const text = await recordStartupProfile(unprofiled);
      return { text, entries: profileEntryCount(text) };
    });
  })().catch((error) => {
    // Not kept: a later build in this process records again.
    startupProfileOnce = undefined;
    throw error;
  });
  return startupProfileOnce;
}

/** Runs `use` with a fresh temp folder, removed afterwards whatever happens. */
async function withTempDir<T>(use: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), "hearth-build-profile-"));
  try {
    return await use(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function buildBinary(target: BuildTarget, outfile = OUTFILE[target]): Promise<BuiltBinary> {
  const started = performance.now();
  const webClient = await buildWebBundle();
  const profile = await startupProfile(webClient);
  if (profile) {
    await withTempDir(async (dir) => {
      const order = join(dir, "serve.order");
      writeFileSync(order, profile.text);
      await compile(target, outfile, webClient, order);
    });
  } else {
    await compile(target, outfile, webClient, null);
  }
  return {
    target,
    path: outfile,
    bytes: statSync(outfile).size,
    seconds: (performance.now() - started) / 1000,
    startupProfileEntries: profile?.entries ?? 0,
  };
}

export function parseTargets(argv: string[]): BuildTarget[] {
  let value = "all";
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--target") value = argv[++i] ?? "";
    else if (arg.startsWith("--target=")) value = arg.slice("--target=".length);
    else throw new Error(`unknown argument '${arg}' (usage: bun scripts/build.ts [--target x64|arm64|all])`);
  }
  if (value === "all") return [...ALL_TARGETS];
  if ((ALL_TARGETS as readonly string[]).includes(value)) return [value as BuildTarget];
  throw new Error(`unknown target '${value}' (use x64, arm64 or all)`);
}

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

if (import.meta.main) {
  try {
    for (const target of parseTargets(process.argv.slice(2))) {
      const built = await buildBinary(target);
      const layout = built.startupProfileEntries ? `bytecode laid out by a startup profile of ${built.startupProfileEntries} entries` : "no startup profile";
      console.log(`${built.path.replace(ROOT + "/", "")}: ${megabytes(built.bytes)}, ${layout}, built in ${built.seconds.toFixed(1)} s`);
    }
  } catch (e: any) {
    console.error(`build: ${e?.message ?? e}`);
    process.exit(1);
  }
}
