import type { Store } from "./db";
import { StoreCache } from "./cache";

export interface RealmEmoji {
  id: number;
  name: string;
  author_id: number;
  deactivated: boolean;
  content_type: string;
  /** Only in records written before images moved to their own key space. */
  data?: Uint8Array;
}

export function getRealmEmoji(store: Store, id: number): RealmEmoji | undefined {
  return store.dbs.realmEmoji.get(id) as RealmEmoji | undefined;
}

export function* allRealmEmoji(store: Store): Generator<RealmEmoji> {
  for (const { value } of store.dbs.realmEmoji.getRange({})) yield value as RealmEmoji;
}

/** Active emoji by name: every reaction named without its type looks a name up. */
const activeByNameCache = new StoreCache<"all", ReadonlyMap<string, RealmEmoji>>();

/** The active emoji with this name, if any (names are unique among active emoji). */
export function activeRealmEmojiByName(store: Store, name: string): RealmEmoji | undefined {
  const byName = activeByNameCache.get(store, "all", () => {
    const out = new Map<string, RealmEmoji>();
    for (const e of allRealmEmoji(store)) if (!e.deactivated) out.set(e.name, e);
    return out;
  });
  return byName.get(name);
}

/** Writes an emoji record; call only inside `commit`. */
export function putRealmEmoji(store: Store, emoji: RealmEmoji): void {
  activeByNameCache.invalidate(store);
  store.dbs.realmEmoji.put(emoji.id, emoji);
}

export function getRealmEmojiImage(store: Store, emoji: RealmEmoji): Uint8Array | undefined {
  return (store.dbs.realmEmojiImages.get(emoji.id) as Uint8Array | undefined) ?? emoji.data;
}

/** Stores an emoji's image apart from its record; call only inside `commit`. */
export function putRealmEmojiImage(store: Store, emojiId: number, data: Uint8Array): void {
  store.dbs.realmEmojiImages.put(emojiId, data);
}
