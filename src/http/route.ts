import { Elysia } from "elysia";
import { ApiError } from "../errors";
import type { Hearth } from "../context";
import { BotType, type UserRecord } from "../store/users";
import { authenticateRequest } from "../auth/basic";
import { authenticateSession } from "../auth/session";
import { parseParams, type ParamSpecs, type ParamValues } from "./params";
import { readRawParams, type RawParams } from "./wire";
import { clientAddress } from "./client_address";
import { SerializedFields } from "../lib/serialized_fields";

export type AuthMode = "required" | "optional" | "none";

/**
 * Which credentials a request may carry: `api`, HTTP Basic (`/api/v1/…`); `session`,
 * the browser's session cookie with X-CSRFToken on writes (`/json/…`, Zulip's web app
 * paths); `api-or-session`, Basic when an Authorization header is sent, else the
 * cookie (files a page embeds, the tus endpoint).
 */
export type Credentials = "api" | "session" | "api-or-session";

export interface ApiRequest<V, U extends UserRecord | null = UserRecord> {
  h: Hearth;
  user: U;
  params: V;
  /** Path parameters exactly as in the URL (decoded). */
  path: Record<string, string>;
  files: Map<string, File>;
  request: Request;
  ip: string;
  /** Bun's server, for per-request timeouts of long-polls. */
  server: import("bun").Server<unknown> | null;
}

export interface EndpointSpec<P extends ParamSpecs, A extends AuthMode> {
  auth?: A;
  params?: P;
  /** The body is the handler's to read (a webhook's payload): parameters come from the query string only. */
  rawBody?: boolean;
  /** Incoming-webhook bots may call it (sending messages, webhooks); every other endpoint refuses them, as Zulip does. */
  allowIncomingWebhookBots?: boolean;
}

/**
 * The caller of an endpoint, by its auth mode; an incoming-webhook bot's key is refused
 * anywhere but where it may post, as in Zulip (a leaked webhook URL must not read).
 */
export function authenticateEndpoint(
  h: Hearth,
  request: Request,
  ip: () => string,
  auth: AuthMode,
  allowIncomingWebhookBots: boolean,
  credentials: Credentials = "api",
): UserRecord | null {
  const bySession = credentials === "session" || (credentials === "api-or-session" && !request.headers.has("authorization"));
  const user = auth === "none" ? null : bySession ? authenticateSession(h, request, auth === "required") : authenticateRequest(h, request, ip, auth === "required");
  if (!allowIncomingWebhookBots && user?.bot_type === BotType.INCOMING_WEBHOOK) {
    throw new ApiError("This API is not available to incoming webhook bots.", "UNAUTHORIZED", 401);
  }
  return user;
}

/**
 * A request as its handler sees it (ApiRequest), one object per request, its fields
 * set in the constructor (the cheapest object to make). The client's address is looked
 * up only when asked (rate limits after a failed login, a few endpoints): it costs a
 * system call, and every long-poll would otherwise pay it.
 */
class HandlerRequest {
  constructor(
    readonly h: Hearth,
    readonly user: UserRecord | null,
    readonly params: unknown,
    readonly path: Record<string, string>,
    readonly files: Map<string, File>,
    readonly request: Request,
    readonly server: ApiRequest<unknown>["server"],
    private readonly lookupIp: () => string,
  ) {}

  get ip(): string {
    return this.lookupIp();
  }
}

type Handler<P extends ParamSpecs, A extends AuthMode> = (
  req: ApiRequest<ParamValues<P>, A extends "required" ? UserRecord : UserRecord | null>,
) => Promise<Record<string, unknown> | Response | SerializedFields> | Record<string, unknown> | Response | SerializedFields;

const JSON_HEADERS = { "content-type": "application/json" };
/**
 * The same, built once: a Response copies a Headers object faster than it converts a
 * plain one (docs/benchmarks.md), and every poll's answer builds one.
 * Shared read-only: each Response gets its own copy.
 */
export const SHARED_JSON_HEADERS = new Headers(JSON_HEADERS);

/** The most of a request body read for a caller without credentials (fetch_api_key, server settings, webhooks' own keys aside). */
const UNAUTHENTICATED_BODY_BYTES = 1024 * 1024;

/** A success answer from fields already serialized (see SerializedFields). */
export function serializedResponse(fields: SerializedFields, ignored: readonly string[] = []): Response {
  if (ignored.length === 0) return new Response(fields.successBody(), { headers: SHARED_JSON_HEADERS });
  return new Response(`{"result":"success","msg":"",${fields.json},"ignored_parameters_unsupported":${JSON.stringify(ignored)}}`, { headers: SHARED_JSON_HEADERS });
}

export function jsonResponse(body: unknown, status = 200, headers?: Record<string, string>): Response {
  if (headers === undefined) return new Response(JSON.stringify(body), { status, headers: SHARED_JSON_HEADERS });
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } });
}

export function errorResponse(error: unknown, request?: Request): Response {
  if (error instanceof ApiError) {
    let headers = error.headers;
    // A Basic challenge makes a browser pop up its own login dialog over a page's
    // fetch (the admin page's, which says so with X-Requested-With). Zulip answers its
    // web app with a Session challenge for the same reason.
    if (headers["WWW-Authenticate"] && request?.headers.get("x-requested-with") === "XMLHttpRequest") {
      headers = { ...headers, "WWW-Authenticate": 'Session realm="zulip"' };
    }
    return jsonResponse(error.body(), error.httpStatus, headers);
  }
  console.error("Internal server error:", error);
  return jsonResponse({ result: "error", msg: "Internal server error", code: "INTERNAL_SERVER_ERROR" }, 500);
}

const API_PREFIX = "/api/v1";
/** Where the API is served again for cookie-authenticated browser calls, as Zulip's web app calls it. */
export const JSON_PREFIX = "/json";

/** A handler mounted on Bun's router: path parameters come from the request (`BunRequest.params`, decoded). */
export type NativeHandler = (request: Request, server: import("bun").Server<unknown>) => Response | Promise<Response>;

/**
 * Registers Zulip API endpoints. Every route without a wildcard is a handler for Bun's
 * own router (`handlers`, mounted by src/server.ts), under `/api/v1` and again under
 * `/json`: registering and compiling ~800 routes in Elysia was about a quarter of the
 * server's start (docs/benchmarks.md). Wildcard routes (`/*`), whose tail Bun's router
 * does not give, go on an Elysia instance (`app`, made only for them). Nothing is
 * parsed before the handler (Elysia's `parse: "none"`): the body is read raw so that
 * every parameter keeps the exact text the client sent, and the declared parameters
 * decide the decoding.
 */
export class ApiRoutes {
  /** The wildcard routes, or null when there are none. */
  app: Elysia<any, any, any, any, any, any, any> | null = null;

  constructor(
    readonly h: Hearth,
    readonly prefix = API_PREFIX,
  ) {}

  private add<P extends ParamSpecs, A extends AuthMode>(
    method: "GET" | "POST" | "PATCH" | "DELETE" | "PUT",
    path: string,
    spec: EndpointSpec<P, A>,
    handler: Handler<P, A>,
  ): this {
    const h = this.h;
    const auth = spec.auth ?? "required";
    const specs = (spec.params ?? {}) as P;
    const pathNames = [...path.matchAll(/:(\w+)/g)].map((m) => m[1]);
    const finish = (result: Awaited<ReturnType<Handler<P, A>>>, ignored: string[]): Response => {
      if (result instanceof Response) return result;
      if (result instanceof SerializedFields) return serializedResponse(result, ignored);
      const body: Record<string, unknown> = { result: "success", msg: "", ...result };
      if (ignored.length > 0) body.ignored_parameters_unsupported = ignored;
      return jsonResponse(body);
    };
    const run = (request: Request, server: ApiRequest<unknown>["server"], pathValues: Record<string, string>, user: UserRecord | null, ip: () => string, raw: RawParams): Response | Promise<Response> => {
      const { values, ignored } = parseParams(specs, raw, pathNames);
      const result = handler(new HandlerRequest(h, user, values, pathValues, raw.files, request, server, ip) as ApiRequest<any, any>);
      return result instanceof Promise ? result.then((r) => finish(r, ignored)) : finish(result, ignored);
    };
    // Synchronous until something must wait (a body to read, an async handler): an
    // answer ready at once is handed to Bun without a promise.
    const handle = (
      request: Request,
      server: ApiRequest<unknown>["server"],
      pathValues: Record<string, string>,
      credentials: Credentials,
    ): Response | Promise<Response> => {
      try {
        let address: string | undefined;
        const ip = () => (address ??= clientAddress(h, request, server));
        const user = authenticateEndpoint(h, request, ip, auth, spec.allowIncomingWebhookBots === true, credentials);
        // Before authentication, a body is read only up to a form's size (Zulip's requests without credentials are small forms).
        const raw = readRawParams(request, spec.rawBody !== true, user ? Infinity : UNAUTHENTICATED_BODY_BYTES);
        const answer = raw instanceof Promise ? raw.then((r) => run(request, server, pathValues, user, ip, r)) : run(request, server, pathValues, user, ip, raw);
        return answer instanceof Promise ? answer.catch((error) => errorResponse(error, request)) : answer;
      } catch (error) {
        return errorResponse(error, request);
      }
    };
    // Files outside /api/v1 (uploads, avatars) are also what a signed-in page embeds.
    const credentials: Credentials = this.prefix === "" ? "api-or-session" : "api";
    // Every API route again under /json/, for the browser's session (src/auth/session.ts).
    const mounts: [string, Credentials][] = [[this.prefix + path, credentials]];
    if (this.prefix === API_PREFIX) mounts.push([JSON_PREFIX + path, "session"]);
    for (const [fullPath, accepted] of mounts) {
      if (path.includes("*")) {
        // A wildcard is a path parameter too ("*"): its value comes from Elysia's context.
        this.app ??= new Elysia({ name: `api${this.prefix}${Math.random()}` });
        this.app.route(method, fullPath, (ctx: any) => handle(ctx.request, ctx.server ?? null, ctx.params ?? {}, accepted), { parse: "none" } as any);
      } else {
        // Bun's `request.params` makes an object per request: asked only where the path has parameters.
        this.handlers.set(
          `${method} ${fullPath}`,
          pathNames.length === 0 ? (request, server) => handle(request, server, {}, accepted) : (request, server) => handle(request, server, (request as any).params ?? {}, accepted),
        );
      }
    }
    return this;
  }

  /** Handlers of routes without a wildcard, by "METHOD /path" (Bun's router syntax, `:name` parameters), for Bun's router. */
  readonly handlers = new Map<string, (request: Request, server: import("bun").Server<unknown>) => Response | Promise<Response>>();

  get<P extends ParamSpecs, A extends AuthMode = "required">(path: string, spec: EndpointSpec<P, A>, handler: Handler<P, A>) {
    return this.add("GET", path, spec, handler);
  }
  post<P extends ParamSpecs, A extends AuthMode = "required">(path: string, spec: EndpointSpec<P, A>, handler: Handler<P, A>) {
    return this.add("POST", path, spec, handler);
  }
  patch<P extends ParamSpecs, A extends AuthMode = "required">(path: string, spec: EndpointSpec<P, A>, handler: Handler<P, A>) {
    return this.add("PATCH", path, spec, handler);
  }
  put<P extends ParamSpecs, A extends AuthMode = "required">(path: string, spec: EndpointSpec<P, A>, handler: Handler<P, A>) {
    return this.add("PUT", path, spec, handler);
  }
  delete<P extends ParamSpecs, A extends AuthMode = "required">(path: string, spec: EndpointSpec<P, A>, handler: Handler<P, A>) {
    return this.add("DELETE", path, spec, handler);
  }
}
