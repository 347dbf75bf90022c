import type { Hearth } from "../context";
import { ApiRoutes } from "../http/route";
import { param } from "../http/params";
import { checkPasswordLogin } from "../auth/login";
import { doRecordFirstLogin } from "../actions/users";
import { serverSettings } from "../views/realm";

export function serverRoutes(h: Hearth) {
  return new ApiRoutes(h)
    // Credentials are not even read, as in Zulip (its view has no authentication
    // decorator): a bot whose key was revoked, or a deactivated account, still learns
    // the server's settings; the Python bindings fetch them in their constructor.
    .get("/server_settings", { auth: "none" }, () => serverSettings(h))
    .post(
      "/fetch_api_key",
      { auth: "none", params: { username: param.string(), password: param.string() } },
      async ({ params, ip, request }) => {
        const user = await checkPasswordLogin(h, params.username, params.password, ip, request.headers.get("user-agent") ?? "");
        await doRecordFirstLogin(h, user);
        return { api_key: user.api_key, email: user.email, user_id: user.id };
      },
    );
}
