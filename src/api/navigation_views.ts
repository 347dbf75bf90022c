import type { Hearth } from "../context";
import { ApiRoutes } from "../http/route";
import { decodePathTail } from "../http/path";
import { param } from "../http/params";
import { doAddNavigationView, doRemoveNavigationView, doUpdateNavigationView } from "../actions/navigation_views";
import { getNavigationViews } from "../views/navigation_views";

/** Fragments may contain slashes (`narrow/is/starred`), so the path is a wildcard. */
const fragmentOf = (path: Record<string, string>) => decodePathTail(path["*"] ?? "", "navigation view fragment");

export function navigationViewRoutes(h: Hearth) {
  return new ApiRoutes(h)
    .get("/navigation_views", {}, ({ user }) => ({ navigation_views: getNavigationViews(h, user.id) }))
    .post(
      "/navigation_views",
      { params: { fragment: param.string(), is_pinned: param.bool(), name: param.string().optional() } },
      async ({ user, params }) => {
        await doAddNavigationView(h, user, params.fragment, params.is_pinned, params.name);
        return {};
      },
    )
    .patch("/navigation_views/*", { params: { is_pinned: param.bool().optional(), name: param.string().optional() } }, async ({ user, params, path }) => {
      await doUpdateNavigationView(h, user, fragmentOf(path), params);
      return {};
    })
    .delete("/navigation_views/*", {}, async ({ user, path }) => {
      await doRemoveNavigationView(h, user, fragmentOf(path));
      return {};
    });
}
