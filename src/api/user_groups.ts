import type { Hearth } from "../context";
import { ApiRoutes } from "../http/route";
import { param } from "../http/params";
import { listUserGroups } from "../views/user_groups";

export function userGroupsRoutes(h: Hearth) {
  return new ApiRoutes(h).get(
    "/user_groups",
    { params: { include_deactivated_groups: param.bool().default(false) } },
    ({ params }) => ({ user_groups: listUserGroups(h, { includeDeactivated: params.include_deactivated_groups }) }),
  );
}
