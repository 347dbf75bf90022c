import { Type as t } from "@sinclair/typebox";
import type { Hearth } from "../context";
import { ApiRoutes } from "../http/route";
import { param } from "../http/params";
import { pathId } from "../http/path";
import { doCreateDrafts, doDeleteDraft, doEditDraft } from "../actions/drafts";
import { getDrafts } from "../views/drafts";

const DraftInput = t.Object({
  type: t.Union([t.Literal(""), t.Literal("stream"), t.Literal("private")]),
  to: t.Array(t.Integer()),
  topic: t.String(),
  content: t.String(),
  timestamp: t.Optional(t.Number()),
});

export function draftRoutes(h: Hearth) {
  return new ApiRoutes(h)
    .get("/drafts", {}, ({ user }) => {
      const drafts = getDrafts(h, user.id);
      return { count: drafts.length, drafts };
    })
    .post("/drafts", { params: { drafts: param.json(t.Array(DraftInput)).default([]) } }, async ({ user, params }) => ({
      ids: await doCreateDrafts(h, user, params.drafts),
    }))
    .patch("/drafts/:draft_id", { params: { draft: param.json(DraftInput) } }, async ({ user, params, path }) => {
      await doEditDraft(h, user, pathId(path.draft_id, "draft ID"), params.draft);
      return {};
    })
    .delete("/drafts/:draft_id", {}, async ({ user, path }) => {
      await doDeleteDraft(h, user, pathId(path.draft_id, "draft ID"));
      return {};
    });
}
