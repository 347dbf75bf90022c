import { Elysia } from "elysia";
import { clientAddress } from "../http/client_address";
import type { Hearth, UserRecord } from "../context";
import { ApiError } from "../errors";
import { authenticateEndpoint } from "../http/route";
import { errorResponse, jsonResponse } from "../http/route";
import { doAppendTusUpload, doCreateTusUpload, doTerminateTusUpload, tusOffset } from "../actions/tus";
import { maxUploadBytes } from "../actions/uploads";
import { accessTusUpload, tusError } from "../access/uploads";
import { uploadUrl } from "../views/uploads";

/**
 * tus 1.0.0 at /api/v1/tus (Zulip's resumable upload, FL 296): core, creation and
 * termination. Not an ApiRoutes resource: bodies are raw bytes streamed to disk, and
 * the protocol's headers carry the parameters.
 */
const TUS_VERSION = "1.0.0";
const BASE = "/api/v1/tus";
const TUS_HEADERS = { "tus-resumable": TUS_VERSION, "cache-control": "no-store" };

function tusResponse(status: number, headers: Record<string, string> = {}): Response {
  return new Response(null, { status, headers: { ...TUS_HEADERS, ...headers } });
}

/** `Upload-Metadata`: comma-separated `key base64value` pairs (a key alone means an empty value). */
function parseMetadata(header: string | null): Map<string, string> {
  const out = new Map<string, string>();
  for (const pair of (header ?? "").split(",")) {
    const [key, value] = pair.trim().split(" ");
    if (!key) continue;
    out.set(key, value ? Buffer.from(value, "base64").toString("utf-8") : "");
  }
  return out;
}

function nonNegativeHeader(request: Request, name: string): number | undefined {
  const raw = request.headers.get(name);
  return raw !== null && /^\d{1,15}$/.test(raw) ? Number(raw) : undefined;
}

export function tusRoutes(h: Hearth) {
  const app = new Elysia({ name: "tus" });
  const handle = (method: string, path: string, run: (request: Request, user: UserRecord, id: string) => Promise<Response>) => {
    app.route(
      method,
      path,
      async (ctx: any) => {
        const request: Request = ctx.request;
        try {
          const ip = (): string => clientAddress(h, request, ctx.server);
          // Basic auth, or a browser's session cookie with X-CSRFToken on writes (the spec's Authentication 2).
          const user = authenticateEndpoint(h, request, ip, "required", false, "api-or-session")!;
          if (request.headers.get("tus-resumable") !== TUS_VERSION) throw tusError(412, "Unsupported tus version");
          return await run(request, user, ctx.params?.id ?? "");
        } catch (error) {
          if (!(error instanceof ApiError)) return errorResponse(error);
          // The Zulip envelope plus tusd's `message`, with the tus headers clients check.
          const extra: Record<string, string> = { ...TUS_HEADERS, ...error.headers };
          if (error.httpStatus === 412) extra["tus-version"] = TUS_VERSION;
          return jsonResponse({ ...error.body(), message: error.message }, error.httpStatus, extra);
        }
      },
      { parse: "none" } as any,
    );
  };

  // Discovery needs no credentials (tus clients probe before they authenticate).
  app.options(BASE, () =>
    tusResponse(204, { "tus-version": TUS_VERSION, "tus-extension": "creation,termination", "tus-max-size": String(maxUploadBytes(h)) }),
  );
  app.options(`${BASE}/:id`, () => tusResponse(204, { "tus-version": TUS_VERSION, "tus-extension": "creation,termination" }));

  handle("POST", BASE, async (request, user) => {
    if (request.headers.get("upload-defer-length") !== null) throw tusError(411, "Upload-Length is required");
    const length = nonNegativeHeader(request, "upload-length");
    if (length === undefined) throw tusError(411, "Upload-Length is required");
    const metadata = parseMetadata(request.headers.get("upload-metadata"));
    const upload = await doCreateTusUpload(h, user, {
      length,
      filename: metadata.get("filename") ?? "",
      filetype: metadata.get("filetype") ?? "",
    });
    // An empty file is complete at creation.
    if (length === 0) {
      const done = await doAppendTusUpload(h, user, upload, 0, null);
      return jsonResponse({ url: uploadUrl(done.attachment!.path_id), filename: done.attachment!.name }, 201, {
        ...TUS_HEADERS,
        location: `${BASE}/${upload.id}`,
      });
    }
    return tusResponse(201, { location: `${BASE}/${upload.id}` });
  });

  handle("HEAD", `${BASE}/:id`, async (_request, user, id) => {
    const upload = accessTusUpload(h, user, id);
    return tusResponse(200, { "upload-offset": String(await tusOffset(h, upload)), "upload-length": String(upload.length) });
  });

  handle("PATCH", `${BASE}/:id`, async (request, user, id) => {
    const upload = accessTusUpload(h, user, id);
    if (request.headers.get("content-type") !== "application/offset+octet-stream") throw tusError(415, "Content-Type must be application/offset+octet-stream");
    const offset = nonNegativeHeader(request, "upload-offset");
    if (offset === undefined) throw tusError(400, "Upload-Offset is required");
    const result = await doAppendTusUpload(h, user, upload, offset, request.body);
    if (!result.attachment) return tusResponse(204, { "upload-offset": String(result.offset) });
    // Zulip (zerver/views/tusd.py) answers the final request with the file's URL, as POST /user_uploads does.
    return jsonResponse({ url: uploadUrl(result.attachment.path_id), filename: result.attachment.name }, 200, {
      ...TUS_HEADERS,
      "upload-offset": String(result.offset),
    });
  });

  handle("DELETE", `${BASE}/:id`, async (_request, user, id) => {
    await doTerminateTusUpload(h, accessTusUpload(h, user, id));
    return tusResponse(204);
  });

  return app;
}
