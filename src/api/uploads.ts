import type { Hearth, AttachmentRecord } from "../context";
import { isRegularFile } from "../lib/files";
import { badRequest, notFound, unauthorized } from "../errors";
import { ApiRoutes } from "../http/route";
import { checkDeleteAttachment, doUploadFile } from "../actions/uploads";
import { attachmentFilePath, getUserAttachments, readableAttachment, servedInline, temporaryAttachment, temporaryUploadUrl, uploadUrl } from "../views/uploads";

/** The part of the request path after `prefix`, percent-decoded; undefined when it cannot be decoded. */
function pathAfter(request: Request, prefix: string): string | undefined {
  const path = new URL(request.url).pathname;
  if (!path.startsWith(prefix)) return undefined;
  try {
    return decodeURIComponent(path.slice(prefix.length));
  } catch {
    return undefined;
  }
}

async function fileResponse(h: Hearth, a: AttachmentRecord): Promise<Response> {
  const path = attachmentFilePath(h, a);
  // Only the file Hearth wrote: a link put in its place is not followed.
  if (!(await isRegularFile(path))) throw notFound("File not found");
  const file = Bun.file(path);
  const disposition = servedInline(a.content_type) ? "inline" : "attachment";
  // RFC 6266: an ASCII fallback plus the exact UTF-8 name.
  const asciiName = a.name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return new Response(file, {
    headers: {
      "content-type": a.content_type,
      "content-disposition": `${disposition}; filename="${asciiName}"; filename*=UTF-8''${encodeURIComponent(a.name)}`,
      "x-content-type-options": "nosniff",
      // Even a file a browser renders must not run script on our origin.
      "content-security-policy": "default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'; sandbox",
      // Access depends on the reader; shared caches must not keep it.
      "cache-control": "private, max-age=3600",
    },
  });
}

export function uploadsRoutes(h: Hearth) {
  // Files, outside /api/v1: message HTML links here. The mobile app sends Basic auth;
  // a temporary URL carries its own signed grant instead.
  const files = new ApiRoutes(h, "").get("/user_uploads/*", { auth: "optional" }, async ({ user, request }) => {
    const rest = pathAfter(request, "/user_uploads/");
    const temporary = rest === undefined ? null : /^temporary\/([^/]+)\/[^/]+$/.exec(rest);
    if (temporary) {
      const a = temporaryAttachment(h, temporary[1]);
      if (!a) throw notFound("File not found");
      return fileResponse(h, a);
    }
    if (!user) throw unauthorized();
    return fileResponse(h, readableAttachment(h, user, rest));
  });
  const api = new ApiRoutes(h)
    .post("/user_uploads", {}, async ({ user, files }) => {
      if (files.size !== 1) throw badRequest(files.size === 0 ? "You must specify a file to upload" : "You may only upload one file at a time");
      const a = await doUploadFile(h, user, [...files.values()][0]);
      const url = uploadUrl(a.path_id);
      return { uri: url, url, filename: a.name };
    })
    .get("/user_uploads/:realm_id/*", {}, ({ user, request }) => {
      // Also served as /json/user_uploads/… (src/http/route.ts).
      const a = readableAttachment(h, user, pathAfter(request, "/api/v1/user_uploads/") ?? pathAfter(request, "/json/user_uploads/"));
      return { url: temporaryUploadUrl(h, a) };
    })
    .get("/attachments", {}, ({ user }) => getUserAttachments(h, user.id))
    .delete("/attachments/:attachment_id", {}, async ({ user, path }) => {
      // Zulip answers every unknown or foreign ID with this one message.
      if (!/^\d{1,15}$/.test(path.attachment_id)) throw badRequest("Invalid attachment");
      await checkDeleteAttachment(h, user, Number(path.attachment_id));
      return {};
    });
  return [files, api];
}
