import type { Hearth } from "../context";
import type { RealmEmojiJson } from "../schemas/events";
import { REALM_ID } from "../store/realm";
import { allRealmEmoji, getRealmEmoji, getRealmEmojiImage, type RealmEmoji } from "../store/realm_emoji";

const EXTENSIONS: Record<string, string> = { "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp" };

/** Where custom emoji images are served. */
export const REALM_EMOJI_IMAGES_PATH = `/user_avatars/${REALM_ID}/emoji/images`;

export function realmEmojiPath(e: RealmEmoji): string {
  return `${REALM_EMOJI_IMAGES_PATH}/${e.id}.${EXTENSIONS[e.content_type] ?? "png"}`;
}

/** The image a file name under REALM_EMOJI_IMAGES_PATH names: only the emoji's own name (ID and extension) finds it. */
export function realmEmojiImage(h: Hearth, file: string): { image: Uint8Array; content_type: string } | undefined {
  const match = /^(\d{1,15})\.(png|jpg|gif|webp)$/.exec(file);
  const emoji = match ? getRealmEmoji(h.store, Number(match[1])) : undefined;
  const image = emoji && realmEmojiPath(emoji) === `${REALM_EMOJI_IMAGES_PATH}/${file}` ? getRealmEmojiImage(h.store, emoji) : undefined;
  return emoji && image ? { image, content_type: emoji.content_type } : undefined;
}

/** One emoji as `realm_emoji` shows it (ID as a string, as Zulip sends it). */
export function realmEmojiView(h: Hearth, e: RealmEmoji): RealmEmojiJson {
  return {
    id: String(e.id),
    name: e.name,
    source_url: h.realmUrl() + realmEmojiPath(e),
    // Animated-image stills need an image library; none is made, so clients animate.
    still_url: null,
    deactivated: e.deactivated,
    author_id: e.author_id,
  };
}

export function realmEmojiDict(h: Hearth): Record<string, RealmEmojiJson> {
  const out: Record<string, RealmEmojiJson> = {};
  for (const e of allRealmEmoji(h.store)) out[String(e.id)] = realmEmojiView(h, e);
  return out;
}
