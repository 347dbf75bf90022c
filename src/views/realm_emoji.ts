import type { Hearth } from "../context";
import { REALM_ID } from "../store/realm";
import { allRealmEmoji, type RealmEmoji } from "../store/realm_emoji";

const EXTENSIONS: Record<string, string> = { "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp" };

export function realmEmojiPath(e: RealmEmoji): string {
  return `/user_avatars/${REALM_ID}/emoji/images/${e.id}.${EXTENSIONS[e.content_type] ?? "png"}`;
}

/** One emoji as `realm_emoji` shows it (ID as a string, as Zulip sends it). */
export function realmEmojiView(h: Hearth, e: RealmEmoji): Record<string, unknown> {
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

export function realmEmojiDict(h: Hearth): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const e of allRealmEmoji(h.store)) out[String(e.id)] = realmEmojiView(h, e);
  return out;
}
