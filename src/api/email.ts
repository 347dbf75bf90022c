import type { Hearth } from "../context";
import { ApiRoutes } from "../http/route";
import { param } from "../http/params";
import { doSendTestEmail, emailStatus } from "../actions/email";

/**
 * Outgoing mail for the administration page (administrators only): whether an SMTP
 * server is configured, the outbox's length and last failure, and a test email.
 */
export function emailRoutes(h: Hearth) {
  return new ApiRoutes(h)
    .get("/hearth/email", {}, ({ user }) => emailStatus(h, user))
    .post(
      "/hearth/email/test",
      // `to` defaults to the caller's own address; `queue` sends it through the outbox.
      { params: { to: param.string().optional(), queue: param.bool().default(false) } },
      async ({ user, params }) => await doSendTestEmail(h, user, params.to ?? user.email, params.queue),
    );
}
