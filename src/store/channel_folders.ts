import type { Store } from "./db";

/** A folder grouping channels in the sidebar (FL 389; `order` FL 414). */
export interface ChannelFolder {
  id: number;
  name: string;
  description: string;
  rendered_description: string;
  creator_id: number | null;
  date_created: number;
  is_archived: boolean;
  order: number;
}

/** The folders in their sidebar order (`order`, then ID). */
export function allChannelFolders(store: Store, includeArchived = true): ChannelFolder[] {
  return [...store.dbs.channelFolders.getRange({})]
    .map((e) => e.value as ChannelFolder)
    .filter((f) => includeArchived || !f.is_archived)
    .sort((a, b) => a.order - b.order || a.id - b.id);
}

export function getChannelFolder(store: Store, id: number): ChannelFolder | undefined {
  return store.dbs.channelFolders.get(id) as ChannelFolder | undefined;
}

/** Call only inside `commit`. */
export function putChannelFolder(store: Store, folder: ChannelFolder): void {
  store.dbs.channelFolders.put(folder.id, folder);
}
