import { isPermutationOf } from "../lib/collections";
import type { Hearth } from "../context";
import { assertAdmin } from "../access/roles";
import { badRequest } from "../errors";
import { renderDescription } from "../markdown/description";
import { activeUserIdsOf, type UserRecord } from "../store/users";
import { commit } from "../events/commit";
import { allChannels } from "../store/channels";
import { allChannelFolders, getChannelFolder, putChannelFolder, type ChannelFolder } from "../store/channel_folders";
import { SERVER_LIMITS } from "../store/realm_settings";

export const invalidFolderId = () => badRequest("Invalid channel folder ID");

/** A folder a channel may be put in: existing and not archived. */
export function checkFolderForChannel(h: Hearth, id: number): void {
  const folder = getChannelFolder(h.store, id);
  if (!folder || folder.is_archived) throw invalidFolderId();
}

function checkName(h: Hearth, raw: string, exceptId?: number): string {
  const name = raw.trim();
  if (name === "") throw badRequest("Channel folder name can't be empty.");
  if (name.length > SERVER_LIMITS.max_channel_folder_name_length) {
    throw badRequest(`name is too long (limit: ${SERVER_LIMITS.max_channel_folder_name_length} characters)`);
  }
  if (allChannelFolders(h.store).some((f) => f.id !== exceptId && f.name.toLowerCase() === name.toLowerCase())) {
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
  const folder = await commit(h, (tx) => {
    const folders = allChannelFolders(h.store);
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
    putChannelFolder(h.store, f);
    tx.notify({ type: "channel_folder", op: "add", channel_folder: f }, activeUserIdsOf(h.store));
    return f;
  });
  return folder.id;
}

export async function doUpdateChannelFolder(
  h: Hearth,
  user: UserRecord,
  id: number,
  changes: { name?: string; description?: string; is_archived?: boolean },
): Promise<void> {
  assertAdmin(user);
  await commit(h, (tx) => {
    const data: Record<string, unknown> = {};
    const current = getChannelFolder(h.store, id);
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
    putChannelFolder(h.store, next);
    if (Object.keys(data).length > 0) tx.notify({ type: "channel_folder", op: "update", channel_folder_id: id, data }, activeUserIdsOf(h.store));
  });
}

export async function doReorderChannelFolders(h: Hearth, user: UserRecord, order: number[]): Promise<void> {
  assertAdmin(user);
  await commit(h, (tx) => {
    const ids = new Set(allChannelFolders(h.store).map((f) => f.id));
    if (!isPermutationOf(order, ids)) {
      throw badRequest("Invalid order mapping");
    }
    order.forEach((id, index) => putChannelFolder(h.store, { ...getChannelFolder(h.store, id)!, order: index }));
    tx.notify({ type: "channel_folder", op: "reorder", order }, activeUserIdsOf(h.store));
  });
}
