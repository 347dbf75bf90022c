import { valuesOf, type Store } from "./db";

/**
 * Default channel groups (Zulip's DefaultStreamGroup, "experimental" in its API): named
 * sets of channels an organization suggests to new users, beside the default channels
 * everyone joins.
 */
export interface DefaultChannelGroup {
  id: number;
  name: string;
  description: string;
  channel_ids: number[];
}

export function allDefaultChannelGroups(store: Store): DefaultChannelGroup[] {
  return valuesOf<DefaultChannelGroup>(store.dbs.defaultChannelGroups);
}

export function getDefaultChannelGroup(store: Store, id: number): DefaultChannelGroup | undefined {
  return store.dbs.defaultChannelGroups.get(id) as DefaultChannelGroup | undefined;
}

/** Call only inside `commit`. */
export function putDefaultChannelGroup(store: Store, group: DefaultChannelGroup): void {
  store.dbs.defaultChannelGroups.put(group.id, group);
}

/** Call only inside `commit`. */
export function removeDefaultChannelGroup(store: Store, id: number): void {
  store.dbs.defaultChannelGroups.remove(id);
}
