import type { Hearth } from "../context";
import { allChannelFolders, type ChannelFolder } from "../store/channel_folders";

/** `GET /channel_folders` and register's `channel_folders`: the records as they are stored, in sidebar order. */
export function getChannelFolders(h: Hearth, includeArchived = true): ChannelFolder[] {
  return allChannelFolders(h.store, includeArchived);
}
