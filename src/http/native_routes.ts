import type { Server } from "bun";
import { ApiRoutes, type NativeHandler } from "./route";

/** Bun's router table: path (`:name` parameters) → method → handler. */
export type NativeRoutes = Record<string, Record<string, NativeHandler>>;

/** The handlers of every ApiRoutes resource, the first registration of a method and path winning. */
export function nativeRoutesOf(resources: readonly unknown[]): NativeRoutes {
  const native: NativeRoutes = {};
  for (const routes of resources) {
    if (!(routes instanceof ApiRoutes)) continue;
    for (const [key, handler] of routes.handlers) {
      const [method, path] = key.split(" ");
      (native[path] ??= {})[method] ??= handler;
    }
  }
  return native;
}

/**
 * Elysia served every route with a trailing slash too (`/users/me/`); Bun's router
 * matches paths exactly, and Elysia drops "/"-ended keys from the table it hands Bun.
 * So a request that matched nothing and ends in "/" is tried here without the slash.
 * The patterns are compiled on the first such request, not at start.
 */
export function trailingSlashRetry(native: NativeRoutes): (request: Request, server: Server<unknown> | null) => Promise<Response> | Response | null {
  let patterns: { regex: RegExp; methods: Record<string, NativeHandler> }[] | null = null;
  const compile = () =>
    Object.entries(native)
      // Bun's router prefers a path without parameters to one with them.
      .sort(([a], [b]) => Number(a.includes(":")) - Number(b.includes(":")))
      .map(([path, methods]) => ({ regex: new RegExp(`^${path.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/:(\w+)/g, "(?<$1>[^/]+)")}$`), methods }));
  return (request, server) => {
    const url = new URL(request.url);
    if (url.pathname.length < 2 || !url.pathname.endsWith("/")) return null;
    const path = url.pathname.slice(0, -1);
    for (const { regex, methods } of (patterns ??= compile())) {
      const match = regex.exec(path);
      if (!match) continue;
      const handler = methods[request.method] ?? (request.method === "HEAD" ? methods.GET : undefined);
      if (!handler) return null;
      const params: Record<string, string> = {};
      for (const [name, raw] of Object.entries(match.groups ?? {})) params[name] = decodeParam(raw);
      Object.defineProperty(request, "params", { value: params, configurable: true });
      return handler(request, server!);
    }
    return null;
  };
}

/** As Bun's router decodes a parameter: malformed percent-encoding does not throw. */
function decodeParam(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
