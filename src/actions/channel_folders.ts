import { isPermutationOf } from "../lib/collections";
import type { Hearth } from "../context";
import { assertAdmin } from "../access/roles";
import { badRequest } from "../errors";
import { renderDescription } from "../markdown/description";
import type { UserRecord } from "../store/users";
import { SERVER_LIMITS } from "../store/realm_settings";
import { activeUserIds } from "../store/users";
import { allChannels } from "../store/channels";

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

export function getChannelFolders(h: Hearth, includeArchived = true): ChannelFolder[] {
  return [...h.store.dbs.channelFolders.getRange({})]
    .map((e) => e.value as ChannelFolder)
    .filter((f) => includeArchived || !f.is_archived)
    .sort((a, b) => a.order - b.order || a.id - b.id);
}

export function getChannelFolder(h: Hearth, id: number): ChannelFolder | undefined {
  return h.store.dbs.channelFolders.get(id) as ChannelFolder | undefined;
}

export const invalidFolderId = () => badRequest("Invalid channel folder ID");

/** A folder a channel may be put in: existing and not archived. */
export function checkFolderForChannel(h: Hearth, id: number): void {
  const folder = getChannelFolder(h, id);
  if (!folder || folder.is_archived) throw invalidFolderId();
}


function checkName(h: Hearth, raw: string, exceptId?: number): string {
  const name = raw.trim();
  if (name === "") throw badRequest("Channel folder name can't be empty.");
  if (name.length > SERVER_LIMITS.max_channel_folder_name_length) {
    throw badRequest(`name is too long (limit: ${SERVER_LIMITS.max_channel_folder_name_length} characters)`);
  }
  if (getChannelFolders(h).some((f) => f.id !== exceptId && f.name.toLowerCase() === name.toLowerCase())) {
    throw badRequest(`Channel folder name already in use`);
  }
  return name;
}

function checkDescription(description: string): string {
  if (description.length > SERVER_LIMITS.max_channel_folder_description_length) {
    throw badRequest(`description is too long (limit: ${SERVER_LIMITS.max_channel_folder_description_length} characters)`);
  }
  return description;
}

export async function doCreateChannelFolder(h: Hearth, user: UserRecord, name: string, description: string): Promise<number> {
  assertAdmin(user);
  const desc = checkDescription(description);
  const folder = await h.store.commit(() => {
    const folders = getChannelFolders(h);
    const f: ChannelFolder = {
      id: h.store.nextId("channel_folder"),
      name: checkName(h, name),
      description: desc,
      rendered_description: renderDescription(desc),
      creator_id: user.id,
      date_created: Math.floor(Date.now() / 1000),
      is_archived: false,
      order: folders.length === 0 ? 0 : Math.max(...folders.map((x) => x.order)) + 1,
    };
    h.store.dbs.channelFolders.put(f.id, f);
    return f;
  });
  h.events.publish({ type: "channel_folder", op: "add", channel_folder: folder }, activeUserIds(h));
  return folder.id;
}

export async function doUpdateChannelFolder(
  h: Hearth,
  user: UserRecord,
  id: number,
  changes: { name?: string; description?: string; is_archived?: boolean },
): Promise<void> {
  assertAdmin(user);
  const data: Record<string, unknown> = {};
  await h.store.commit(() => {
    const current = getChannelFolder(h, id);
    if (!current) throw invalidFolderId();
    const next = { ...current };
    if (changes.name !== undefined && changes.name.trim() !== current.name) data.name = next.name = checkName(h, changes.name, id);
    if (changes.description !== undefined && changes.description !== current.description) {
      data.description = next.description = checkDescription(changes.description);
      data.rendered_description = next.rendered_description = renderDescription(next.description);
    }
    if (changes.is_archived !== undefined && changes.is_archived !== current.is_archived) {
      // Zulip's check_channel_folder_in_use: no live channel may point at an archived folder.
      if (changes.is_archived && [...allChannels(h.store)].some((c) => c.folder_id === id && !c.is_archived)) {
        throw badRequest("You need to remove all the channels from this folder to archive it.");
      }
      data.is_archived = next.is_archived = changes.is_archived;
    }
    h.store.dbs.channelFolders.put(id, next);
  });
  if (Object.keys(data).length > 0) h.events.publish({ type: "channel_folder", op: "update", channel_folder_id: id, data }, activeUserIds(h));
}

export async function doReorderChannelFolders(h: Hearth, user: UserRecord, order: number[]): Promise<void> {
  assertAdmin(user);
  await h.store.commit(() => {
    const ids = new Set(getChannelFolders(h).map((f) => f.id));
    if (!isPermutationOf(order, ids)) {
      throw badRequest("Invalid order mapping");
    }
    order.forEach((id, index) => h.store.dbs.channelFolders.put(id, { ...getChannelFolder(h, id)!, order: index }));
  });
  h.events.publish({ type: "channel_folder", op: "reorder", order }, activeUserIds(h));
}
