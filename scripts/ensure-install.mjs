// Runs `npm install` when dependencies are missing or older than the lock file, so
// `npm start` and `npm test` each work on a fresh clone by themselves.
// (`npm ci` cannot be used: see README, "Why npm install".)
import { execSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";

const marker = "node_modules/.package-lock.json";
const needed = ["node_modules/.bin/bun", "node_modules/elysia", "node_modules/lmdb"];
const stale =
  !existsSync(marker) ||
  needed.some((p) => !existsSync(p)) ||
  statSync("package-lock.json").mtimeMs > statSync(marker).mtimeMs + 1000;
if (stale) {
  console.error("Installing dependencies (npm install)…");
  execSync("npm install --no-audit --no-fund", { stdio: "inherit" });
}
