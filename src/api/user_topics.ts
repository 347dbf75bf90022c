import type { Hearth } from "../context";
import { badRequest } from "../errors";
import { ApiRoutes } from "../http/route";
import { param } from "../http/params";
import { accessChannelByName } from "../access/channels";
import { doMuteTopic, doSetTopicVisibility, doUnmuteTopic } from "../actions/user_topics";

export function userTopicRoutes(h: Hearth) {
  return new ApiRoutes(h)
    .post(
      "/user_topics",
      { params: { stream_id: param.int(), topic: param.string(), visibility_policy: param.int() } },
      async ({ user, params }) => {
        await doSetTopicVisibility(h, user, params.stream_id, params.topic, params.visibility_policy);
        return {};
      },
    )
    // Deprecated at FL 170, still sent by older clients (zulip-terminal).
    .patch(
      "/users/me/subscriptions/muted_topics",
      {
        params: {
          stream_id: param.int().optional(),
          stream: param.string().optional(),
          topic: param.string(),
          op: param.oneOf(["add", "remove"] as const),
        },
      },
      async ({ user, params }) => {
        if ((params.stream_id === undefined) === (params.stream === undefined)) {
          throw badRequest("Please choose one: 'stream' or 'stream_id'.");
        }
        const channelId = params.stream_id ?? accessChannelByName(h, user, params.stream!).id;
        if (params.op === "add") {
          await doMuteTopic(h, user, channelId, params.topic);
        } else {
          await doUnmuteTopic(h, user, channelId, params.topic);
        }
        return {};
      },
    );
}
