import { Type as t } from "@sinclair/typebox";
import { clientAddress } from "../http/client_address";
import { Elysia } from "elysia";
import type { Server } from "bun";
import type { Hearth, InviteRecord } from "../context";
import { ApiError } from "../errors";
import { ApiRoutes } from "../http/route";
import { readBodyUpTo } from "../http/wire";
import { param } from "../http/params";
import { pathId } from "../http/path";
import { checkCreateInviteLink, checkJoinWithInvite, checkRevokeInviteLink, DEFAULT_INVITE_AS } from "../actions/invites";
import { checkInviteByEmail, checkResendEmailInvite, checkRevokeEmailInvite } from "../actions/email_invites";
import { defaultChannelGroupsView } from "../views/default_channel_groups";
import { accessLiveInvite, InviteLinkError, offersDefaultChannelGroups } from "../access/invites";
import { realmName } from "../views/realm";
import { escapeHtml } from "../lib/text";
import { formPage } from "../http/pages";
import { fromThisSite, startSessionCookies } from "./sessions";
import { invitesFor } from "../views/invites";

export function inviteRoutes(h: Hearth) {
  return new ApiRoutes(h)
    .get("/invites", {}, ({ user }) => ({ invites: invitesFor(h, user) }))
    .post(
      "/invites",
      {
        params: {
          invitee_emails: param.string(),
          invite_expires_in_minutes: param.json(t.Union([t.Integer(), t.Null()])).optional().nullMeansNull(),
          invite_as: param.int().default(DEFAULT_INVITE_AS),
          // Required, as in Zulip; an empty list subscribes the new user to nothing.
          stream_ids: param.json(t.Array(t.Integer())),
          group_ids: param.json(t.Array(t.Integer())).default([]),
          include_realm_default_subscriptions: param.bool().default(false),
          notify_referrer_on_join: param.bool().default(true),
          welcome_message_custom_text: param.jsonOrString(t.Union([t.String(), t.Null()])).optional(),
        },
      },
      async ({ user, params }) => {
        await checkInviteByEmail(h, user, params);
        return {};
      },
    )
    .delete("/invites/:invite_id", {}, async ({ user, path }) => {
      await checkRevokeEmailInvite(h, user, pathId(path.invite_id, "invitation ID"));
      return {};
    })
    .post("/invites/:invite_id/resend", {}, async ({ user, path }) => {
      await checkResendEmailInvite(h, user, pathId(path.invite_id, "invitation ID"));
      return {};
    })
    .post(
      "/invites/multiuse",
      {
        params: {
          invite_expires_in_minutes: param.json(t.Union([t.Integer(), t.Null()])).optional().nullMeansNull(),
          invite_as: param.int().default(DEFAULT_INVITE_AS),
          stream_ids: param.json(t.Array(t.Integer())).default([]),
          group_ids: param.json(t.Array(t.Integer())).default([]),
          include_realm_default_subscriptions: param.bool().default(false),
          welcome_message_custom_text: param.jsonOrString(t.Union([t.String(), t.Null()])).optional(),
        },
      },
      async ({ user, params }) => ({ invite_link: await checkCreateInviteLink(h, user, params) }),
    )
    .delete("/invites/multiuse/:invite_id", {}, async ({ user, path }) => {
      await checkRevokeInviteLink(h, user, pathId(path.invite_id, "invitation ID"));
      return {};
    });
}

/** Far above an email, a name and a password. */
const MAX_FORM_CHARS = 16 * 1024;

/** A small self-contained page: the join form and its outcomes, without scripts. */
const page = (title: string, body: string, status = 200): Response => formPage(title, "Hearth", body, status);

interface JoinValues {
  email?: string;
  full_name?: string;
  default_channel_groups?: readonly string[];
}

/**
 * The form; `invite` decides whether the default channel groups are offered (as
 * Zulip's registration form offers them; not to a guest, whom the API shows none).
 */
function joinForm(h: Hearth, invite: InviteRecord, values: JoinValues, error?: string): string {
  const groups = offersDefaultChannelGroups(invite) ? defaultChannelGroupsView(h) : [];
  const picked = new Set(values.default_channel_groups ?? []);
  const groupChoices =
    groups.length === 0
      ? ""
      : `<fieldset><legend>Channels to join</legend>${groups
          .map(
            (group, i) =>
              `<label><input type="checkbox" name="default_stream_group" id="group${i}" value="${escapeHtml(group.name)}"${picked.has(group.name) ? " checked" : ""}> ${escapeHtml(group.name)}${group.description ? ` — ${escapeHtml(group.description)}` : ""}</label>`,
          )
          .join("\n")}</fieldset>`;
  return `<p>You have been invited to join ${escapeHtml(realmName(h) ?? "this organization")}.</p>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ""}
<form method="post">
${
  invite.email !== undefined
    ? `<p>Your account's email address: <b id="email">${escapeHtml(invite.email)}</b> (the invitation was sent there).</p>`
    : `<label for="email">Email</label><input id="email" name="email" type="email" required value="${escapeHtml(values.email ?? "")}">`
}
<label for="full_name">Full name</label><input id="full_name" name="full_name" required value="${escapeHtml(values.full_name ?? "")}">
<label for="password">Password</label><input id="password" name="password" type="password" required autocomplete="new-password">
${groupChoices}
<button type="submit">Create account</button>
</form>`;
}

/** A refusal before the form applies (too many failed attempts from this address). */
function refusal(error: ApiError): Response {
  return page("Join", `<p class="error" role="alert">${escapeHtml(error.message)}</p>`, error.httpStatus);
}

/**
 * `/join/<key>/`: where a reusable invitation link leads (Zulip's registration page for
 * it). GET shows the form; POST (a browser's urlencoded form) creates the account and
 * signs this browser in to the web client; any Zulip client signs in with that email
 * and password.
 */
export function joinPageRoutes(h: Hearth) {
  // Guessing keys (either method tells a live key from a dead one) counts against the
  // client's budget of failed authentications.
  const ipKeyOf = (request: Request, server: Server<unknown> | null) => `ip:${clientAddress(h, request, server)}`;
  const deadLink = (error: InviteLinkError, ipKey: string) => {
    if (error.unknownKey) h.limits.loginByIp.recordFailure(ipKey);
    return page("Invitation link", `<p class="error">${escapeHtml(error.message)}</p>`, 404);
  };
  const show = ({ params, request, server }: { params: { key: string }; request: Request; server: Server<unknown> | null }) => {
    const ipKey = ipKeyOf(request, server);
    try {
      h.limits.loginByIp.assertAllowed(ipKey);
      return page("Join", joinForm(h, accessLiveInvite(h, params.key), {}));
    } catch (error) {
      if (error instanceof InviteLinkError) return deadLink(error, ipKey);
      if (error instanceof ApiError) return refusal(error);
      throw error;
    }
  };
  const submit = async ({ params, request, server }: { params: { key: string }; request: Request; server: Server<unknown> | null }) => {
    const ipKey = ipKeyOf(request, server);
    try {
      h.limits.loginByIp.assertAllowed(ipKey);
    } catch (error) {
      if (error instanceof ApiError) return refusal(error);
      throw error;
    }
    let invite: InviteRecord;
    try {
      invite = accessLiveInvite(h, params.key);
    } catch (error) {
      if (error instanceof InviteLinkError) return deadLink(error, ipKey);
      throw error;
    }
    let text: string;
    try {
      // The page needs no authentication: a body is read only up to the form's size,
      // one that declares more refused before it is read.
      text = new TextDecoder().decode(await readBodyUpTo(request, MAX_FORM_CHARS));
    } catch (error) {
      if (error instanceof ApiError && error.httpStatus === 413) return page("Join", joinForm(h, invite, {}, "The form is too large."), 413);
      throw error;
    }
    const form = new URLSearchParams(text);
    const values = {
      email: form.get("email") ?? "",
      full_name: form.get("full_name") ?? "",
      password: form.get("password") ?? "",
      // Zulip's field name (a guest's form offers none, and the action takes none from one).
      default_channel_groups: form.getAll("default_stream_group"),
    };
    try {
      const user = await checkJoinWithInvite(h, params.key, values);
      // Signed in here, as Zulip's registration does, unless the form came from another
      // site (which would sign this browser into an account someone else chose).
      const signedIn = fromThisSite(h, request);
      const welcome = page(
        "Welcome!",
        `<p>Your account ${escapeHtml(user.email)} is ready.</p>
${signedIn ? `<p><a class="button" href="/">Start chatting</a></p>` : `<p><a class="button" href="/login">Sign in</a></p>`}
<p>Zulip's apps (mobile, desktop or terminal) work too: the server URL is <code>${escapeHtml(h.realmUrl())}</code>, with your email and password.</p>`,
      );
      if (signedIn) for (const c of await startSessionCookies(h, user, request, server)) welcome.headers.append("set-cookie", c);
      return welcome;
    } catch (error) {
      if (error instanceof InviteLinkError) return deadLink(error, ipKey);
      if (error instanceof ApiError) return page("Join", joinForm(h, invite, values, error.message), error.httpStatus);
      throw error;
    }
  };
  // Zulip's links end in a slash; both forms lead to the same page. Email invitations
  // link to /accept/<key>/, the same page with the address fixed.
  return new Elysia({ name: "join-page" })
    .get("/join/:key", show)
    .get("/join/:key/", show)
    .post("/join/:key", submit, { parse: "none" })
    .post("/join/:key/", submit, { parse: "none" })
    .get("/accept/:key", show)
    .get("/accept/:key/", show)
    .post("/accept/:key", submit, { parse: "none" })
    .post("/accept/:key/", submit, { parse: "none" });
}
