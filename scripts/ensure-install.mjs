// Runs `npm ci` when dependencies are missing or were installed from another
// package-lock.json, so `npm start` and `npm test` each work on a fresh clone by
// themselves, with exactly the locked versions. The lock file's content (not its time
// stamp, which every checkout renews) decides.
import { execSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";

const stamp = "node_modules/.hearth-installed-lock";
const lockHash = () => createHash("sha256").update(readFileSync("package-lock.json")).digest("hex");
const needed = ["node_modules/.bin/bun", "node_modules/elysia", "node_modules/lmdb", "node_modules/.bin/tsc"];
const installed = existsSync(stamp) ? readFileSync(stamp, "utf8").trim() : "";
if (needed.some((p) => !existsSync(p)) || installed !== lockHash()) {
  console.error("Installing dependencies (npm ci)…");
  execSync("npm ci --no-audit --no-fund", { stdio: "inherit" });
  writeFileSync(stamp, lockHash());
}
