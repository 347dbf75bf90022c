import { Type as t } from "@sinclair/typebox";
import type { Hearth } from "../context";
import { badRequest } from "../errors";
import { ApiRoutes } from "../http/route";
import { param } from "../http/params";
import { getAlertWords, getSavedSnippets } from "../store/personal";
import {
  checkMuteUser,
  doAddAlertWords,
  doCreateSavedSnippet,
  doDeleteSavedSnippet,
  doEditSavedSnippet,
  doRemoveAlertWords,
} from "../actions/personal";
import { checkUpdateStatus } from "../actions/status";
import { accessUser } from "../actions/users";
import { userStatusView } from "../views/status";
import "../views/personal";

const alertWordsParam = param.json(t.Array(t.String({ maxLength: 100 })));

function pathId(raw: string, what: string): number {
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw badRequest(`Invalid ${what}`);
  return Number(raw);
}

/** Alert words, muted users and saved snippets: lists each user keeps for themself. */
export function personalRoutes(h: Hearth) {
  return new ApiRoutes(h)
    .get("/users/me/alert_words", {}, ({ user }) => ({ alert_words: getAlertWords(h.store, user.id) }))
    .post("/users/me/alert_words", { params: { alert_words: alertWordsParam } }, async ({ user, params }) => ({
      alert_words: await doAddAlertWords(h, user, params.alert_words),
    }))
    .delete("/users/me/alert_words", { params: { alert_words: alertWordsParam } }, async ({ user, params }) => ({
      alert_words: await doRemoveAlertWords(h, user, params.alert_words),
    }))
    .post("/users/me/muted_users/:muted_user_id", {}, async ({ user, path }) => {
      await checkMuteUser(h, user, pathId(path.muted_user_id, "user ID"), true);
      return {};
    })
    .delete("/users/me/muted_users/:muted_user_id", {}, async ({ user, path }) => {
      await checkMuteUser(h, user, pathId(path.muted_user_id, "user ID"), false);
      return {};
    })
    .get("/saved_snippets", {}, ({ user }) => ({ saved_snippets: getSavedSnippets(h.store, user.id) }))
    .post("/saved_snippets", { params: { title: param.string(), content: param.string() } }, async ({ user, params }) => ({
      saved_snippet_id: (await doCreateSavedSnippet(h, user, params.title, params.content)).id,
    }))
    .patch(
      "/saved_snippets/:saved_snippet_id",
      { params: { title: param.string().optional(), content: param.string().optional() } },
      async ({ user, params, path }) => {
        await doEditSavedSnippet(h, user, pathId(path.saved_snippet_id, "saved snippet ID"), params);
        return {};
      },
    )
    .delete("/saved_snippets/:saved_snippet_id", {}, async ({ user, path }) => {
      await doDeleteSavedSnippet(h, user, pathId(path.saved_snippet_id, "saved snippet ID"));
      return {};
    });
}

/** User status: text and emoji everyone sees (`POST /users/me/status`, `GET /users/{id}/status`). */
export function statusRoutes(h: Hearth) {
  return new ApiRoutes(h)
    .post(
      "/users/me/status",
      {
        params: {
          status_text: param.string().optional(),
          away: param.bool().optional(),
          emoji_name: param.string().optional(),
          emoji_code: param.string().optional(),
          reaction_type: param.string().optional(),
        },
      },
      async ({ user, params }) => {
        await checkUpdateStatus(h, user, params);
        return {};
      },
    )
    // `:user_id` like the other /users/{id}/… routes (the router needs one name per position).
    .get("/users/:user_id/status", {}, ({ path }) => {
      const target = accessUser(h, pathId(path.user_id, "user ID"));
      return { status: userStatusView(h, target) };
    });
}
