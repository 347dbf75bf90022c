import { Type as t } from "@sinclair/typebox";
import type { Hearth } from "../context";
import { ApiRoutes } from "../http/route";
import { param } from "../http/params";
import { pathId } from "../http/path";
import { doChangeDefaultChannelGroupChannels, doCreateDefaultChannelGroup, doRemoveDefaultChannelGroup, doUpdateDefaultChannelGroup } from "../actions/default_channel_groups";

/** Zulip's default channel group endpoints (in its server, not its published OpenAPI); they answer no fields. */
export function defaultChannelGroupRoutes(h: Hearth) {
  const groupId = (path: Record<string, string>) => pathId(path.group_id, "group ID");
  return new ApiRoutes(h)
    .post(
      "/default_stream_groups/create",
      { params: { group_name: param.string(), description: param.string(), stream_names: param.json(t.Array(t.String())) } },
      async ({ user, params }) => {
        await doCreateDefaultChannelGroup(h, user, params.group_name, params.description, params.stream_names);
        return {};
      },
    )
    .patch(
      "/default_stream_groups/:group_id",
      { params: { new_group_name: param.string().optional(), new_description: param.string().optional() } },
      async ({ user, params, path }) => {
        await doUpdateDefaultChannelGroup(h, user, groupId(path), { name: params.new_group_name, description: params.new_description });
        return {};
      },
    )
    .patch(
      "/default_stream_groups/:group_id/streams",
      { params: { op: param.string(), stream_names: param.json(t.Array(t.String())) } },
      async ({ user, params, path }) => {
        await doChangeDefaultChannelGroupChannels(h, user, groupId(path), params.op, params.stream_names);
        return {};
      },
    )
    .delete("/default_stream_groups/:group_id", {}, async ({ user, path }) => {
      await doRemoveDefaultChannelGroup(h, user, groupId(path));
      return {};
    });
}
