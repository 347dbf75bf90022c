import { Type as t } from "@sinclair/typebox";
import type { Hearth } from "../context";
import { ApiRoutes } from "../http/route";
import { param } from "../http/params";
import { pathId } from "../http/path";
import { doAddPlayground, doRemovePlayground } from "../actions/playgrounds";
import { doAddLinkifier, doRemoveLinkifier, doReorderLinkifiers, doUpdateLinkifier } from "../actions/linkifiers";
import { getLinkifiers } from "../views/linkifiers";

const linkifierParams = {
  pattern: param.string(),
  url_template: param.string(),
  example_input: param.string().optional(),
  reverse_template: param.string().optional(),
  alternative_url_templates: param.json(t.Array(t.String())).optional(),
};

export function linkifierRoutes(h: Hearth) {
  return new ApiRoutes(h)
    .get("/realm/linkifiers", {}, () => ({ linkifiers: getLinkifiers(h) }))
    .patch("/realm/linkifiers", { params: { ordered_linkifier_ids: param.json(t.Array(t.Integer())) } }, async ({ user, params }) => {
      await doReorderLinkifiers(h, user, params.ordered_linkifier_ids);
      return {};
    })
    .post("/realm/filters", { params: linkifierParams }, async ({ user, params }) => ({ id: await doAddLinkifier(h, user, params) }))
    .patch("/realm/filters/:filter_id", { params: linkifierParams }, async ({ user, params, path }) => {
      await doUpdateLinkifier(h, user, pathId(path.filter_id, "linkifier ID"), params);
      return {};
    })
    .delete("/realm/filters/:filter_id", {}, async ({ user, path }) => {
      await doRemoveLinkifier(h, user, pathId(path.filter_id, "linkifier ID"));
      return {};
    })
    // Code playgrounds: like linkifiers, organization-wide links built from templates.
    .post(
      "/realm/playgrounds",
      { params: { name: param.string(), pygments_language: param.string(), url_template: param.string() } },
      async ({ user, params }) => ({ id: await doAddPlayground(h, user, params) }),
    )
    .delete("/realm/playgrounds/:playground_id", {}, async ({ user, path }) => {
      await doRemovePlayground(h, user, pathId(path.playground_id, "playground ID"));
      return {};
    });
}
