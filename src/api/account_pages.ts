import { Elysia } from "elysia";
import type { Server } from "bun";
import type { Hearth } from "../context";
import { ApiError } from "../errors";
import { clientAddress } from "../http/client_address";
import { readBodyUpTo } from "../http/wire";
import { formPage } from "../http/pages";
import { escapeHtml } from "../lib/text";
import { FailureLimiter } from "../lib/ratelimit";
import { AccountLinkError } from "../actions/account_tokens";
import { accessEmailChangeToken, accessPasswordResetToken, doConfirmEmailChange, doRequestPasswordReset, doResetPassword } from "../actions/account_emails";
import { accessUnsubscribeToken, doUnsubscribeMissedMessages } from "../actions/email_unsubscribe";
import { realmName } from "../views/realm";

/**
 * The pages behind the links of account emails, server-rendered without scripts:
 * - `/accounts/password/reset/`: asks for an address; the answer is the same whether
 *   an account has it or not (no account enumeration), and requests are limited per
 *   address (Zulip's 2 an hour: more are silently not sent) and per client address
 *   (30 an hour, then refused);
 * - `/accounts/password/reset/<token>/`: sets a new password;
 * - `/accounts/confirm_new_email/<token>/`: confirms a new address (PATCH /settings `email`);
 * - `/accounts/unsubscribe/missed_messages/<token>`: turns missed-message emails off.
 * Links that change something do it on POST, from a button on the page their GET
 * shows (as Zulip's confirmation pages), so that a mail scanner that follows links
 * changes nothing; the unsubscribe POST is also RFC 8058's one-click unsubscribe.
 */

/** Far above an address or two passwords. */
const MAX_FORM_BYTES = 16 * 1024;

const page = (h: Hearth, title: string, body: string, status = 200): Response => formPage(title, realmName(h) ?? "Hearth", body, status);

const errorLine = (message?: string) => (message ? `<p class="error" role="alert">${escapeHtml(message)}</p>` : "");

type Ctx = { params: Record<string, string>; request: Request; server: Server<unknown> | null };

async function readForm(request: Request): Promise<URLSearchParams> {
  return new URLSearchParams(new TextDecoder().decode(await readBodyUpTo(request, MAX_FORM_BYTES)));
}

/**
 * Routes with and without the trailing slash Zulip's links end in. An API error no
 * handler turned into its own page (a form over MAX_FORM_BYTES) becomes one here: the
 * app's error handler does not reach a plugin's routes, so it would otherwise be a 500.
 */
function both(h: Hearth, app: Elysia<any, any, any, any, any, any, any>, method: "get" | "post", path: string, handler: (ctx: Ctx) => Response | Promise<Response>) {
  const guarded = async (ctx: Ctx) => {
    try {
      return await handler(ctx);
    } catch (error) {
      if (error instanceof ApiError) return page(h, "Something went wrong", errorLine(error.message), error.httpStatus);
      throw error;
    }
  };
  for (const p of [path, `${path}/`]) {
    if (method === "get") app.get(p, guarded as never);
    else app.post(p, guarded as never, { parse: "none" });
  }
}

const resetRequestForm = (error?: string) => `${errorLine(error)}
<p>Enter the email address of your account. If it has one here, a link to set a new password will be sent to it.</p>
<form method="post" action="/accounts/password/reset/">
<label for="email">Email</label><input id="email" name="email" type="email" required autocomplete="email">
<button type="submit">Send the link</button></form>`;

const newPasswordForm = (error?: string) => `${errorLine(error)}
<form method="post">
<label for="new_password1">New password</label><input id="new_password1" name="new_password1" type="password" required autocomplete="new-password">
<label for="new_password2">New password again</label><input id="new_password2" name="new_password2" type="password" required autocomplete="new-password">
<button type="submit">Set the password</button></form>`;

const confirmButton = (what: string) => `<form method="post"><button type="submit">${escapeHtml(what)}</button></form>`;

export function accountPageRoutes(h: Hearth) {
  const resetsByAddress = new FailureLimiter(2, 3600);
  const resetsByIp = new FailureLimiter(30, 3600);
  const deadLink = (error: AccountLinkError, title: string) => page(h, title, errorLine(error.message), 404);
  const app = new Elysia({ name: "account-pages" });

  both(h, app, "get", "/accounts/password/reset", () => page(h, "Reset your password", resetRequestForm()));
  both(h, app, "post", "/accounts/password/reset", async ({ request, server }) => {
    const ipKey = `ip:${clientAddress(h, request, server)}`;
    try {
      resetsByIp.assertAllowed(ipKey);
    } catch (error) {
      if (error instanceof ApiError) return page(h, "Reset your password", errorLine("Too many requests from your network. Try again later."), 429);
      throw error;
    }
    resetsByIp.recordFailure(ipKey);
    const email = (await readForm(request)).get("email")?.trim() ?? "";
    if (email === "") return page(h, "Reset your password", resetRequestForm("Enter your email address."), 400);
    const addressKey = `email:${email.toLowerCase()}`;
    let allowed = true;
    try {
      resetsByAddress.assertAllowed(addressKey);
    } catch {
      // Said to nobody: the answer must not tell an address that has an account.
      allowed = false;
    }
    if (allowed) {
      resetsByAddress.recordFailure(addressKey);
      await doRequestPasswordReset(h, email);
    }
    return page(h, "Check your email", `<p>If an account exists for ${escapeHtml(email)}, an email with a link to set a new password was sent to it. The link works for an hour.</p>`);
  });

  both(h, app, "get", "/accounts/password/reset/:token", ({ params }) => {
    try {
      const user = accessPasswordResetToken(h, params.token);
      return page(h, "Set a new password", `<p>For ${escapeHtml(user.email)}.</p>${newPasswordForm()}`);
    } catch (error) {
      if (error instanceof AccountLinkError) return deadLink(error, "Reset your password");
      throw error;
    }
  });
  both(h, app, "post", "/accounts/password/reset/:token", async ({ params, request }) => {
    const form = await readForm(request);
    const password = form.get("new_password1") ?? "";
    try {
      accessPasswordResetToken(h, params.token);
      if (password !== (form.get("new_password2") ?? "")) return page(h, "Set a new password", newPasswordForm("The two passwords differ."), 400);
      const user = await doResetPassword(h, params.token, password);
      return page(h, "Password changed", `<p>The password of ${escapeHtml(user.email)} is changed. Sign in with it from any Zulip client at <code>${escapeHtml(h.realmUrl())}</code>.</p>`);
    } catch (error) {
      if (error instanceof AccountLinkError) return deadLink(error, "Reset your password");
      if (error instanceof ApiError) return page(h, "Set a new password", newPasswordForm(error.message), error.httpStatus);
      throw error;
    }
  });

  both(h, app, "get", "/accounts/confirm_new_email/:token", ({ params }) => {
    try {
      const { newEmail } = accessEmailChangeToken(h, params.token);
      return page(h, "Confirm your new email address", `<p>Change the email address of your account to ${escapeHtml(newEmail)}?</p>${confirmButton("Confirm")}`);
    } catch (error) {
      if (error instanceof AccountLinkError) return deadLink(error, "Confirm your new email address");
      throw error;
    }
  });
  both(h, app, "post", "/accounts/confirm_new_email/:token", async ({ params }) => {
    try {
      const { oldEmail, newEmail } = await doConfirmEmailChange(h, params.token);
      return page(h, "Email address changed", `<p>The email address of your account changed from ${escapeHtml(oldEmail)} to ${escapeHtml(newEmail)}.</p>`);
    } catch (error) {
      if (error instanceof AccountLinkError) return deadLink(error, "Confirm your new email address");
      if (error instanceof ApiError) return page(h, "Confirm your new email address", errorLine(error.message), error.httpStatus);
      throw error;
    }
  });

  both(h, app, "get", "/accounts/unsubscribe/missed_messages/:token", ({ params }) => {
    try {
      const user = accessUnsubscribeToken(h, params.token);
      return page(h, "Unsubscribe", `<p>Stop emailing ${escapeHtml(user.email)} about messages received while away?</p>${confirmButton("Unsubscribe")}`);
    } catch (error) {
      if (error instanceof AccountLinkError) return deadLink(error, "Unsubscribe");
      throw error;
    }
  });
  both(h, app, "post", "/accounts/unsubscribe/missed_messages/:token", async ({ params }) => {
    try {
      const user = await doUnsubscribeMissedMessages(h, params.token);
      return page(h, "Unsubscribed", `<p>${escapeHtml(user.email)} gets no more emails about missed messages. You can turn them on again in your notification settings.</p>`);
    } catch (error) {
      if (error instanceof AccountLinkError) return deadLink(error, "Unsubscribe");
      throw error;
    }
  });
  return app;
}
