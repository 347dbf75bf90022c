/** What every subcommand shares: flag parsing, the usage error, and the data folder opened under its lock. */
import { mkdirSync } from "node:fs";
import { Store } from "../store/db";
import { openStoreFormatWithBackup } from "../backup/before_upgrade";
import { DataFolderLock } from "../lockfile";

export class UsageError extends Error {}

export interface FlagSpec {
  [name: string]: "string" | "boolean";
}

export function parseFlags(args: string[], spec: FlagSpec): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith("--")) throw new UsageError(`unexpected argument '${arg}'`);
    let name = arg.slice(2);
    let value: string | undefined;
    const eq = name.indexOf("=");
    if (eq !== -1) {
      value = name.slice(eq + 1);
      name = name.slice(0, eq);
    }
    const kind = spec[name];
    if (!kind) throw new UsageError(`unknown option '--${name}'`);
    if (kind === "boolean") {
      if (value !== undefined) throw new UsageError(`option '--${name}' takes no value`);
      out[name] = true;
      continue;
    }
    if (value === undefined) {
      value = args[++i];
      if (value === undefined || value.startsWith("--")) throw new UsageError(`option '--${name}' needs a value`);
    }
    out[name] = value;
  }
  return out;
}

export function required(flags: Record<string, string | boolean>, name: string): string {
  const v = flags[name];
  if (typeof v !== "string" || v === "") throw new UsageError(`missing required option '--${name}'`);
  return v;
}

export function parsePort(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) throw new UsageError(`invalid port '${text}'`);
  return port;
}

export function parseExternalUrl(text: string | undefined): string | null {
  if (text === undefined || text === "") return null;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`invalid external URL '${text}'`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`invalid external URL '${text}'`);
  return url.origin + url.pathname.replace(/\/+$/, "");
}


/** Opens the data folder for a one-off command, holding the lock so no server runs beside it. */
export async function withStore<T>(dataDir: string, fn: (store: Store) => Promise<T>): Promise<T> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const lock = DataFolderLock.acquire(dataDir);
  const store = new Store(dataDir);
  try {
    await openStoreFormatWithBackup(store, `${dataDir}-backups`);
    return await fn(store);
  } finally {
    await store.close();
    lock.release();
  }
}

export function printJson(value: unknown) {
  console.log(JSON.stringify(value));
}

