import type { Hearth, UserRecord } from "../context";
import { badRequest } from "../errors";
import { ApiRoutes } from "../http/route";
import { doResetAvatar, doSetAvatar } from "../actions/avatars";
import { identiconPng } from "../avatars/identicon";
import { visibleUserByEmail } from "../access/users";
import { avatarOwner, avatarToken, avatarUrl, uploadedAvatarOf } from "../views/avatars";

const SMALL = 100;
const MEDIUM = 500;

function notFound(): Response {
  return new Response("Not Found", { status: 404, headers: { "content-type": "text/plain" } });
}

function imageResponse(body: Uint8Array, contentType: string): Response {
  return new Response(body as unknown as BodyInit, {
    headers: {
      "content-type": contentType,
      // The URL changes with every new avatar, so it can be cached for long.
      "cache-control": "public, max-age=31536000, immutable",
      "x-content-type-options": "nosniff",
    },
  });
}

/** Generated identicons are deterministic; keep the recent ones instead of re-encoding. */
const generatedCache = new Map<string, Uint8Array>();
function generated(seed: string, size: number): Uint8Array {
  const key = `${seed}:${size}`;
  let png = generatedCache.get(key);
  if (!png) {
    png = identiconPng(seed, size);
    if (generatedCache.size >= 512) generatedCache.delete(generatedCache.keys().next().value!);
    generatedCache.set(key, png);
  }
  return png;
}

export function avatarRoutes(h: Hearth) {
  const files = new ApiRoutes(h, "")
    // Avatar files: public like Zulip's, but only under the secret versioned name.
    .get("/user_avatars/:user_id/:file", { auth: "none" }, ({ path }) => {
      const match = /^([0-9a-f]{32})(-medium)?\.png$/.exec(path.file);
      const user = avatarOwner(h, path.user_id);
      if (!match || !user || match[1] !== avatarToken(h, user.id, user.avatar_version)) return notFound();
      const uploaded = uploadedAvatarOf(h, user);
      if (uploaded) return imageResponse(uploaded.data, uploaded.content_type);
      return imageResponse(generated(`${user.id}:${user.email}`, match[2] ? MEDIUM : SMALL), "image/png");
    })
    // The mobile app loads /avatar/{id} (with Basic auth) when avatar_url is absent.
    .get("/avatar/:who", {}, ({ user, path }) => redirectToAvatar(h, user, path.who, false))
    .get("/avatar/:who/medium", {}, ({ user, path }) => redirectToAvatar(h, user, path.who, true));
  const api = new ApiRoutes(h)
    .post("/users/me/avatar", {}, async ({ user, files }) => {
      if (files.size !== 1) throw badRequest("You must upload exactly one avatar.");
      const updated = await doSetAvatar(h, user, [...files.values()][0]);
      return { avatar_url: avatarUrl(h, updated) };
    })
    .delete("/users/me/avatar", {}, async ({ user }) => {
      await doResetAvatar(h, user);
      return {};
    });
  return [files, api];
}

/** By ID, or by the address the caller sees (Zulip looks avatars up by API email): a hidden real address finds nothing. */
function redirectToAvatar(h: Hearth, viewer: UserRecord, who: string, medium: boolean): Response {
  const user = /^\d{1,15}$/.test(who) ? avatarOwner(h, who) : visibleUserByEmail(h, viewer, who);
  if (!user) return notFound();
  return new Response(null, { status: 302, headers: { location: avatarUrl(h, user, medium) } });
}
