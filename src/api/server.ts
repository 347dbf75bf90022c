import type { Hearth } from "../context";
import { ApiError, realmDeactivated, userDeactivated } from "../errors";
import { ApiRoutes } from "../http/route";
import { param } from "../http/params";
import { verifyPassword } from "../auth/credentials";
import { findUserByLoginEmail } from "../auth/basic";
import { doRecordFirstLogin } from "../actions/users";
import { requireRealm, serverSettings } from "../views/realm";

const authenticationFailed = () =>
  new ApiError("Your username or password is incorrect", "AUTHENTICATION_FAILED", 401);

export function serverRoutes(h: Hearth) {
  return new ApiRoutes(h)
    .get("/server_settings", { auth: "optional" }, () => serverSettings(h))
    .post(
      "/fetch_api_key",
      { auth: "none", params: { username: param.string(), password: param.string() } },
      async ({ params, ip }) => {
        const userKey = `user:${params.username.trim().toLowerCase()}`;
        h.limits.loginByUser.assertAllowed(userKey);
        h.limits.loginByIp.assertAllowed(`ip:${ip}`);
        const user = findUserByLoginEmail(h, params.username);
        const ok = await verifyPassword(params.password, user?.password_hash ?? null);
        if (!user || !ok || user.is_bot) {
          h.limits.loginByUser.recordFailure(userKey);
          h.limits.loginByIp.recordFailure(`ip:${ip}`);
          throw authenticationFailed();
        }
        if (requireRealm(h).deactivated) throw realmDeactivated();
        if (!user.is_active) throw userDeactivated();
        await doRecordFirstLogin(h, user);
        return { api_key: user.api_key, email: user.email, user_id: user.id };
      },
    );
}
