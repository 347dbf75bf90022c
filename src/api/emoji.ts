import type { Hearth } from "../context";
import { badRequest } from "../errors";
import { ApiRoutes } from "../http/route";
import { doAddRealmEmoji, doDeactivateRealmEmoji } from "../actions/realm_emoji";
import { emojiCodeToNames, ZULIP_EXTRA_EMOJI_PATH } from "../markdown/emoji";
import { REALM_EMOJI_IMAGES_PATH, realmEmojiDict, realmEmojiImage } from "../views/realm_emoji";
import { EMOJI_DATA_PATH } from "../views/register";
import { zulipEmojiPng } from "../avatars/zulip_emoji";

export function emojiRoutes(h: Hearth) {
  const api = new ApiRoutes(h)
    .get("/realm/emoji", {}, () => ({ emoji: realmEmojiDict(h) }))
    .post("/realm/emoji/:emoji_name", {}, async ({ user, files, path }) => {
      if (files.size !== 1) throw badRequest("You must upload exactly one file.");
      await doAddRealmEmoji(h, user, path.emoji_name, [...files.values()][0]);
      return {};
    })
    .delete("/realm/emoji/:emoji_name", {}, async ({ user, path }) => {
      await doDeactivateRealmEmoji(h, user, path.emoji_name);
      return {};
    });
  // Drawn and written at their first request, not at start-up.
  let zulipEmoji: Uint8Array | undefined;
  let emojiData: string | undefined;
  const files = new ApiRoutes(h, "")
    // The `zulip` reaction's image, public like Zulip's static files.
    .get(ZULIP_EXTRA_EMOJI_PATH, { auth: "none" }, () => publicImage((zulipEmoji ??= zulipEmojiPng()), "image/png"))
    // Fetched with a bare GET (no credentials) by the mobile app.
    .get(EMOJI_DATA_PATH, { auth: "none" }, () =>
      // `{ code_to_names: { "1f600": ["grinning", …] } }`, the mobile app's emoji picker data.
      new Response((emojiData ??= JSON.stringify({ code_to_names: emojiCodeToNames() })), { headers: { "content-type": "application/json" } }),
    )
    // Custom emoji images are public like Zulip's; deactivated ones still render in old messages.
    .get(`${REALM_EMOJI_IMAGES_PATH}/:file`, { auth: "none" }, ({ path }) => {
      const found = realmEmojiImage(h, path.file);
      if (!found) return new Response("Not Found", { status: 404, headers: { "content-type": "text/plain" } });
      return publicImage(found.image, found.content_type);
    });
  return [api, files];
}

/** An emoji image anyone may fetch, cached a day. */
function publicImage(bytes: Uint8Array, contentType: string): Response {
  return new Response(bytes as unknown as BodyInit, { headers: { "content-type": contentType, "cache-control": "public, max-age=86400", "x-content-type-options": "nosniff" } });
}
