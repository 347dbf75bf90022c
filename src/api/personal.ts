import type { Hearth } from "../context";
import { pathId } from "../http/path";
import { ApiRoutes } from "../http/route";
import { param } from "../http/params";
import { Type as t } from "@sinclair/typebox";
import { doAddAlertWords, doRemoveAlertWords } from "../actions/alert_words";
import { doMuteUser, doUnmuteUser } from "../actions/muted_users";
import { doCreateSavedSnippet, doDeleteSavedSnippet, doEditSavedSnippet } from "../actions/saved_snippets";
import { doMarkOnboardingStepSeen } from "../actions/onboarding_steps";
import { checkUpdateOtherUserStatus, checkUpdateUserStatus } from "../actions/user_status";
import { doPutBotStorage, doRemoveBotStorage } from "../actions/bot_storage";
import { getBotStorage, getUserAlertWords, getUserSavedSnippets } from "../views/personal";
import { getUserStatusView } from "../views/user_status";
import { accessUser } from "../access/users";

/** The caller's own settings that only they see: alert words, muted users, saved snippets. */
export function personalRoutes(h: Hearth) {
  const words = { alert_words: param.json(t.Array(t.String())) };
  return new ApiRoutes(h)
    .get("/users/me/alert_words", {}, ({ user }) => ({ alert_words: getUserAlertWords(h, user.id) }))
    .post("/users/me/alert_words", { params: words }, async ({ user, params }) => ({
      alert_words: await doAddAlertWords(h, user, params.alert_words),
    }))
    .delete("/users/me/alert_words", { params: words }, async ({ user, params }) => ({
      alert_words: await doRemoveAlertWords(h, user, params.alert_words),
    }))
    .post("/users/me/muted_users/:muted_user_id", {}, async ({ user, path }) => {
      await doMuteUser(h, user, pathId(path.muted_user_id, "user ID"));
      return {};
    })
    .delete("/users/me/muted_users/:muted_user_id", {}, async ({ user, path }) => {
      await doUnmuteUser(h, user, pathId(path.muted_user_id, "user ID"));
      return {};
    })
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
        await checkUpdateUserStatus(h, user, params);
        return {};
      },
    )
    // FL 407: an administrator sets another user's status (administrator bots too, FL 473).
    .post(
      "/users/:user_id/status",
      {
        params: {
          status_text: param.string().optional(),
          emoji_name: param.string().optional(),
          emoji_code: param.string().optional(),
          reaction_type: param.string().optional(),
        },
      },
      async ({ user, params, path }) => {
        await checkUpdateOtherUserStatus(h, user, pathId(path.user_id, "user ID"), params);
        return {};
      },
    )
    .get("/users/:user_id/status", {}, ({ path }) => {
      const target = accessUser(h, pathId(path.user_id, "user ID"), { allowDeactivated: true });
      return { status: getUserStatusView(h, target) };
    })
    // Key-value storage for bots (zulip_bots' StateHandler), per account.
    .get("/bot_storage", { params: { keys: param.json(t.Array(t.String())).optional() } }, ({ user, params }) => ({
      storage: getBotStorage(h, user, params.keys),
    }))
    .put("/bot_storage", { params: { storage: param.json(t.Record(t.String(), t.String())) } }, async ({ user, params }) => {
      await doPutBotStorage(h, user, params.storage);
      return {};
    })
    .delete("/bot_storage", { params: { keys: param.json(t.Array(t.String())).optional() } }, async ({ user, params }) => {
      await doRemoveBotStorage(h, user, params.keys);
      return {};
    })
    .post("/users/me/onboarding_steps", { params: { onboarding_step: param.string() } }, async ({ user, params }) => {
      await doMarkOnboardingStepSeen(h, user, params.onboarding_step);
      return {};
    })
    .get("/saved_snippets", {}, ({ user }) => ({ saved_snippets: getUserSavedSnippets(h, user.id) }))
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
