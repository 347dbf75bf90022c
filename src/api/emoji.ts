import type { Hearth } from "../context";
import { badRequest } from "../errors";
import { ApiRoutes } from "../http/route";
import { doAddRealmEmoji, doDeactivateRealmEmoji } from "../actions/realm_emoji";
import { UNICODE_EMOJI } from "../markdown/emoji";
import { getRealmEmoji, getRealmEmojiImage } from "../store/realm_emoji";
import { REALM_ID } from "../store/realm";
import { realmEmojiDict, realmEmojiPath } from "../views/realm_emoji";
import { EMOJI_DATA_PATH } from "../views/register";
import { encodePng } from "../avatars/png";

/** `{ code_to_names: { "1f600": ["grinning", …] } }`, the mobile app's emoji picker data. */
function emojiData(): { code_to_names: Record<string, string[]> } {
  const codeToNames: Record<string, string[]> = {};
  for (const [name, code] of Object.entries(UNICODE_EMOJI)) (codeToNames[code] ??= []).push(name);
  return { code_to_names: codeToNames };
}

/** Where clients load the `zulip` emoji (reaction_type `zulip_extra_emoji`) from. */
const ZULIP_EXTRA_EMOJI_PATH = "/static/generated/emoji/images/emoji/unicode/zulip.png";

/**
 * Hearth's own drawing for the `zulip` emoji: a white Z on a round ember-coloured
 * badge, 64 pixels square. Drawn here rather than shipped as a file (the picture is
 * not Zulip's logo; clients only need an image at that address).
 */
function zulipEmojiPng(): Uint8Array {
  const size = 64;
  const rgb = new Uint8Array(size * size * 3).fill(255);
  const set = (x: number, y: number, [r, g, b]: readonly number[]) => rgb.set([r, g, b], (y * size + x) * 3);
  const ember = [0xd9, 0x5f, 0x22] as const;
  const white = [0xff, 0xff, 0xff] as const;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const dx = x - 31.5;
      const dy = y - 31.5;
      if (dx * dx + dy * dy > 31 * 31) continue;
      // The Z: a top and a bottom bar, and the diagonal between their ends.
      const bar = x >= 18 && x <= 45 && ((y >= 17 && y <= 22) || (y >= 41 && y <= 46));
      const diagonal = y > 22 && y < 41 && Math.abs(x - (45 - ((y - 22) * 27) / 19)) <= 3.5;
      set(x, y, bar || diagonal ? white : ember);
    }
  }
  return encodePng(size, size, rgb);
}

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
  const data = JSON.stringify(emojiData());
  const zulipEmoji = zulipEmojiPng();
  const files = new ApiRoutes(h, "")
    // The `zulip` reaction's image, public like Zulip's static files.
    .get(ZULIP_EXTRA_EMOJI_PATH, { auth: "none" }, () =>
      new Response(zulipEmoji as unknown as BodyInit, { headers: { "content-type": "image/png", "cache-control": "public, max-age=86400", "x-content-type-options": "nosniff" } }),
    )
    // Fetched with a bare GET (no credentials) by the mobile app.
    .get(EMOJI_DATA_PATH, { auth: "none" }, () => new Response(data, { headers: { "content-type": "application/json" } }))
    // Custom emoji images are public like Zulip's; deactivated ones still render in old messages.
    .get(`/user_avatars/${REALM_ID}/emoji/images/:file`, { auth: "none" }, ({ path }) => {
      const match = /^(\d{1,15})\.(png|jpg|gif|webp)$/.exec(path.file);
      const emoji = match ? getRealmEmoji(h.store, Number(match[1])) : undefined;
      const image = emoji && realmEmojiPath(emoji) === `/user_avatars/${REALM_ID}/emoji/images/${path.file}` ? getRealmEmojiImage(h.store, emoji) : undefined;
      if (!emoji || !image) return new Response("Not Found", { status: 404, headers: { "content-type": "text/plain" } });
      return new Response(image as unknown as BodyInit, {
        headers: { "content-type": emoji.content_type, "cache-control": "public, max-age=86400", "x-content-type-options": "nosniff" },
      });
    });
  return [api, files];
}
