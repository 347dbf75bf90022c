import type { Store } from "./db";

/** The realm's default channels, which new users join. */
export function isDefaultChannel(store: Store, channelId: number): boolean {
  return store.dbs.defaultChannels.get(channelId) !== undefined;
}

export function defaultChannelIds(store: Store): number[] {
  return [...store.dbs.defaultChannels.getKeys({})] as number[];
}

/** Call only inside `commit`. */
export function setDefaultChannel(store: Store, channelId: number, isDefault: boolean): void {
  if (isDefault) store.dbs.defaultChannels.put(channelId, true);
  else store.dbs.defaultChannels.remove(channelId);
}
