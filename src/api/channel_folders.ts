import { Type as t } from "@sinclair/typebox";
import type { Hearth } from "../context";
import { ApiRoutes } from "../http/route";
import { param } from "../http/params";
import { pathId } from "../http/path";
import { doCreateChannelFolder, doReorderChannelFolders, doUpdateChannelFolder } from "../actions/channel_folders";
import { getChannelFolders } from "../views/channel_folders";

export function channelFolderRoutes(h: Hearth) {
  return new ApiRoutes(h)
    .get("/channel_folders", { params: { include_archived: param.bool().default(false) } }, ({ params }) => ({
      channel_folders: getChannelFolders(h, params.include_archived),
    }))
    .post("/channel_folders/create", { params: { name: param.string(), description: param.string().default("") } }, async ({ user, params }) => ({
      channel_folder_id: await doCreateChannelFolder(h, user, params.name, params.description),
    }))
    .patch("/channel_folders", { params: { order: param.json(t.Array(t.Integer())) } }, async ({ user, params }) => {
      await doReorderChannelFolders(h, user, params.order);
      return {};
    })
    .patch(
      "/channel_folders/:channel_folder_id",
      { params: { name: param.string().optional(), description: param.string().optional(), is_archived: param.bool().optional() } },
      async ({ user, params, path }) => {
        await doUpdateChannelFolder(h, user, pathId(path.channel_folder_id, "channel folder ID"), params);
        return {};
      },
    );
}
