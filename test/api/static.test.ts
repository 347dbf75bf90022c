import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { expectSuccess, startTestServer, type TestServer } from "../kit";
import { rawGet } from "../kit/raw-http";
import { resolveAssetFolder, unpackAssets, UNPACKED_ASSETS_FOLDER } from "../../src/api/static";
import { ADMIN_UI_ASSETS } from "../../admin-ui/assets";
import { REALM_ICON_PATH } from "../../src/views/realm";
import { HEARTH_VERSION } from "../../src/version";

const ADMIN_UI = resolve(import.meta.dir, "../../admin-ui");
const ICON = readFileSync(join(ADMIN_UI, "hearth-icon.svg"), "utf8");

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

describe("static assets under /static/", () => {
  test("the realm icon advertised by /server_settings is served as SVG", async () => {
    const settings = expectSuccess(await s.anonymous().get("/server_settings"));
    expect(settings.realm_icon).toBe(s.url + REALM_ICON_PATH);
    const res = await fetch(settings.realm_icon);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("image/svg+xml");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await res.text()).toBe(ICON);
  });

  test("an ETag revalidation answers 304", async () => {
    const first = await fetch(s.url + REALM_ICON_PATH);
    const etag = first.headers.get("etag");
    expect(etag).toBeTruthy();
    const again = await fetch(s.url + REALM_ICON_PATH, { headers: { "if-none-match": etag! } });
    expect(again.status).toBe(304);
  });

  test("files beside the assets that the manifest does not list are not served", async () => {
    for (const path of ["/static/assets.ts", "/static/file-imports.d.ts", "/static/", "/static"]) {
      const res = await fetch(s.url + path);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
    }
  });

  // Sent raw: fetch() would resolve the dots before they reach the server.
  const traversals = [
    "/static/../package.json",
    "/static/..%2fpackage.json",
    "/static/..%2Fpackage.json",
    "/static/%2e%2e/package.json",
    "/static/%2e%2e%2fpackage.json",
    "/static/%252e%252e%252fpackage.json",
    "/static/..%5cpackage.json",
    "/static/....//package.json",
    "/static/hearth-icon.svg/../../package.json",
    "/static/..%2f..%2f..%2f..%2f..%2f..%2f..%2f..%2fetc%2fpasswd",
    "/static/../../../../../../../../etc/passwd",
  ];
  test.each(traversals)("path traversal %p does not escape the asset folder", async (path) => {
    const res = await rawGet(s.url, path);
    expect(res.status).not.toBe(200);
    expect(res.body).not.toContain('"name": "hearth"');
    expect(res.body).not.toContain("root:");
  });

  test("unknown /api/v1 paths still answer JSON 404", async () => {
    const res = await fetch(s.url + "/api/v1/static/hearth-icon.svg");
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ result: "error", code: "NOT_FOUND" });
  });
});

describe("where the assets are served from", () => {
  test("from source, the repository's admin-ui folder is served in place", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "hearth-static-"));
    try {
      expect(resolveAssetFolder(ADMIN_UI_ASSETS, dataDir)).toBe(ADMIN_UI);
      expect(existsSync(join(dataDir, UNPACKED_ASSETS_FOLDER))).toBe(false);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("a source folder with sub-folders is served in place too", () => {
    const root = mkdtempSync(join(tmpdir(), "hearth-static-"));
    try {
      mkdirSync(join(root, "ui", "js"), { recursive: true });
      writeFileSync(join(root, "ui", "hearth-icon.svg"), "<svg/>");
      writeFileSync(join(root, "ui", "js", "app.js"), "app()");
      const manifest = { "hearth-icon.svg": join(root, "ui", "hearth-icon.svg"), "js/app.js": join(root, "ui", "js", "app.js") };
      expect(resolveAssetFolder(manifest, join(root, "data"))).toBe(join(root, "ui"));
      expect(existsSync(join(root, "data"))).toBe(false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test("embedded assets (hashed names, as in the binary) are unpacked into the data folder by version", () => {
    const root = mkdtempSync(join(tmpdir(), "hearth-static-"));
    try {
      // What `bun build --compile` hands the manifest: paths whose names are not the public ones.
      const embedded = join(root, "embedded");
      mkdirSync(embedded);
      writeFileSync(join(embedded, "hearth-icon-5f3a9c.svg"), "<svg>v1</svg>");
      writeFileSync(join(embedded, "app-77e1d0.js"), "app()");
      const manifest = { "hearth-icon.svg": join(embedded, "hearth-icon-5f3a9c.svg"), "js/app.js": join(embedded, "app-77e1d0.js") };
      const dataDir = join(root, "data");
      // An older release's copy, and files the manifest no longer lists.
      const current = join(dataDir, UNPACKED_ASSETS_FOLDER, HEARTH_VERSION);
      mkdirSync(join(dataDir, UNPACKED_ASSETS_FOLDER, "0.0.1"), { recursive: true });
      mkdirSync(join(current, "js"), { recursive: true });
      mkdirSync(join(current, "css"), { recursive: true });
      writeFileSync(join(current, "removed.js"), "old");
      writeFileSync(join(current, "js", "removed.js"), "old");
      writeFileSync(join(current, "css", "removed.css"), "old");

      const folder = resolveAssetFolder(manifest, dataDir);
      expect(folder).toBe(current);
      expect((readdirSync(folder, { recursive: true }) as string[]).sort()).toEqual(["hearth-icon.svg", "js", "js/app.js"]);
      expect(readFileSync(join(folder, "hearth-icon.svg"), "utf8")).toBe("<svg>v1</svg>");
      expect(readFileSync(join(folder, "js", "app.js"), "utf8")).toBe("app()");
      expect(readdirSync(join(dataDir, UNPACKED_ASSETS_FOLDER))).toEqual([HEARTH_VERSION]);

      // A rebuilt binary with the same version number but a changed asset.
      writeFileSync(join(embedded, "hearth-icon-5f3a9c.svg"), "<svg>v2</svg>");
      unpackAssets(manifest, join(dataDir, UNPACKED_ASSETS_FOLDER), HEARTH_VERSION);
      expect(readFileSync(join(folder, "hearth-icon.svg"), "utf8")).toBe("<svg>v2</svg>");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test("an asset folder that cannot be written stops startup with a clear message", () => {
    const root = mkdtempSync(join(tmpdir(), "hearth-static-"));
    try {
      writeFileSync(join(root, "hearth-icon-1.svg"), "<svg/>");
      // A file where the assets folder should be.
      writeFileSync(join(root, UNPACKED_ASSETS_FOLDER), "");
      expect(() => resolveAssetFolder({ "hearth-icon.svg": join(root, "hearth-icon-1.svg") }, root)).toThrow(/Could not unpack the web assets into/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
